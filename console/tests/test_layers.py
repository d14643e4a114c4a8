"""The generic apps know no domain: they never name a tool or a node key of one.
(Imports are checked by the import-linter contract in .importlinter; this checks names.)"""
import ast
import re
from pathlib import Path

from workflows.blueprints import BLUEPRINTS
from workflows.tools import TOOLS

ROOT = Path(__file__).resolve().parents[2]
GENERIC = ["workflows", "approvals", "timeline", "memory", "console/metrics.py", "llm", "idempotency"]


def _generic_sources():
    for place in GENERIC:
        path = ROOT / place
        files = [path] if path.is_file() else [p for p in path.rglob("*.py") if "tests" not in p.parts
                                               and "migrations" not in p.parts]
        yield from files


def test_generic_apps_never_name_a_domain_tool_or_node():
    domain_tools = {name for name, tool in TOOLS.items() if tool.fn.__module__.split(".")[0] not in {"workflows"}}
    node_keys = {f'"{n["key"]}"' for spec in BLUEPRINTS.values() if isinstance(spec["nodes"], list)
                 for n in spec["nodes"]}
    assert domain_tools and node_keys
    found = []
    for path in _generic_sources():
        text = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(ROOT)}: {name}" for name in domain_tools if name in text]
        found += [f"{path.relative_to(ROOT)}: {key}" for key in node_keys if key in text]
    assert found == []


# The generic apps speak no domain. Every string literal outside docstrings
# (what a person might read, and every name a generic app could use to find a domain)
# is searched for a domain's words. A node's lease or a record's reservation may still
# be called a claim, so "claim" is not among them.
SPEAKING = ["agents", "approvals", "workflows", "timeline", "console"]
# Still to move out (to the conversation contract; the same modules as the ignored
# imports in .importlinter): a ratchet, this list only shrinks.
STILL_SPEAKING: set[str] = set()
DOMAIN_WORDS = re.compile(r"(?i:\b(payroll|expenses?|invoices?|candidates?|headcount)\b)|\bTANs?\b|薪资|工资|报销")


def _string_literals(tree: ast.AST):
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.lineno, node.value


def test_generic_apps_contain_no_domain_word():
    found, speaking = [], set()
    for place in SPEAKING:
        for path in sorted((ROOT / place).rglob("*.py")):
            if "tests" in path.parts or "migrations" in path.parts:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for line, text in _string_literals(tree):
                hit = DOMAIN_WORDS.search(text)
                if hit:
                    speaking.add(str(path.relative_to(ROOT)))
                    if str(path.relative_to(ROOT)) not in STILL_SPEAKING:
                        found.append(f"{path.relative_to(ROOT)}:{line}: {hit.group(0)!r} in {text[:70]!r}")
    assert found == [], "\n".join(found)
    assert STILL_SPEAKING <= speaking, f"no longer speaking a domain, take them off the list: {STILL_SPEAKING - speaking}"


def test_the_word_check_sees_a_domain_word_and_passes_a_lease_claim():
    tree = ast.parse('"""The payroll docstring."""\nX = "Done: the payroll group"\nY = "a claim on a lease"\n')
    hits = [text for _, text in _string_literals(tree) if DOMAIN_WORDS.search(text)]
    assert hits == ["Done: the payroll group"]
