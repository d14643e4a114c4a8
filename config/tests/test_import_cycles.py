"""No module of the house imports itself in a circle, not even through an import inside a
function: such an import only postpones the circle to the first call that runs it, and
import-linter's layers do not see a circle within one layer.

The graph is read from every module's syntax tree, every import statement wherever it
stands. `from a import b` is an edge to the module a.b when there is one, else to a;
`import a.b` is an edge to a.b. A package's __init__ is not counted as imported by its
submodules (Python runs it first, but it cannot be half-run by one of them)."""
from __future__ import annotations

import ast
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SKIPPED = {"__pycache__", "node_modules", "static", "artifacts"}


def house_modules(root: Path = ROOT) -> dict[str, Path]:
    """Every Python module below the checkout, by its dotted name."""
    found = {}
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith(".") and d not in SKIPPED)
        for file in sorted(f for f in files if f.endswith(".py")):
            parts = (Path(folder) / file).relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            if name:
                found[name] = Path(folder) / file
    return found


def _nearest(name: str, modules: dict[str, Path]) -> str | None:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> dict[str, int]:
    """The house modules `name` imports, each with the line of its first import."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                       for alias in node.names]
        for target in targets:
            target = _nearest(target, modules)
            if target and target != name:
                found.setdefault(target, node.lineno)
    return found


def import_circles(modules: dict[str, Path]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(graph[target])))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        circles.append(sorted(group))
    return circles


def _described(circle: list[str], modules: dict[str, Path]) -> str:
    members = set(circle)
    edges = [f"{name}:{line} → {target}" for name in circle
             for target, line in imports_of(name, modules[name], modules).items() if target in members]
    return "; ".join(edges)


def test_no_module_imports_itself_in_a_circle():
    modules = house_modules()
    assert "payroll.records.services" in modules  # the scan sees the house
    circles = import_circles(modules)
    assert not circles, "import circles: " + " | ".join(_described(c, modules) for c in circles)


def test_the_scan_sees_a_circle_hidden_in_a_function(tmp_path):
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("")
    (tmp_path / "shop" / "orders.py").write_text("from shop.stock import reserve\n")
    (tmp_path / "shop" / "stock.py").write_text("def reserve():\n    from . import orders\n")
    (tmp_path / "shop" / "prices.py").write_text("import shop.orders\n")
    modules = house_modules(tmp_path)
    assert import_circles(modules) == [["shop.orders", "shop.stock"]]
