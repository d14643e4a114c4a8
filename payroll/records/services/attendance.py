"""A tenant's attendance rules: the working-hours system and the overtime, absence and sick-leave
terms its months compute with. Only a tenant admin changes them; each change is a new row from
its effective date, so a month computed again reads the terms that were in force."""
from __future__ import annotations

import logging
from datetime import date
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from config.api import Conflict, DomainError, Forbidden, Unprocessable
from tenants.actors import Actor
from tenants.models import Role

from payroll.models import AttendanceRules
from payroll.records.month_inputs import TERM_NAMES, attendance_terms_on

log = logging.getLogger(__name__)

# (lowest, highest) each term may be. The overtime floors are Labour Law art. 44's: a contract
# may pay more, never less. Absence deducts at most a day's wage per day; sick pay is a share.
TERM_BOUNDS: dict[str, tuple[Decimal, Decimal]] = {
    "hours_per_day": (Decimal("1"), Decimal("12")),
    "hours_per_week": (Decimal("1"), Decimal("60")),
    "paid_days_per_month": (Decimal("15"), Decimal("31")),
    "overtime_workday_rate": (Decimal("1.5"), Decimal("10")),
    "overtime_restday_rate": (Decimal("2"), Decimal("10")),
    "overtime_holiday_rate": (Decimal("3"), Decimal("10")),
    "absence_deduction_rate": (Decimal("0"), Decimal("1")),
    "sick_leave_pay_rate": (Decimal("0"), Decimal("1")),
}
EARLIEST, LATEST = date(2000, 1, 1), date(2100, 12, 31)


def attendance_rules_may_change(role: str | None) -> bool:
    return role == Role.ADMIN


def attendance_terms_checked(terms: dict[str, Any]) -> dict[str, Decimal]:
    """The terms given, each a Decimal within its bounds; a refusal names the field."""
    unknown = sorted(set(terms) - set(TERM_NAMES))
    if unknown:
        raise DomainError(_("Unknown attendance term: %(names)s.") % {"names": ", ".join(unknown)},
                          code="invalid", extra={"field": unknown[0]})
    checked: dict[str, Decimal] = {}
    for name, value in terms.items():
        low, high = TERM_BOUNDS[name]
        try:
            figure = value if isinstance(value, Decimal) else Decimal(str(value).strip())
        except ArithmeticError:
            figure = None
        if figure is None or not figure.is_finite() or figure.as_tuple().exponent < -4:
            raise DomainError(_("%(field)s: “%(value)s” is not a number with at most four decimals.")
                              % {"field": name, "value": str(value)[:40]}, code="invalid", extra={"field": name})
        if not low <= figure <= high:
            raise Unprocessable(_("%(field)s must be between %(low)s and %(high)s; %(value)s is refused.")
                                % {"field": name, "low": low, "high": high, "value": figure},
                                code="attendance_term_out_of_range", extra={"field": name})
        checked[name] = figure
    return checked


def _date_taken(effective_from: date) -> Conflict:
    return Conflict(_("Attendance rules from %(date)s are already saved; a change takes effect on a later date.")
                    % {"date": effective_from.isoformat()}, code="attendance_rules_exist",
                    extra={"field": "effective_from"})


def attendance_rules_set(*, actor: Actor, effective_from: date, terms: dict[str, Any], note: str = "") -> tuple[AttendanceRules, bool]:
    """Save the tenant's attendance terms from `effective_from` on (a tenant admin only): a new
    row, the terms not given carried over from those in force that day. Returns (row, created).
    The same terms submitted again for the same date answer the saved row; different terms for
    a date already saved are a 409 (the history is never rewritten: choose another date)."""
    if not attendance_rules_may_change(actor.role):
        raise Forbidden(_("Only a tenant admin may change the attendance rules."), code="admin_required")
    if not isinstance(effective_from, date) or not EARLIEST <= effective_from <= LATEST:
        raise DomainError(_("effective_from must be a date between 2000-01-01 and 2100-12-31."), code="invalid",
                          extra={"field": "effective_from"})
    given = attendance_terms_checked(terms)
    in_force = attendance_terms_on(actor.tenant_id, effective_from)
    wanted = {name: given.get(name, getattr(in_force, name)) for name in TERM_NAMES}
    if wanted["hours_per_day"] * 5 > wanted["hours_per_week"] + Decimal("20"):
        raise Unprocessable(_("hours_per_day × 5 days may not exceed hours_per_week by more than 20 hours."),
                            code="attendance_term_out_of_range", extra={"field": "hours_per_day"})
    note = (note or "").strip()[:2000]
    existing = AttendanceRules.objects.filter(tenant_id=actor.tenant_id, effective_from=effective_from).first()
    if existing is not None:
        if all(getattr(existing, name) == value for name, value in wanted.items()):
            return existing, False
        raise _date_taken(effective_from)
    try:
        with transaction.atomic():
            row = AttendanceRules.objects.create(tenant_id=actor.tenant_id, effective_from=effective_from, note=note,
                                                 updated_by_id=actor.user_id, **wanted)
    except IntegrityError:
        # Another admin saved the same date a moment ago: theirs stands, as a second submit would.
        raise _date_taken(effective_from) from None
    log.info("attendance rules of tenant %s from %s saved by user %s", actor.tenant_id, effective_from, actor.user_id)
    return row, True
