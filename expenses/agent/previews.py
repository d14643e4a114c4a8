"""What the generic apps need to know about the expense tools: when submitting needs an
approver (a predicate on the exact policy verdict, not the model's say-so), the card that
cites the policy lines, the preconditions re-checked at decision time, how arguments
read on the card, and how many claims a create wrote."""
from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop, ngettext

from config.words import words, words_render
from workflows.tools import Preview

from expenses.models import ClaimStatus, ClaimTransition, ExpenseClaim, IdempotencyRecord, PolicyVerdict
from expenses.records.selectors import claims_created_under


def submit_needs_approval(tenant_id: int, arguments: dict[str, Any]) -> bool:
    """Only a claim the policy check did not find within the limit waits for an approver."""
    return (arguments.get("policy_check") or {}).get("verdict") != PolicyVerdict.WITHIN


def claim_of(tenant_id: int, arguments: dict[str, Any]) -> ExpenseClaim | None:
    value = str(arguments.get("application_id", ""))
    return ExpenseClaim.objects.filter(tenant_id=tenant_id, id=int(value)).first() if value.isdigit() else None


def _citation_words(check: dict[str, Any]) -> str:
    return " ".join(_("[%(source)s line %(line)s] %(text)s") % {"source": c["source"], "line": c["line"], "text": c["text"]}
                    for c in check.get("citation") or [])


CATEGORY_WORDS = {"lodging": gettext_noop("lodging"), "meals": gettext_noop("meals"),
                  "transport": gettext_noop("transport"), "other": gettext_noop("other")}


def category_words(category: str) -> Any:
    return words(CATEGORY_WORDS[category]) if category in CATEGORY_WORDS else category


def submit_summary_words(tenant_id: int, arguments: dict[str, Any]) -> dict[str, Any]:
    """The card's sentence as meaning: the claim, and why it waits for an approver (the cited limit)."""
    claim = claim_of(tenant_id, arguments)
    check = arguments.get("policy_check") or {}
    if claim is None:
        what = words(gettext_noop("expense claim"))
    else:
        params = {"category": category_words(claim.category), "city": claim.city,
                  "amount": f"{claim.amount:,.2f}", "currency": claim.currency, "nights": claim.nights}
        if not claim.nights:
            what = words(gettext_noop("%(category)s claim in %(city)s: %(amount)s %(currency)s"), **params)
        elif claim.nights == 1:
            what = words(gettext_noop("%(category)s claim in %(city)s: %(amount)s %(currency)s for %(nights)s night"),
                         **params)
        else:
            what = words(gettext_noop("%(category)s claim in %(city)s: %(amount)s %(currency)s for %(nights)s "
                                      "nights"), **params)
    if check.get("verdict") == PolicyVerdict.OVER:
        why = words(gettext_noop("%(per_night)s a night is over the limit of %(limit)s %(unit)s (%(source)s, effective "
                                 "%(effective_from)s)"),
                    **{k: check.get(k, "") for k in ("per_night", "limit", "unit", "source", "effective_from")})
    else:
        why = words(gettext_noop("the policy check found no limit that covers it (%(summary)s)"),
                    summary=check.get("summary") or words(gettext_noop("not checked")))
    return words(gettext_noop("Submit the %(what)s — %(why)s."), what=what, why=why)


def submit_summary(tenant_id: int, arguments: dict[str, Any], diff: dict[str, Any] | None = None) -> str:
    """An approval stored before its summary was words: worded for the reader now."""
    return words_render(submit_summary_words(tenant_id, arguments))


def submit_preview(tenant_id: int, arguments: dict[str, Any], params: dict[str, Any]) -> Preview:
    check = arguments.get("policy_check") or {}
    # measures: the size the approval matrix may compare (its thresholds are per tool).
    return Preview(summary=submit_summary_words(tenant_id, arguments), diff=None,
                   measures={"amount": check.get("amount"), "currency": check.get("currency"),
                             "per_night": check.get("per_night"), "limit": check.get("limit")})


def submit_preconditions(tenant_id: int, run_id: int, arguments: dict[str, Any]) -> str:
    """The claim the approver read about is still the draft it was."""
    claim = claim_of(tenant_id, arguments)
    check = arguments.get("policy_check") or {}
    if claim is None:
        return "the claim no longer exists"
    if claim.status != ClaimStatus.DRAFT:
        return f"the claim is {claim.status} now, not a draft"
    if str(claim.amount) != str(check.get("amount")) or claim.nights != check.get("nights"):
        return "the claim's amount or nights changed after the policy check"
    return ""


def submit_argument(tenant_id: int, name: str, value: Any) -> tuple[str, str]:
    if name == "application_id":
        claim = ExpenseClaim.objects.filter(tenant_id=tenant_id, id=int(value)).first() if str(value).isdigit() else None
        if claim is None:
            return _("Expense claim"), _("unknown claim")
        return _("Expense claim"), (ngettext("%(category)s in %(city)s, %(start)s + %(nights)s night, %(amount)s %(currency)s "
                                             "by %(claimant)s", "%(category)s in %(city)s, %(start)s + %(nights)s nights, "
                                             "%(amount)s %(currency)s by %(claimant)s", claim.nights)
                                    % {"category": claim.get_category_display(), "city": claim.city,
                                       "start": claim.start_date, "nights": claim.nights,
                                       "amount": f"{claim.amount:,.2f}", "currency": claim.currency,
                                       "claimant": claim.claimant.get_full_name() or claim.claimant.username})
    if name == "policy_check" and isinstance(value, dict):
        if value.get("limit"):
            return _("Travel policy"), (_("limit %(limit)s %(unit)s (%(source)s, effective %(effective_from)s); "
                                          "claimed %(per_night)s a night.")
                                        % {k: value.get(k, "") for k in ("limit", "unit", "source", "effective_from",
                                                                          "per_night")}
                                        + " " + _citation_words(value)).strip()
        return _("Travel policy"), value.get("summary") or _("no limit found")
    return name.replace("_", " ").capitalize(), str(value)


def claim_effects(tenant_id: int, keys: list[str]) -> dict[str, int]:
    return claims_created_under(tenant_id, keys)


def submit_effects(tenant_id: int, keys: list[str]) -> dict[str, int]:
    """How many times the claim each submit key names was moved to submitted (more than once
    would be a duplicate side effect after the approval resumed the run)."""
    claims = {r.key: r.body.get("application_id") for r in IdempotencyRecord.objects.filter(
        tenant_id=tenant_id, operation="claim_submit", key__in=keys)}
    return {key: ClaimTransition.objects.filter(claim_id=int(claim), to_status=ClaimStatus.SUBMITTED).count()
            for key, claim in claims.items() if claim}
