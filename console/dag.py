"""The run's task graph as a picture: nodes layered by dependency depth, edges as curves.
Pure layout, no queries: the run panel hands it the nodes."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext_lazy as _

from config.words import words_render
from workflows.blueprints import step_title
from workflows.step_status import step_status_shown

from .status import status_label


@dataclass
class DagNode:
    key: str
    goal: str
    tool: str
    status: str
    depends_on: list[str]
    run_when: str
    title: str = ""  # the step's short name in the reader's language (its key when the blueprint names it not)
    goal_words: Any = None  # the goal as words (config.words), when the node holds them
    x: int = 0
    y: int = 0

    @property
    def status_label(self) -> str:
        if self.run_when != "completed" and self.status == "pending":
            return str(_("only on failure"))
        return status_label(self.status)


@dataclass
class Dag:
    nodes: list[DagNode]
    edges: list[tuple[DagNode, DagNode]]
    width: int
    height: int
    box_w: int
    box_h: int

    @property
    def edge_paths(self) -> list[dict[str, Any]]:
        out = []
        for a, b in self.edges:
            x1, y1 = a.x + self.box_w, a.y + self.box_h // 2
            x2, y2 = b.x, b.y + self.box_h // 2
            mid = (x1 + x2) // 2
            out.append({"d": f"M{x1},{y1} C{mid},{y1} {mid},{y2} {x2},{y2}", "from": a.key, "to": b.key,
                        "compensation": b.run_when != "completed"})
        return out


def dag_layout(nodes: list[Any], *, blueprint: str = "", run_status: str = "", box_w: int = 128, box_h: int = 42,
               gap_x: int = 30, gap_y: int = 16) -> Dag:
    """Layer nodes by dependency depth (column = longest path from a root), stack each layer.
    `blueprint` names the steps (their titles, in the reader's language); `run_status` says
    which never-started steps read as cancelled or skipped (workflows.step_status.step_status_shown)."""
    by_key = {n.key: DagNode(key=n.key, goal=n.goal, tool=n.tool, status=step_status_shown(run_status, n.status),
                             depends_on=list(n.depends_on),
                             run_when=n.run_when, title=words_render(step_title(blueprint, n.key)),
                             goal_words=getattr(n, "goal_words", None)) for n in nodes}
    depth: dict[str, int] = {}

    def depth_of(key: str, seen: frozenset[str] = frozenset()) -> int:
        if key in depth:
            return depth[key]
        deps = [d for d in by_key[key].depends_on if d in by_key and d not in seen]
        depth[key] = 0 if not deps else 1 + max(depth_of(d, seen | {key}) for d in deps)
        return depth[key]

    layers: dict[int, list[DagNode]] = {}
    for key in by_key:
        layers.setdefault(depth_of(key), []).append(by_key[key])
    tallest = max((len(v) for v in layers.values()), default=1)
    height = tallest * box_h + (tallest - 1) * gap_y + 8
    for col, layer in sorted(layers.items()):
        total = len(layer) * box_h + (len(layer) - 1) * gap_y
        top = (height - total) // 2
        for i, node in enumerate(layer):
            node.x = 4 + col * (box_w + gap_x)
            node.y = top + i * (box_h + gap_y)
    width = 8 + len(layers) * box_w + max(len(layers) - 1, 0) * gap_x
    edges = [(by_key[d], n) for n in by_key.values() for d in n.depends_on if d in by_key]
    return Dag(nodes=list(by_key.values()), edges=edges, width=width, height=height, box_w=box_w, box_h=box_h)
