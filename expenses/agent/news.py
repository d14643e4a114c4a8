"""What an expense claim run tells the chat (workflows.news), in the reader's language:
what was filed, the travel policy's verdict with the limit it cites (900.00 CNY a night
against the limit of 750 CNY a night, travel-v2), who must approve it and why, and — when
no invoice is attached — a request for one; on completion, that the claim was submitted
(approved by whom). The facts come from the run's own coordinates (create_claim's
`claim_facts`, check_claim_policy's `policy_check`), not from prose.
Registered for blueprint expense_claim in ExpensesConfig.ready()."""
from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django.urls import reverse
from django.utils.translation import gettext_noop

from approvals.models import ApprovalRequest, ApprovalStatus
from config.words import Stored, localised, words
from workflows.models import Run, StateCoordinate
from workflows.news import News, RunNews, either, rejected, then

from expenses.models import ClaimStatus, ExpenseClaim

BLUEPRINT = "expense_claim"

CATEGORY = {"lodging": gettext_noop("lodging"), "meals": gettext_noop("meals"),
            "transport": gettext_noop("transport"), "other": gettext_noop("other")}
# The cities the chat files claims for, by their Chinese name (a name is a name, not a msgid).
CITY_ZH = {"beijing": "北京", "shanghai": "上海", "shenzhen": "深圳", "guangzhou": "广州", "hangzhou": "杭州",
           "chengdu": "成都", "nanjing": "南京", "wuhan": "武汉", "xi'an": "西安", "tianjin": "天津",
           "hong kong": "香港", "singapore": "新加坡"}


def _coordinate(run: Run, key: str) -> Any:
    coordinate = StateCoordinate.objects.filter(run=run, key=key).order_by("-plan_version").first()
    return coordinate.value if coordinate is not None else None


def _money(amount: Any) -> str:
    try:
        return f"{Decimal(str(amount)):,.2f}"
    except (InvalidOperation, ValueError):
        return str(amount)


def _facts(run: Run) -> dict[str, Any]:
    """The claim as filed: create_claim's facts, else the run's params (before it ran)."""
    facts = _coordinate(run, "claim_facts") or {}
    return {**{k: run.params.get(k) for k in ("category", "city", "start_date", "nights", "amount")},
            "currency": run.params.get("currency") or "CNY", **facts}


def _claim(run: Run) -> ExpenseClaim | None:
    claim_id = _coordinate(run, "application_id")
    return ExpenseClaim.objects.filter(id=int(claim_id), tenant_id=run.tenant_id).first() if claim_id else None


def claim_words(facts: dict[str, Any]) -> dict[str, Any]:
    """"lodging claim in Beijing: 1,800.00 CNY for 2 nights from 2026-11-16"."""
    city = str(facts.get("city") or "")
    params = {"category": words(CATEGORY.get(facts.get("category"), CATEGORY["other"])),
              "city": localised(city, CITY_ZH.get(city.lower())), "amount": _money(facts.get("amount")),
              "currency": facts.get("currency") or "CNY", "date": facts.get("start_date") or "",
              "nights": int(facts.get("nights") or 0)}
    if params["nights"] == 1:
        return words(gettext_noop("%(category)s claim in %(city)s: %(amount)s %(currency)s for 1 night from "
                                  "%(date)s"), **params)
    if params["nights"] > 1:
        return words(gettext_noop("%(category)s claim in %(city)s: %(amount)s %(currency)s for %(nights)s nights "
                                  "from %(date)s"), **params)
    return words(gettext_noop("%(category)s claim in %(city)s: %(amount)s %(currency)s on %(date)s"), **params)


def short_words(facts: dict[str, Any]) -> dict[str, Any]:
    """"the expense claim for lodging in Beijing (1,800.00 CNY)"."""
    city = str(facts.get("city") or "")
    return words(gettext_noop("the expense claim for %(category)s in %(city)s (%(amount)s %(currency)s)"),
                 category=words(CATEGORY.get(facts.get("category"), CATEGORY["other"])),
                 city=localised(city, CITY_ZH.get(city.lower())), amount=_money(facts.get("amount")),
                 currency=facts.get("currency") or "CNY")


