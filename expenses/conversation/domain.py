"""The expense claim in the conversation (workflows.conversation is the contract): whether a
turn is its own, and its answer."""
from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_noop

from config.words import words
from workflows.conversation import Claim, ConversationDomain, TurnContext, TurnReply

from expenses.reading.facts import is_expense_request

from .invoice import INVOICE, claim_run, attached_invoice
from .turns import states_a_new_claim, claim_turn, later_invoice_turn
from .vocabulary import ASK_ROUTE, BLUEPRINT, NAME, PERSONA, VOCABULARY


class ExpensesConversation(ConversationDomain):
    name = NAME
    persona = PERSONA
    blueprints = (BLUEPRINT,)
    vocabulary = VOCABULARY
    attachments = (INVOICE,)

    def _pending(self, turn: TurnContext) -> dict[str, Any] | None:
        """The claim whose missing facts the turn before this one asked for."""
        if turn.signal in ("chat", "analyze") or turn.last_route() != ASK_ROUTE:
            return None
        return turn.pending(NAME).get()

    def holds(self, turn: TurnContext) -> Claim | None:
        if self._pending(turn) is None:
            return None
        return Claim(1.0, "the claim's missing facts were asked for; this message answers")

    def claims(self, turn: TurnContext) -> Claim | None:
        if attached_invoice(turn) is not None:
            return Claim(0.95, "an invoice was attached")
        if turn.signal in ("resolve", "unknown") and is_expense_request(turn.text):
            return Claim(0.9, "a request to file an expense claim")
        return None

    def answer(self, turn: TurnContext) -> TurnReply:
        pending = self._pending(turn)
        if pending is not None:
            return claim_turn(turn, pending.get("text") or None, pending.get("invoice"))
        file = attached_invoice(turn)
        if file is not None and not states_a_new_claim(turn.text):
            run = claim_run(turn.conversation_id, turn.membership.tenant_id)
            if run is not None:
                return later_invoice_turn(turn, run, file)
        return claim_turn(turn, None, None)

    def run_title(self, run: Any) -> Any:
        return words(gettext_noop("The expense claim"))

    def capability(self, zh: bool) -> str:
        return "提交报销" if zh else "file expense claims"

    def example(self, zh: bool) -> str:
        return "请帮我报销：北京住宿，2026-11-16起住了2晚，共1800元" if zh else \
            "Please file an expense claim: lodging in Beijing, 2 nights from 2026-11-16, 1,800 yuan in total"
