"""Blueprint titles and step goals are data (the blueprints' JSON, copied onto each run's
nodes); a reader in Chinese sees the blueprint's own "title_zh" / "goal_zh" beside them. The
stored text stays as it was written; only what a page shows changes with the language."""
from __future__ import annotations

from django.utils import translation

from workflows.blueprints import BLUEPRINTS


def _chinese() -> bool:
    return (translation.get_language() or "").lower().startswith("zh")


def goal_shown(goal: str) -> str:
    """A step's goal in the page's language (a goal no blueprint knows, e.g. a replanned
    step's, reads as written)."""
    if not goal or not _chinese():
        return goal
    for spec in BLUEPRINTS.values():
        for node in spec["nodes"] if isinstance(spec["nodes"], list) else ():
            if node["goal"] == goal and node.get("goal_zh"):
                return node["goal_zh"]
    return goal


def blueprint_title(name: str) -> str:
    """"payroll_group_setup" → "Payroll group setup" (or its title_zh)."""
    spec = BLUEPRINTS.get(name)
    if spec is None:
        return (name or "").replace("_", " ").capitalize()
    return spec.get("title_zh") or spec["title"] if _chinese() else spec["title"]
