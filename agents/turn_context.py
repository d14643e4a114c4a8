"""The turn as the domains see it (workflows.conversation.TurnContext), and a domain's pending
state in the conversation: what the orchestrator hands each domain it routes a message to."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from config.api import DomainError
from config.words import is_words, words_english
from llm import model_call
from tenants.models import Membership
from timeline.models import Activity, Conversation
from timeline.services import event_append, frame_record
from workflows.conversation import conversation_domains

from .memory import anchor_set, ledger_append, narrative_context
from .models import Exploration

TURN_MODEL_CALL_CAP = 8


class TurnBudgetExhausted(DomainError):
    code = "model_budget_exhausted"


class _Pending:
    """A domain's pending state in this conversation, kept in the conversation's Exploration
    row: its JSON `requirements` holds each waiting domain's state under the domain's name
    (the row's other fields mirror the last one written, for the admin)."""

    FIELDS = ("request", "scratchpad", "iterations", "question")

    def __init__(self, conversation: Conversation, domain: str):
        self.conversation, self.domain = conversation, domain

    def _row(self) -> Exploration | None:
        return Exploration.objects.filter(conversation=self.conversation).first()

    @staticmethod
    def _held(row: Exploration | None) -> dict[str, Any]:
        """The registered domains' states (a row written before domains kept theirs here holds none)."""
        names = {d.name for d in conversation_domains()}
        return {k: v for k, v in ((row.requirements or {}) if row else {}).items()
                if k in names and isinstance(v, dict)}

    def get(self) -> dict[str, Any] | None:
        row = self._row()
        state = (row.requirements or {}).get(self.domain) if row is not None else None
        return dict(state) if isinstance(state, dict) else None

    def set(self, state: dict[str, Any]) -> None:
        row = self._row()
        held = self._held(row)
        held[self.domain] = state
        mirrored = {"request": str(state.get("request") or ""), "scratchpad": state.get("scratchpad") or [],
                    "iterations": int(state.get("iterations") or 0),
                    "question": words_english(state.get("question")) if is_words(state.get("question"))
                    else str(state.get("question") or "")}
        Exploration.objects.update_or_create(conversation=self.conversation,
                                             defaults={"requirements": held, **mirrored})

    def clear(self) -> None:
        row = self._row()
        if row is None:
            return
        held = self._held(row)
        held.pop(self.domain, None)
        if held:
            Exploration.objects.filter(id=row.id).update(requirements=held)
        else:
            row.delete()


@dataclass
class Turn:
    """The turn as the domains see it (workflows.conversation.TurnContext)."""

    membership: Membership
    conversation: Conversation
    activity_id: int
    message_id: int
    text: str
    attachment: Any = None
    attachment_kind: str = ""
    signal: str = "unknown"
    branch: str = ""
    calls: int = 0
    deltas: list[str] = field(default_factory=list)
    streamed: int = 0
    memo: dict[str, Any] = field(default_factory=dict)

    @property
    def conversation_id(self) -> int:
        return self.conversation.id

    @property
    def zh(self) -> bool:
        return bool(re.search(r"[\u4e00-\u9fff]", self.text))

    @property
    def lang(self) -> str:
        return "zh" if self.zh else "en"

    @property
    def reader_lang(self) -> str:
        """The request's language as a Django language code (the reply's `text` is rendered in it)."""
        return "zh-hans" if self.zh else "en"

    def model(self, messages: list[dict], *, purpose: str, choices: list[str] | None = None,
              reply: bool = False, tools: list[dict] | None = None, response_format: dict | None = None,
              max_tokens: int = 512):
        """One model call within the turn's budget; a reply streams (token by token on a
        streaming backend) as message.delta events while it is generated."""
        self.budget_spend()
        result = model_call(messages, purpose=purpose, choices=choices, on_delta=self._delta if reply else None,
                            stream=True if reply else None, tools=tools, response_format=response_format,
                            max_tokens=max_tokens)
        if reply:
            self._flush()
        return result

    def budget_spend(self, calls: int = 1) -> None:
        if self.calls >= TURN_MODEL_CALL_CAP:
            raise TurnBudgetExhausted(f"This turn used its {TURN_MODEL_CALL_CAP} model calls.")
        self.calls += calls

    def frame(self, kind: str, name: str, summary: Any, payload: dict[str, Any], **extra: Any):
        return frame_record(activity_id=self.activity_id, kind=kind, name=name, summary=summary, payload=payload,
                            **extra)

    def anchor_set(self, goal: str) -> None:
        anchor_set(conversation_id=self.conversation.id, goal=goal)

    def ledger_append(self, *, milestone: str, text: str, run_id: int | None = None) -> None:
        ledger_append(conversation_id=self.conversation.id, run_id=run_id, milestone=milestone, text=text)

    def narrative(self, collection: list[str] | None = None) -> str:
        return narrative_context(conversation_id=self.conversation.id, collection=collection)

    def pending(self, domain: str) -> _Pending:
        return _Pending(self.conversation, domain)

    def last_route(self) -> str:
        return (Activity.objects.filter(conversation_id=self.conversation.id, kind=Activity.Kind.MESSAGE)
                .exclude(id=self.activity_id).order_by("-started_at", "-id")
                .values_list("route", flat=True).first()) or ""

    def _delta(self, piece: str) -> None:
        self.deltas.append(piece)
        if sum(len(p) for p in self.deltas) >= 24 or piece.endswith("\n"):
            self._flush()

    def _flush(self) -> None:
        if not self.deltas:
            return
        text, self.deltas = "".join(self.deltas), []
        with transaction.atomic():  # each delta commits on its own so that it is pushed now
            event_append(conversation_id=self.conversation.id, type="message.delta",
                         data={"activity": str(self.activity_id), "index": self.streamed, "text": text})
        self.streamed += 1
