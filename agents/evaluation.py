"""The evaluation of the conversation's first step (issue 11): `manage.py eval_requests`.

For each labelled request it asks the configured model backend for the intent (exactly as
a turn does), then takes the same decisions the orchestrator takes — the analysis kind, the
extracted requirements and the template decision — and compares them with the labels in
agents/data/eval_requests.jsonl. Measures: intent (the signal, and for a question the kind
of answer), template (what the first turn does: a template, or which question), name (the
group's name, where labelled), questions asked (whether the first turn asks at all)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llm import ModelError, backend_structured, model_call
from payroll.matching import template_decide
from payroll.models import PayrollTemplate

from .answers import analyze_kind
from .intent import intent_messages, signal_parse
from .understanding import intent_structured, requirements_understood

DATA = Path(__file__).with_name("data") / "eval_requests.jsonl"
MEASURES = ("intent", "template", "name", "questions")


def labelled_requests(path: Path = DATA) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if "_about" not in r]


def first_step(text: str, templates: list) -> dict[str, Any]:
    """What the first turn decides for `text`: intent, kind, template outcome, name."""
    try:
        if backend_structured():  # as a turn does: structured output, repaired once, else the rules
            signal = intent_structured(model_call, intent_messages(text), text).data["signal"]
        else:
            signal = signal_parse(model_call(intent_messages(text), purpose="intent").text)
    except ModelError:
        signal = "unknown"
    out: dict[str, Any] = {"intent": signal}
    if signal == "analyze":
        out["kind"] = analyze_kind(text)
    if signal == "resolve":
        requirements, _ = requirements_understood(model_call, text)
        decision = template_decide(requirements, templates)
        out["template"] = {"clear": decision.chosen.code if decision.chosen else None, "choice": "ask:choice",
                           "none": "none", "ask_region": "ask:region"}[decision.kind]
        out["name"] = requirements.get("group_name")
    return out


@dataclass
class Score:
    hits: dict[str, int] = field(default_factory=lambda: dict.fromkeys(MEASURES, 0))
    totals: dict[str, int] = field(default_factory=lambda: dict.fromkeys(MEASURES, 0))
    misses: list[str] = field(default_factory=list)

    def add(self, measure: str, ok: bool, row: dict[str, Any], got: Any, want: Any) -> None:
        self.totals[measure] += 1
        self.hits[measure] += ok
        if not ok:
            self.misses.append(f"[{row.get('s')}] {measure}: {row['t']!r} → {got!r}, expected {want!r}")

    def accuracy(self, measure: str) -> float:
        return self.hits[measure] / self.totals[measure] if self.totals[measure] else 1.0


def evaluate(rows: list[dict[str, Any]]) -> Score:
    templates = list(PayrollTemplate.objects.prefetch_related("items").order_by("code", "-version"))
    score = Score()
    for row in rows:
        got = first_step(row["t"], templates)
        want_intent = row["i"] + (f":{row['k']}" if row.get("k") else "")
        got_intent = got["intent"] + (f":{got['kind']}" if row.get("k") and got.get("kind") else "")
        score.add("intent", got_intent == want_intent, row, got_intent, want_intent)
        if row.get("tpl"):
            score.add("template", got.get("template") == row["tpl"], row, got.get("template"), row["tpl"])
            asked = not got.get("template") or ":" in got["template"] or got["template"] == "none"
            expect = ":" in row["tpl"] or row["tpl"] == "none"
            score.add("questions", asked == expect, row, "asks" if asked else "no question",
                      "asks" if expect else "no question")
        if row.get("n"):
            score.add("name", got.get("name") == row["n"], row, got.get("name"), row["n"])
    return score