def verdict_words(check: dict[str, Any] | None) -> dict[str, Any] | None:
    """The policy check's verdict with the limit and the policy version it cites."""
    if not check:
        return None
    cited = {"per_night": _money(check.get("per_night")), "limit": _money(check.get("limit")),
             "currency": check.get("currency") or "CNY", "source": check.get("source") or "",
             "since": check.get("effective_from") or ""}
    if check.get("verdict") == "over_limit":
        return words(gettext_noop("It is over the travel policy: %(per_night)s %(currency)s a night against the "
                                  "limit of %(limit)s %(currency)s a night (%(source)s, in force from %(since)s)."),
                     **cited)
    if check.get("verdict") == "within_limit":
        return words(gettext_noop("It is within the travel policy: %(per_night)s %(currency)s a night against "
                                  "the limit of %(limit)s %(currency)s a night (%(source)s, in force from "
                                  "%(since)s)."), **cited)
    return words(gettext_noop("The travel policy sets no limit it can check this claim against, so an approver "
                              "decides."))


def _invoice_missing(run: Run, claim: ExpenseClaim | None) -> bool:
    if run.params.get("invoice_id"):
        return False
    return not (claim is not None and claim.invoices.exists())


def _claim_link(claim: ExpenseClaim | None) -> dict[str, Any]:
    if claim is None:
        return {}
    return {"href": reverse("expenses-claim", args=[claim.id]), "label": words(gettext_noop("Open the claim"))}


def _sentences(*parts: Stored | None) -> Stored:
    told = [p for p in parts if p]
    said = told[0]
    for part in told[1:]:
        said = then(said, part)
    return said


ASK_INVOICE = gettext_noop("No invoice is attached yet: please add it on the claim's page (PDF, PNG or JPEG, at "
                           "most 5 MB).")


def expense_news(item: RunNews) -> News | None:
    run, facts = item.run, _facts(item.run)
    if item.kind == "approval.requested":
        claim = _claim(run)
        filed = words(gettext_noop("I drafted your %(claim)s."), claim=claim_words(facts))
        who = words(gettext_noop("%(who)s must approve it before it is submitted."), who=either(item.approvers))
        ask = words(ASK_INVOICE) if _invoice_missing(run, claim) else None
        return News(_sentences(filed, verdict_words(_coordinate(run, "policy_check")), who, ask),
                    link=_claim_link(claim))
    if item.kind == "approval.rejected":
        what = words(gettext_noop("your %(claim)s"), claim=claim_words(facts))
        return News(then(rejected(item, what), words(gettext_noop("The claim was not submitted: it stays a draft."))))
    if item.kind == "run.completed":
        claim = _claim(run)
        approval = (ApprovalRequest.objects.filter(run=run, status=ApprovalStatus.APPROVED)
                    .select_related("decided_by").order_by("-decided_at").first())
        by = approval.decided_by if approval and approval.decided_by_id else None
        status = claim.status if claim else ClaimStatus.SUBMITTED
        what = short_words(facts)
        if status == ClaimStatus.APPROVED:
            done = words(gettext_noop("%(what)s was approved"), what=what)
        elif by is not None:
            done = words(gettext_noop("%(what)s was approved by %(by)s and submitted"), what=what,
                         by=by.get_full_name() or by.username)
        else:
            done = words(gettext_noop("%(what)s was submitted"), what=what)
        verdict = verdict_words(_coordinate(run, "policy_check")) if by is None else None
        ask = words(ASK_INVOICE) if _invoice_missing(run, claim) else None
        return News(_sentences(words(gettext_noop("Done: %(what)s."), what=done), verdict, ask),
                    link=_claim_link(claim))
    what = short_words(facts)
    if item.kind == "run.rolled_back":
        return News(words(gettext_noop("Filing %(what)s failed, so I withdrew what had been submitted. Why: "
                                       "%(reason)s."), what=what, reason=item.reason))
    if item.kind == "run.failed":
        return News(words(gettext_noop("Filing %(what)s failed: %(reason)s. You can retry it from the run panel."),
                          what=what, reason=item.reason))
    if item.kind in ("run.blocked", "run.stopped"):
        return News(words(gettext_noop("Filing %(what)s stopped: %(reason)s."), what=what, reason=item.reason))
    return None  # a replanned claim: the generic words
