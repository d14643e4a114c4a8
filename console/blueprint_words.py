"""Blueprint titles and step goals are data (the blueprints' JSON, copied onto each run's
nodes); a reader in Chinese sees the blueprint's own "title_zh" / "goal_zh" beside them. The
stored text stays as it was written; only what a page shows changes with the language."""
from __future__ import annotations

from django.utils import translation

from config.words import words_render
from workflows.blueprints import BLUEPRINTS, step_title


def _chinese() -> bool:
    return (translation.get_language() or "").lower().startswith("zh")


def _nodes():
    for spec in BLUEPRINTS.values():
        yield from spec["nodes"] if isinstance(spec["nodes"], list) else ()


def goal_shown(goal: str) -> str:
    """A step's goal in the page's language (a goal no blueprint knows, e.g. a replanned
    step's, reads as written)."""
    if not goal or not _chinese():
        return goal
    return next((node["goal_zh"] for node in _nodes() if node["goal"] == goal and node.get("goal_zh")), goal)


def criterion_shown(criterion: str) -> str:
    """A step's acceptance criterion in the page's language (the blueprint's "acceptance_zh")."""
    if not criterion or not _chinese():
        return criterion
    for node in _nodes():
        for english, chinese in zip(node.get("acceptance", []), node.get("acceptance_zh", []), strict=False):
            if english == criterion:
                return chinese
    return criterion


def run_title_shown(title: str, blueprint: str) -> str:
    """A run's stored title ("Payroll group setup: Shanghai Sales") with the blueprint's part
    in the reader's language, and its colon; the name a person gave stays as typed."""
    spec = BLUEPRINTS.get(blueprint)
    if not title or spec is None or not _chinese() or not spec.get("title_zh"):
        return title
    if not title.startswith(spec["title"]):
        return title
    rest = title.removeprefix(spec["title"])
    # One kind of colon per language: "薪资组设置：Shanghai Sales", not "薪资组设置: …".
    return spec["title_zh"] + ("：" + rest[2:] if rest.startswith(": ") else rest)


def blueprint_title(name: str) -> str:
    """"payroll_group_setup" → "Payroll group setup" (or its title_zh)."""
    spec = BLUEPRINTS.get(name)
    if spec is None:
        return (name or "").replace("_", " ").capitalize()
    return spec.get("title_zh") or spec["title"] if _chinese() else spec["title"]


def run_title_now(run, stored: str = "") -> str:
    """A run's title as it is now: the blueprint's title and the name the run's params hold
    under the blueprint's `titled_by` (a rename while it waits, or by the run itself, changes
    the params, not the title stored when it started); the stored title when it names nothing."""
    spec = BLUEPRINTS.get(run.blueprint) or {}
    named = (run.params or {}).get(spec["titled_by"]) if spec.get("titled_by") else None
    if named:
        return run_title_shown(f"{spec['title']}: {named}", run.blueprint)
    return run_title_shown(stored, run.blueprint)


def activity_title_shown(activity) -> str:
    """An Activity's title as the reader reads it: a run's with its blueprint's part
    translated, a step's by the step's name, a message's as the person typed it."""
    run = activity.run if activity.run_id else None
    if activity.kind == "run" and run is not None:
        return run_title_now(run, activity.title)
    if activity.kind == "node" and activity.node_key:
        return words_render(step_title(run.blueprint if run else "", activity.node_key))
    return activity.title
