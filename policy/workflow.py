"""The exact-graph policy workflow ("KA-5", DESIGN.md §2).

The graph is data (graph.json): states, every edge and the guard that permits it. This
module holds the other half: what each state *does* (retrieve, verify, ask the model for
one bounded decision, compose, check the answer) and what each guard name means. The
walk takes the first listed edge whose guard holds, and refuses any transition the graph
does not list. Two budgets bound it: a transition cap (default 8; a recorded stop counts)
and a model-call cap (1; a failed call counts). The model only ever chooses among the
listed candidates, compared as whole strings after trimming surrounding whitespace; it
gets no tool and no way to search again.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from django.db import models
from django.db.models import Q

from llm import ModelError, ModelTimeout, model_call
from tenants.models import Tenant

from .models import LineRole
from .selectors import Evidence, amount_text, evidence_retrieve

GRAPH_PATH = Path(__file__).with_name("graph.json")


class State(models.TextChoices):
    START = "START"
    RETRIEVED = "RETRIEVED"
    VERIFIED = "VERIFIED"
    DECIDED = "DECIDED"
    COMPOSED = "COMPOSED"
    ANSWERED = "ANSWERED"
    ABSTAINED = "ABSTAINED"
    STOPPED = "STOPPED"


CAP_GUARD = "transition_cap_reached"


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    guard: str
    reason: str


@dataclass(frozen=True)
class Graph:
    version: str
    digest: str
    initial: str
    terminal: frozenset[str]
    candidates: tuple[str, ...]
    max_transitions: int
    max_model_calls: int
    edges: tuple[Edge, ...]
    decision_prompt: dict[str, str]

    def edges_from(self, state: str) -> list[Edge]:
        return [edge for edge in self.edges if edge.source == state]


@dataclass
class Walk:
    """Run state of one walk: ephemeral, returned as the result, never a business record."""

    tenant: Tenant
    question: str
    on_date: date
    topic: str
    lang: str
    max_transitions: int
    max_model_calls: int
    state: str = State.START
    path: list[str] = field(default_factory=list)
    reason: str = ""
    detail: str = ""
    model_calls: int = 0
    retrieved: bool = False
    evidence: Evidence | None = None
    verification_failures: list[str] = field(default_factory=list)
    claim: dict[str, Any] | None = None
    decision_outcome: str = ""  # ok | timeout | error | budget
    decision: str = ""
    decision_detail: str = ""
    answer: dict[str, Any] | None = None
    answer_failures: list[str] = field(default_factory=list)
    # The one way this walk reaches the model: llm.model_call, or the caller's own (a tool
    # passes the engine's tool_model_call, so the call is capped, counted and a frame).
    model: Callable[..., Any] = model_call


# --- Guards: the names graph.json may use ------------------------------------------------
GUARDS: dict[str, Callable[[Walk, Graph], bool]] = {
    "retrieval_ran": lambda w, g: w.retrieved,
    "no_evidence": lambda w, g: w.evidence is None,
    "evidence_unverified": lambda w, g: w.evidence is not None and bool(w.verification_failures),
    "evidence_verified": lambda w, g: w.evidence is not None and not w.verification_failures and w.claim is not None,
    "model_budget_exhausted": lambda w, g: w.decision_outcome == "budget",
    "decision_timeout": lambda w, g: w.decision_outcome == "timeout",
    "decision_error": lambda w, g: w.decision_outcome == "error",
    # Whole-string comparison: "use_evidence; search_again" is not "use_evidence".
    "decision_is_candidate": lambda w, g: w.decision_outcome == "ok" and w.decision in g.candidates,
    "decision_invalid": lambda w, g: w.decision_outcome == "ok" and w.decision not in g.candidates,
    "decision_is_use_evidence": lambda w, g: w.decision == "use_evidence",
    "decision_is_abstain": lambda w, g: w.decision == "abstain",
    "answer_supported": lambda w, g: w.answer is not None and not w.answer_failures,
    "answer_unsupported": lambda w, g: w.answer is None or bool(w.answer_failures),
    CAP_GUARD: lambda w, g: len(w.path) >= w.max_transitions,
}


class GraphInvalid(Exception):
    pass


@lru_cache(maxsize=4)
def graph_load(path: str = str(GRAPH_PATH)) -> Graph:
    """Read and check the graph: known states and guards, terminal states without exits,
    and a cap edge out of every other state (the cap must be able to stop anywhere)."""
    raw = Path(path).read_bytes()
    data = json.loads(raw)
    states = set(data["states"])
    if set(State.values) != states:
        raise GraphInvalid(f"graph states {sorted(states)} differ from {sorted(State.values)}")
    terminal = frozenset(data["terminal"])
    edges = tuple(Edge(e["from"], e["to"], e["guard"], e.get("reason", "")) for e in data["edges"])
    for edge in edges:
        if edge.source not in states or edge.target not in states:
            raise GraphInvalid(f"edge {edge} names an unknown state")
        if edge.guard not in GUARDS:
            raise GraphInvalid(f"edge {edge} uses unknown guard {edge.guard!r}")
        if edge.source in terminal:
            raise GraphInvalid(f"terminal state {edge.source} has an outgoing edge")
    for state in states - terminal:
        if not any(e.source == state and e.guard == CAP_GUARD and e.target == State.STOPPED for e in edges):
            raise GraphInvalid(f"state {state} has no {CAP_GUARD} edge to STOPPED")
    return Graph(
        version=data["version"], digest=hashlib.sha256(raw).hexdigest(), initial=data["initial"],
        terminal=terminal, candidates=tuple(data["candidates"]),
        max_transitions=int(data["caps"]["max_transitions"]), max_model_calls=int(data["caps"]["max_model_calls"]),
        edges=edges, decision_prompt=data["decision_prompt"],
    )


# --- What each state does before its exits are judged ------------------------------------
def _retrieve(walk: Walk, graph: Graph) -> None:
    walk.evidence = evidence_retrieve(tenant=walk.tenant, topic=walk.topic, on_date=walk.on_date,
                                      lang=walk.lang, question=walk.question)
    walk.retrieved = True


def _verify(walk: Walk, graph: Graph) -> None:
    """Date, authority, complete span and an extractive claim, checked before any model
    sees the evidence; the candidate answer is prepared here so that the final gate can
    inspect exactly the claim that will be released."""
    evidence = walk.evidence
    if evidence is None:
        return
    failures = walk.verification_failures
    version = evidence.version
    if not (version.effective_from <= walk.on_date and (version.effective_to is None or walk.on_date <= version.effective_to)):
        failures.append(f"{evidence.source} is not in force on {walk.on_date}")
    replacing = version.replaced_by.filter(effective_from__lte=walk.on_date).filter(
        Q(effective_to__isnull=True) | Q(effective_to__gte=walk.on_date))
    if replacing.exists():
        failures.append(f"{evidence.source} is replaced on {walk.on_date} by {replacing.first().label}")
    if not evidence.authority.strip():
        failures.append(f"{evidence.source} names no issuing authority")
    unit_line, date_line = evidence.line_of(LineRole.UNIT), evidence.line_of(LineRole.EFFECTIVE)
    amount_line = evidence.amount_line
    if unit_line is None:
        failures.append(f"{evidence.source} has no line stating the unit")
    if date_line is None:
        failures.append(f"{evidence.source} has no line stating its effective date")
    if amount_line.amount is None:
        failures.append(f"{evidence.source} line {amount_line.number} carries no amount")
    if failures:
        return
    claim_amount = amount_text(amount_line.amount)
    # Extractive: the number must be written in the line itself, not only in our column.
    if claim_amount not in re.findall(r"\d+(?:\.\d+)?", amount_line.text):
        failures.append(f"line {amount_line.number} does not state {claim_amount}")
    if not amount_line.unit or amount_line.unit not in unit_line.text:
        failures.append(f"the unit {amount_line.unit!r} is not the one line {unit_line.number} states")
    if version.effective_from.isoformat() not in date_line.text:
        failures.append(f"line {date_line.number} does not state {version.effective_from}")
    if failures:
        return
    cited = sorted({unit_line.number: unit_line, date_line.number: date_line, amount_line.number: amount_line}.values(),
                   key=lambda line: line.number)
    walk.claim = {
        "amount": claim_amount, "unit": amount_line.unit,
        "citation": [{"source": evidence.source, "line": line.number, "text": line.text} for line in cited],
    }


def decision_messages(walk: Walk, graph: Graph) -> list[dict[str, str]]:
    evidence = walk.evidence
    assert evidence is not None and walk.claim is not None
    quoted = "\n".join(f"[{c['source']} line {c['line']}] {c['text']}" for c in walk.claim["citation"])
    candidates = ", ".join(graph.candidates)
    if walk.lang == "zh":
        body = f"问题：{walk.question}\n日期：{walk.on_date}\n证据（{evidence.source}）：\n{quoted}\n候选：{candidates}"
    else:
        body = f"Question: {walk.question}\nDate: {walk.on_date}\nEvidence ({evidence.source}):\n{quoted}\nCandidates: {candidates}"
    prompt = graph.decision_prompt.get(walk.lang) or graph.decision_prompt["en"]
    return [{"role": "system", "content": prompt}, {"role": "user", "content": body}]


def _decide(walk: Walk, graph: Graph) -> None:
    if walk.model_calls >= walk.max_model_calls:
        walk.decision_outcome = "budget"
        walk.decision_detail = f"The model-call budget ({walk.max_model_calls}) is already spent."
        return
    walk.model_calls += 1  # a failed call consumes the budget too: no quiet second try
    try:
        result = walk.model(decision_messages(walk, graph), purpose="decide", choices=list(graph.candidates),
                            max_tokens=16)
    except ModelTimeout as exc:
        walk.decision_outcome, walk.decision_detail = "timeout", f"The decision timed out: {exc}"
        return
    except ModelError as exc:
        walk.decision_outcome, walk.decision_detail = "error", f"The decision failed: {exc}"
        return
    walk.decision_outcome = "ok"
    walk.decision = result.text.strip()
    if walk.decision not in graph.candidates:
        walk.decision_detail = (f"The model answered {result.text!r}, which is not one of: "
                                f"{', '.join(graph.candidates)}.")


def _compose(walk: Walk, graph: Graph) -> None:
    # The local composer releases the claim prepared at verification; no model improvises it.
    if walk.decision == "use_evidence" and walk.claim is not None:
        walk.answer = dict(walk.claim)


def _final_gate(walk: Walk, graph: Graph) -> None:
    """Every part of the answer must be stated by a cited line: amount, unit and date."""
    answer = walk.answer
    if answer is None:
        walk.answer_failures.append("nothing was composed")
        return
    texts = [c["text"] for c in answer["citation"]]
    if not any(answer["amount"] in re.findall(r"\d+(?:\.\d+)?", t) for t in texts):
        walk.answer_failures.append(f"no cited line states {answer['amount']}")
    if not any(answer["unit"] in t for t in texts):
        walk.answer_failures.append(f"no cited line states the unit {answer['unit']!r}")
    assert walk.evidence is not None
    if not any(walk.evidence.version.effective_from.isoformat() in t for t in texts):
        walk.answer_failures.append("no cited line states the effective date")


ACTIONS: dict[str, Callable[[Walk, Graph], None]] = {
    State.START: _retrieve,
    State.RETRIEVED: _verify,
    State.VERIFIED: _decide,
    State.DECIDED: _compose,
    State.COMPOSED: _final_gate,
}


def _detail(walk: Walk, edge: Edge) -> str:
    if edge.reason == "insufficient_evidence":
        return f"No {walk.topic} policy in force on {walk.on_date} answers this question in '{walk.lang}'."
    if edge.reason == "unverified_evidence":
        return "The evidence failed verification: " + "; ".join(walk.verification_failures) + "."
    if edge.reason in {"model_timeout", "model_error", "invalid_decision", "model_call_budget_exhausted"}:
        return walk.decision_detail
    if edge.reason == "model_abstained":
        return "The model chose to abstain from the verified evidence."
    if edge.reason == "unsupported_answer":
        return "The composed answer failed the source check: " + "; ".join(walk.answer_failures) + "."
    if edge.reason == "answered" and walk.answer:
        lines = ", ".join(str(c["line"]) for c in walk.answer["citation"])
        return f"{walk.answer['amount']} {walk.answer['unit']}, from {walk.evidence.source} lines {lines}."
    return ""


def policy_graph_walk(*, tenant: Tenant, question: str, on_date: date, topic: str, lang: str,
                      max_transitions: int | None = None, max_model_calls: int | None = None,
                      graph: Graph | None = None, model: Callable[..., Any] | None = None) -> dict[str, Any]:
    """Walk the graph from START to a terminal state and return
    {state, path, reason, detail, model_calls, transitions, answer: {amount, unit, citation}}.
    `model` replaces llm.model_call for the one decision (same signature and errors).
    `path` lists the recorded states after START; a stop for want of a transition slot
    ends the walk in STOPPED without a recorded entry (recording one would take the slot the
    cap has just refused)."""
    graph = graph or graph_load()
    walk = Walk(tenant=tenant, question=question, on_date=on_date, topic=topic, lang=lang,
                max_transitions=graph.max_transitions if max_transitions is None else max_transitions,
                max_model_calls=graph.max_model_calls if max_model_calls is None else max_model_calls,
                state=graph.initial, model=model or model_call)
    while walk.state not in graph.terminal:
        exits = graph.edges_from(walk.state)
        cap_edge = next(e for e in exits if e.guard == CAP_GUARD)
        if GUARDS[CAP_GUARD](walk, graph):
            walk.state, walk.reason = cap_edge.target, cap_edge.reason
            walk.detail = f"All {walk.max_transitions} transitions were used before leaving {walk.path[-1] if walk.path else graph.initial}."
            break
        ACTIONS[walk.state](walk, graph)
        edge = next((e for e in exits if e.guard != CAP_GUARD and GUARDS[e.guard](walk, graph)), None)
        if edge is None:  # the graph is checked at load; this is a host bug, and it stops loudly
            raise GraphInvalid(f"no edge out of {walk.state} holds")
        walk.state = edge.target
        walk.path.append(edge.target)
        walk.reason, walk.detail = edge.reason, _detail(walk, edge)
    answered = walk.state == State.ANSWERED and walk.answer is not None
    return {
        "state": str(walk.state),
        "path": [str(s) for s in walk.path],
        "reason": walk.reason,
        "detail": walk.detail,
        "model_calls": walk.model_calls,
        "transitions": len(walk.path),
        "decision": walk.decision or None,
        "answer": {
            "amount": walk.answer["amount"] if answered else None,
            "unit": walk.answer["unit"] if answered else None,
            "citation": walk.answer["citation"] if answered else [],
        },
    }
