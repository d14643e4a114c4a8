"""The generic apps know no domain: they never name a tool or a node key of one.
(Imports are checked by the import-linter contract in .importlinter; this checks names.)"""
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
