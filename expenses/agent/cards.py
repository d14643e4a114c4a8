"""The expense submit's approval card as typed rows (workflows.cards): the claim (category,
city, dates, amount, claimant) and the policy verdict — the amount a night against the
rule's limit a night, with currencies, the rule and its cited lines. Registered in
ExpensesConfig.ready()."""
from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_noop

from config.words import ngettext_noop, words
from workflows import cards

from expenses.models import PolicyVerdict
from .previews import category_words, claim_of

# The policy limits it compares are in yuan (policy.services compares CNY claims only).
LIMIT_CURRENCY = "CNY"
VERDICT_WORDS = {PolicyVerdict.WITHIN: gettext_noop("Within the policy limit"),
                 PolicyVerdict.OVER: gettext_noop("Over the policy limit"),
                 PolicyVerdict.NO_POLICY: gettext_noop("No policy limit found")}


def _claim_row(approval: Any) -> cards.Row:
    claim = claim_of(approval.tenant_id, approval.arguments)
    if claim is None:
        return cards.text(words(gettext_noop("unknown claim")))
    return cards.fields([
        (words(gettext_noop("Category")), cards.text(category_words(claim.category))),
        (words(gettext_noop("City")), cards.text(claim.city)),
        (words(gettext_noop("Dates")), cards.text(words(
            ngettext_noop("%(start)s to %(end)s, %(nights)s night", "%(start)s to %(end)s, %(nights)s nights", "nights"), start=claim.start_date.isoformat(),
            end=claim.end_date.isoformat(), nights=claim.nights))),
        (words(gettext_noop("Amount")), cards.amount(claim.amount, claim.currency)),
        (words(gettext_noop("Claimant")), cards.person(claim.claimant.get_full_name() or claim.claimant.username)),
    ])


def _verdict_row(check: dict[str, Any]) -> cards.Row:
    verdict = check.get("verdict") or ""
    pairs = [(words(gettext_noop("Verdict")), cards.text(words(VERDICT_WORDS[verdict]) if verdict in VERDICT_WORDS
                                                        else words(gettext_noop("not checked"))))]
    if check.get("per_night") is not None:
        pairs.append((words(gettext_noop("Claimed a night")), cards.amount(check["per_night"], check.get("currency", ""))))
    if check.get("limit") is not None:
        pairs.append((words(gettext_noop("Limit a night")), cards.line(
            cards.amount(check["limit"], LIMIT_CURRENCY), cards.text(f"({check['unit']})" if check.get("unit") else ""))))
        pairs.append((words(gettext_noop("Rule")), cards.text(words(
            gettext_noop("%(source)s, effective %(effective_from)s"), source=check.get("source", ""),
            effective_from=check.get("effective_from") or "—"))))
    else:
        pairs.append((words(gettext_noop("Finding")), cards.text(check.get("summary") or "—")))
    citation = check.get("citation") or []
    if citation:
        pairs.append((words(gettext_noop("Cited")), cards.items([cards.text(words(
            gettext_noop("[%(source)s line %(line)s] %(text)s"), source=c.get("source", ""), line=c.get("line", ""),
            text=c.get("text", ""))) for c in citation], mark="policy-citation")))
    return cards.fields(pairs, mark="policy-verdict")


def submit_card(approval: Any) -> list[cards.Row]:
    return [cards.arguments_section(approval, {
        "application_id": (words(gettext_noop("Expense claim")), _claim_row(approval)),
        "policy_check": (words(gettext_noop("Travel policy")), _verdict_row(approval.arguments.get("policy_check") or {})),
    })]


def cards_register() -> None:
    cards.card_register("submit_claim", submit_card)
