"""The payroll month's one transition function (CONVENTIONS 3): the allowed-transition table,
a compare-and-set on the status, and the MonthTransition row, in the caller's transaction."""
from __future__ import annotations

from typing import Any

from django.db import transaction

from payroll.models import MonthStatus, MonthTransition, PayrollMonth

S = MonthStatus
# A computed or waiting month may compute again (new inputs); a rejected close sends it back
# to open (its payslips stay drafts); only a closed month reopens, and a reopened month
# closes again only after it computed again.
ALLOWED: dict[str, frozenset[str]] = {
    S.OPEN: frozenset({S.COMPUTED}),
    S.COMPUTED: frozenset({S.COMPUTED, S.AWAITING_APPROVAL, S.CLOSED, S.OPEN}),
    S.AWAITING_APPROVAL: frozenset({S.COMPUTED, S.CLOSED, S.OPEN}),
    S.CLOSED: frozenset({S.REOPENED}),
    S.REOPENED: frozenset({S.COMPUTED}),
}


class TransitionRefused(Exception):
    """The month is not in a status the change may start from (a lost race, or a wrong request)."""

    def __init__(self, month: PayrollMonth | None, to: str):
        super().__init__(f"{month.status if month else 'missing'} → {to}")
        self.month, self.to = month, to


def month_transition(*, month_id: int, to: str, by_id: int | None = None, run_id: int | None = None,
                     reason: str = "", **fields: Any) -> PayrollMonth:
    """Move the month to `to` (with `fields` set in the same UPDATE) and write the transition
    row. The UPDATE's WHERE holds the status read, so a concurrent change makes it update
    nothing: TransitionRefused, and nothing is written twice."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("month_transition runs inside the caller's transaction")
    month = PayrollMonth.objects.filter(id=month_id).first()
    if month is None or to not in ALLOWED.get(month.status, ()):
        raise TransitionRefused(month, to)
    changed = PayrollMonth.objects.filter(id=month_id, status=month.status).update(status=to, **fields)
    if not changed:
        raise TransitionRefused(month, to)
    MonthTransition.objects.create(month_id=month_id, from_status=month.status, to_status=to, by_id=by_id,
                                   run_id=run_id, reason=reason[:2000])
    month.refresh_from_db()
    return month


REJECTED = "rejected: "  # how a rejection's transition reason starts (the month's page shows the rest)


def month_rejected(*, month_id: int, by_id: int | None, run_id: int | None, why: str) -> PayrollMonth | None:
    """The close's approval was rejected: the month goes back to open with the decider's
    words, its payslips still drafts, so it can be fixed and run again. A month the
    decision no longer concerns (computed again meanwhile by another run) is left as it is."""
    month = PayrollMonth.objects.filter(id=month_id).first()
    if month is None or month.status not in (S.AWAITING_APPROVAL, S.COMPUTED) or month.run_id != run_id:
        return None
    try:
        return month_transition(month_id=month_id, to=S.OPEN, by_id=by_id, run_id=run_id, reason=REJECTED + why)
    except TransitionRefused:
        return None


def month_rejection(month: PayrollMonth) -> dict[str, Any] | None:
    """The rejection that sent an open month back, if that is why it is open: who, when, why."""
    if month.status != S.OPEN:
        return None
    last = MonthTransition.objects.filter(month=month).select_related("by").order_by("-id").first()
    if last is None or last.to_status != S.OPEN or not last.reason.startswith(REJECTED):
        return None
    return {"by": last.by.username if last.by else "", "at": last.created_at.isoformat(),
            "reason": last.reason[len(REJECTED):], "run_id": str(last.run_id) if last.run_id else None}
