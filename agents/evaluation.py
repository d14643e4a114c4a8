"""The evaluation of the conversation's first step: `manage.py eval_requests`.

Each registered domain brings its labelled requests and its own measures
(workflows.conversation.Evaluation; payroll's are in payroll.conversation.evaluation). For each row the
configured model backend is asked for the intent exactly as a turn asks it, and for a
question the kind of answer it gets is read as a turn reads it (agents.answers.analyze_kind):
the `intent` measure, the same for every domain. For a request to act, the domain takes the
decisions its first turn takes and scores them on its own measures."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from llm import ModelError, backend_structured, model_call
from timeline.services import conversation_create
from workflows.conversation import ConversationDomain, Evaluation, conversation_domains
from workflows.dispatch import dispatch_held
from workflows.inprocess import conversation_runs_drive

from .answers import analyze_kind
from .models import Exploration
from .orchestrator import message_post
from .intent import intent_messages, signal_parse
from .understanding import intent_structured


def _evaluations() -> list[tuple[ConversationDomain, Evaluation]]:
    return [(d, d.evaluation) for d in conversation_domains() if d.evaluation is not None]


def measures() -> tuple[str, ...]:
    return ("intent", *dict.fromkeys(m for _, e in _evaluations() for m in e.measures))


def __getattr__(name: str) -> Any:  # MEASURES: read once the domains have registered
    if name == "MEASURES":
        return measures()
    raise AttributeError(name)


def labelled_requests() -> list[dict[str, Any]]:
    """Every domain's labelled rows, each tagged with the domain it came from."""
    return [{**row, "_domain": d.name} for d, e in _evaluations() for row in e.labelled()]


def intent_of(text: str) -> str:
    try:
        if backend_structured():  # as a turn does: structured output, repaired once, else the rules
            return intent_structured(model_call, intent_messages(text), text).data["signal"]
        return signal_parse(model_call(intent_messages(text), purpose="intent").text)
    except ModelError:
        return "unknown"


@dataclass
class Score:
    hits: dict[str, int] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    misses: list[str] = field(default_factory=list)

    def add(self, measure: str, ok: bool, row: dict[str, Any], got: Any, want: Any) -> None:
        self.totals[measure] = self.totals.get(measure, 0) + 1
        self.hits[measure] = self.hits.get(measure, 0) + bool(ok)
        if not ok:
            self.misses.append(f"[{row.get('s')}] {measure}: {row['t']!r} → {got!r}, expected {want!r}")

    def accuracy(self, measure: str) -> float:
        return self.hits.get(measure, 0) / self.totals[measure] if self.totals.get(measure) else 1.0


def evaluate(rows: list[dict[str, Any]]) -> Score:
    evaluations = dict((d.name, e) for d, e in _evaluations())
    prepared = {name: e.prepare() for name, e in evaluations.items()
                if any(r.get("_domain", name) == name for r in rows)}
    score = Score(hits=dict.fromkeys(measures(), 0), totals=dict.fromkeys(measures(), 0))
    for row in rows:
        text = row["t"]
        signal = intent_of(text)
        got: dict[str, Any] = {"intent": signal}
        if signal == "analyze":
            got["kind"] = analyze_kind(text)
        want_intent = row["i"] + (f":{row['k']}" if row.get("k") else "")
        got_intent = signal + (f":{got['kind']}" if row.get("k") and got.get("kind") else "")
        score.add("intent", got_intent == want_intent, row, got_intent, want_intent)
        names = [row["_domain"]] if row.get("_domain") in evaluations else list(evaluations)
        for name in names:
            evaluation = evaluations[name]
            if signal == "resolve":
                got.update(evaluation.step(text, prepared.get(name), model_call))
            evaluation.score(score.add, row, got)
    return score


# --- Multi-turn dialogues: `manage.py eval_dialogues` --------------------------------------------

def _dialogue_domains():
    return [(d, d.dialogues) for d in conversation_domains() if getattr(d, "dialogues", None) is not None]


def dialogue_measures() -> tuple[str, ...]:
    return ("dialogue", *dict.fromkeys(m for _, e in _dialogue_domains() for m in e.measures))


def labelled_dialogues() -> list[dict[str, Any]]:
    return [{**row, "_domain": d.name} for d, e in _dialogue_domains() for row in e.labelled()]


def pending_state(conversation_id: int, domain: str) -> dict[str, Any] | None:
    """The domain's open question in the conversation (its pending state), if any."""
    row = Exploration.objects.filter(conversation_id=conversation_id).first()
    return ((row.requirements or {}).get(domain) if row else None) or None


def evaluate_dialogues(rows: list[dict[str, Any]]) -> Score:
    """Each dialogue through the real conversation front (agents.orchestrator.message_post), a
    new conversation each, with the configured model backend. A dialogue is fully right when
    every one of its measures is; its turns are scored one by one too."""
    domains = dict((d.name, e) for d, e in _dialogue_domains())
    speakers = {name: e.prepare() for name, e in domains.items() if any(r["_domain"] == name for r in rows)}
    score = Score(hits=dict.fromkeys(dialogue_measures(), 0), totals=dict.fromkeys(dialogue_measures(), 0))
    with dispatch_held():  # nothing reaches a broker: runs are planned and driven here, as workers would
        for row in rows:
            dialogue = domains[row["_domain"]]
            membership = speakers[row["_domain"]]
            observed = []
            with transaction.atomic():  # each dialogue starts from the same records: rolled back after
                conversation = conversation_create(tenant_id=membership.tenant_id, user_id=membership.user_id)
                for text in row["turns"]:
                    result = message_post(membership=membership, conversation_id=conversation.id, text=text)
                    conversation_runs_drive(conversation.id)  # what workers would do before the next turn
                    observed.append(dialogue.observe(conversation.id, result,
                                                     pending_state(conversation.id, row["_domain"])))
                transaction.set_rollback(True)
            own = Score()
            dialogue.score(own.add, {**row, "t": row["id"]}, observed)
            for measure, total in own.totals.items():
                score.totals[measure] = score.totals.get(measure, 0) + total
                score.hits[measure] = score.hits.get(measure, 0) + own.hits.get(measure, 0)
            score.misses.extend(own.misses)
            right = all(own.hits.get(m, 0) == t for m, t in own.totals.items())
            score.add("dialogue", right, {**row, "t": f"{row['id']} {' ⏎ '.join(row['turns'])}"[:200]},
                      "wrong", "fully right")
    return score
