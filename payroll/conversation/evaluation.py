"""Payroll's measures of the conversation's first step (run by `manage.py
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

from django.contrib.auth.models import User
from django.core.management import call_command

from workflows.conversation import Dialogues, Evaluation
from workflows.models import Node, Run

from payroll.models import PayrollTemplate
from payroll.reading.matching import template_decide
from payroll.records.seed import templates_seed

from .understanding import requirements_understood


DATA = Path(__file__).parent.parent / "data" / "eval_requests.jsonl"
MEASURES = ("template", "name", "questions")


def labelled_requests(path: Path = DATA) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if "_about" not in r and "mo" not in r]  # "mo" rows: the month's (month_evaluation)


def prepare() -> list:
    """The catalog is global; the evaluation reads it, seeded as the code declares it."""
    templates_seed()
    return list(PayrollTemplate.objects.prefetch_related("items").order_by("code", "-version"))


def step(text: str, templates: list, call: Callable[..., Any]) -> dict[str, Any]:
    """What the first turn decides for a request: the template outcome and the group's name."""
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


# --- Multi-turn dialogues (`manage.py eval_dialogues`) ---------------------------------------------

DIALOGUES = Path(__file__).parent.parent / "data" / "eval_dialogues.jsonl"
DIALOGUE_MEASURES = ("turn", "name", "template", "items", "questions", "outcome")


def labelled_dialogues(path: Path = DIALOGUES) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if "_about" not in r]


def dialogue_prepare():
    """The demo tenant (its catalog, employees and users); the person typing is alice."""
    if not User.objects.filter(username="alice").exists():
        call_command("seed_demo", verbosity=0)
    return User.objects.get(username="alice").membership


def dialogue_observe(conversation_id: int, result: dict[str, Any], state: dict[str, Any] | None) -> dict[str, Any]:
    """After a turn (its runs driven as workers would): the question open (this domain's pending
    `state`, or its run's step waiting for an answer), the group's name, template and items."""
    runs = Run.objects.filter(conversation_id=conversation_id, blueprint="payroll_group_setup")
    going = [r for r in runs.order_by("-created_at", "-id") if not r.cancel_requested
             and r.status not in ("cancelled", "failed", "completed_with_undo")]
    latest = going[0] if going else None
    waiting = (Node.objects.filter(run=latest, retired_in__isnull=True, status="awaiting_input").first()
               if latest is not None else None)
    question = None
    if state is not None:
        question = f"pending:{state.get('kind') or 'explore'}"
    elif waiting is not None:
        question = f"run:{waiting.key}"
    template = None
    if latest is not None and waiting is None:
        coordinate = latest.coordinates.filter(key="template_id").order_by("-plan_version").first()
        if coordinate is not None:
            template = PayrollTemplate.objects.filter(id=int(coordinate.value)).values_list("code", flat=True).first()
        if template is None:
            template = latest.params.get("template_code")
    requirements = (latest.params.get("requirements") or {}) if latest is not None else {}
    return {"asks": question is not None, "question": question, "reply": result.get("reply", ""),
            "name": latest.params.get("group_name") if latest is not None else None,
            "template": template, "run": latest.id if latest is not None else None,
            "met": sorted(requirements.get("met") or []),
            "not_met": sorted(n["item"] for n in requirements.get("not_met") or []),
            "outcome": "stopped" if latest is None else ("asking" if template is None else "run")}


def dialogue_score(add: Callable[..., None], row: dict[str, Any], observed: list[dict[str, Any]]) -> None:
    for n, (want, got) in enumerate(zip(row["k"], observed)):
        add("turn", ("ask" if got["asks"] else "go") == want, row,
            f"turn {n + 1}: {'ask' if got['asks'] else 'go'} ({got['reply'][:90]!r})", want)
    final = observed[-1]
    # The same question never more than twice (a question's identity: the pending state or the step).
    counts: dict[str, int] = {}
    for got in observed:
        if got["question"]:
            counts[got["question"]] = counts.get(got["question"], 0) + 1
    add("questions", max(counts.values() or [0]) <= 2, row, counts, "each question at most twice")
    add("outcome", final["outcome"] == row["outcome"], row, final["outcome"], row["outcome"])
    if row["outcome"] != "stopped":
        add("name", final["name"] == row["name"], row, final["name"], row["name"])
        add("template", final["template"] == row["tpl"], row, final["template"], row["tpl"])
    if row["outcome"] == "run":
        add("items", (final["met"], final["not_met"]) == (sorted(row["met"]), sorted(row["not_met"])), row,
            {"met": final["met"], "not_met": final["not_met"]}, {"met": row["met"], "not_met": row["not_met"]})


DIALOGUE_EVALUATION = Dialogues(labelled=labelled_dialogues, measures=DIALOGUE_MEASURES, prepare=dialogue_prepare,
                                observe=dialogue_observe, score=dialogue_score)
