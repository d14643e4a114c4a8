"""Payroll's measures of the conversation's first step (issue 11; run by `manage.py
eval_requests`, agents.evaluation, which measures the intent of every row the same way for
every domain). For each labelled request to set up a group it takes the decisions the first
turn takes — the requirements as the turn understands them and the template decision — and
compares them with the labels in payroll/data/eval_requests.jsonl: template (what the first
turn does: a template, or which question), name (the group's name, where labelled),
questions (whether the first turn asks at all)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from workflows.conversation import Evaluation

from .matching import template_decide
from .models import PayrollTemplate

DATA = Path(__file__).with_name("data") / "eval_requests.jsonl"
MEASURES = ("template", "name", "questions")


def labelled_requests(path: Path = DATA) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if "_about" not in r]


def prepare() -> list:
    """The catalog is global; the evaluation reads it, seeded as the code declares it."""
    from .seed import templates_seed

    templates_seed()
    return list(PayrollTemplate.objects.prefetch_related("items").order_by("code", "-version"))


def step(text: str, templates: list, call: Callable[..., Any]) -> dict[str, Any]:
    """What the first turn decides for a request: the template outcome and the group's name."""
    from .conversation import requirements_understood

    requirements, _ = requirements_understood(call, text)
    decision = template_decide(requirements, templates)
    return {"template": {"clear": decision.chosen.code if decision.chosen else None, "choice": "ask:choice",
                         "none": "none", "ask_region": "ask:region"}[decision.kind],
            "name": requirements.get("group_name")}


def score(add: Callable[..., None], row: dict[str, Any], got: dict[str, Any]) -> None:
    if row.get("tpl"):
        add("template", got.get("template") == row["tpl"], row, got.get("template"), row["tpl"])
        asked = not got.get("template") or ":" in got["template"] or got["template"] == "none"
        expect = ":" in row["tpl"] or row["tpl"] == "none"
        add("questions", asked == expect, row, "asks" if asked else "no question", "asks" if expect else "no question")
    if row.get("n"):
        add("name", got.get("name") == row["n"], row, got.get("name"), row["n"])


EVALUATION = Evaluation(labelled=labelled_requests, measures=MEASURES, prepare=prepare, step=step, score=score)
