"""Starting a payroll month (the month's row and the run that gathers, computes, asks for the
one approval, closes and verifies it) and asking to reopen a closed one (an admin; its own
run and approval). Both answer 202 with the run: the work is the agent's."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from config.api import Conflict, DomainError, Forbidden, NotFound
from tenants.models import Membership, Role
from workflows.blueprints import Door
from workflows.models import RUN_TERMINAL, Run
from workflows.services import run_start

from payroll.models import MonthStatus, PayrollGroup, PayrollMonth
from payroll.records.services.month_inputs import period_checked

MONTH_BLUEPRINT, REOPEN_BLUEPRINT = "payroll_month", "payroll_month_reopen"
MAX_REASON = 2000


@dataclass(frozen=True)
class Started:
    month: PayrollMonth
    run: Run


def month_exists_conflict(month: PayrollMonth) -> Conflict:
    return Conflict(_("This group's month %(year)s-%(month)02d exists already; open it instead.")
                    % {"year": month.year, "month": month.month}, code="month_exists",
                    extra={"id": str(month.id), "run_id": str(month.run_id) if month.run_id else None,
                           "status": month.status})


def month_start(*, membership: Membership, group_id: int, year: Any, month: Any,
                door: str = Door.ENDPOINT, conversation_id: int | None = None) -> Started:
    """One month per group: the month's row and its run, committed together; a second start
    of the same group and month is a 409 naming the first (its id and run), unless that month
    was reopened or its run ended without closing it: then it starts the run that closes it."""
    y, m = period_checked(year, month)
    group = PayrollGroup.objects.filter(id=group_id, tenant_id=membership.tenant_id).first()
    if group is None:
        raise NotFound(_("No payroll group %(id)s in your tenant.") % {"id": group_id}, code="group_not_found",
                       extra={"field": "group"})
    existing = PayrollMonth.objects.filter(group=group, year=y, month=m).first()
    if existing is not None and restartable(existing):
        return _restart(membership, existing, door=door, conversation_id=conversation_id)
    if existing is not None:
        raise month_exists_conflict(existing)
    try:
        with transaction.atomic():
            row = PayrollMonth.objects.create(tenant_id=membership.tenant_id, group=group, year=y, month=m,
                                              created_by_id=membership.user_id)
            run = run_start(membership=membership, blueprint=MONTH_BLUEPRINT, door=door,
                            conversation_id=conversation_id,
                            params={"month_id": str(row.id), "group_name": group.name, "year": y, "month": m})
            PayrollMonth.objects.filter(id=row.id).update(run=run)
            row.run = run
    except IntegrityError:
        # Two starts at once: the unique (group, year, month) let one in; the other answers as a second start.
        raise month_exists_conflict(PayrollMonth.objects.get(group=group, year=y, month=m)) from None
    return Started(row, run)


def restartable(month: PayrollMonth) -> bool:
    """A month a new run may take up: reopened, or not closed and its run ended (a rejected
    approval blocks it, a cancel stops it) — never one a live run still works on. Two runs of
    one month cannot both close it: the close locks the month and checks the approved figures."""
    if month.status == MonthStatus.REOPENED:
        return True
    return month.status != MonthStatus.CLOSED and (month.run_id is None or month.run.status in RUN_TERMINAL)


def _restart(membership: Membership, month: PayrollMonth, *, door: str, conversation_id: int | None) -> Started:
    """A reopened (or abandoned) month closes through a run of its own (the same month, a new run)."""
    with transaction.atomic():
        locked = PayrollMonth.objects.select_for_update().get(id=month.id)
        if not restartable(locked):
            raise month_exists_conflict(locked)
        run = run_start(membership=membership, blueprint=MONTH_BLUEPRINT, door=door, conversation_id=conversation_id,
                        params={"month_id": str(month.id), "group_name": month.group.name, "year": month.year,
                                "month": month.month})
        PayrollMonth.objects.filter(id=month.id).update(run=run)
        locked.run = run
    return Started(locked, run)


def month_reopen(*, membership: Membership, month_id: int, reason: str) -> Run:
    """An admin asks to reopen a closed month: a run whose reopen waits for a second person's
    approval (whoever asks may not decide it)."""
    if membership.role != Role.ADMIN:
        raise Forbidden(_("Only a tenant admin may reopen a closed month."), code="admin_required")
    reason = (reason or "").strip()
    if not reason:
        raise DomainError(_("Say why the month is reopened."), code="reason_required", extra={"field": "reason"})
    if len(reason) > MAX_REASON:
        raise DomainError(_("The reason is longer than %(n)s characters.") % {"n": MAX_REASON},
                          code="reason_too_long", extra={"field": "reason"})
    found = PayrollMonth.objects.filter(id=month_id, tenant_id=membership.tenant_id).first()
    if found is None:
        raise NotFound(_("No payroll month %(id)s in your tenant.") % {"id": month_id}, code="month_not_found")
    if found.status != MonthStatus.CLOSED:
        raise Conflict(_("Only a closed month can be reopened; this one is %(status)s.") % {"status": found.status},
                       code="month_not_closed")
    return run_start(membership=membership, blueprint=REOPEN_BLUEPRINT, door=Door.ENDPOINT,
                     params={"month_id": str(found.id), "reason": reason, "group_name": found.group.name,
                             "year": found.year, "month": found.month})
