"""Reads of the month's data, for the payroll month's computation and the pages: the attendance
terms in force on a day, a group's latest monthly inputs, and a year's openings."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

from django.db.models import Count

from payroll.models import AttendanceRules, MonthlyInputRow, MonthlyInputs, YearOpening

# The terms when a tenant saved none: the standard working-hours system and Labour Law art. 44.
DEFAULT_TERMS = {
    "hours_per_day": Decimal("8"),
    "hours_per_week": Decimal("40"),
    "paid_days_per_month": Decimal("21.75"),
    "overtime_workday_rate": Decimal("1.5"),
    "overtime_restday_rate": Decimal("2.0"),
    "overtime_holiday_rate": Decimal("3.0"),
    "absence_deduction_rate": Decimal("1.0"),
    "sick_leave_pay_rate": Decimal("0.8"),
}
TERM_NAMES = tuple(DEFAULT_TERMS)


@dataclass(frozen=True)
class AttendanceTerms:
    """The attendance terms in force. `source` is "default" (the tenant saved none in force by
    then; `effective_from` is None) or the AttendanceRules row's id, as a string."""

    hours_per_day: Decimal
    hours_per_week: Decimal
    paid_days_per_month: Decimal
    overtime_workday_rate: Decimal
    overtime_restday_rate: Decimal
    overtime_holiday_rate: Decimal
    absence_deduction_rate: Decimal
    sick_leave_pay_rate: Decimal
    effective_from: date | None
    source: str

    def hourly_wage(self, monthly_base: Decimal) -> Decimal:
        """Monthly base ÷ paid days ÷ hours a day (21.75 and 8 by default), unrounded: the
        item that pays it rounds, once."""
        return monthly_base / self.paid_days_per_month / self.hours_per_day


def _terms_of(row: AttendanceRules | None) -> AttendanceTerms:
    if row is None:
        return AttendanceTerms(**DEFAULT_TERMS, effective_from=None, source="default")
    return AttendanceTerms(**{name: getattr(row, name) for name in TERM_NAMES},
                           effective_from=row.effective_from, source=str(row.id))


def attendance_terms_on(tenant_id: int, on: date) -> AttendanceTerms:
    """The terms `tenant_id` had in force on `on`: its latest row effective by then, else the defaults."""
    row = AttendanceRules.objects.filter(tenant_id=tenant_id, effective_from__lte=on).order_by(
        "-effective_from").first()
    return _terms_of(row)


def attendance_history(tenant_id: int) -> list[AttendanceRules]:
    """Every change of the tenant's terms, newest effective date first."""
    return list(AttendanceRules.objects.filter(tenant_id=tenant_id).select_related("updated_by")
                .order_by("-effective_from", "-created_at"))


@dataclass(frozen=True)
class InputsVersion:
    """One import of a group's month as the computation reads it: per employee id, each input
    name's figure (absent names were not in the file)."""

    id: int
    version: int
    created_at: datetime
    rows: dict[int, dict[str, Decimal]]
    unknown_columns: tuple[str, ...]


def unknown_columns_of(columns: list[dict]) -> tuple[str, ...]:
    return tuple(c["header"] for c in columns if c.get("read_as") == "unknown")


def inputs_latest(group_id: int, year: int, month: int) -> InputsVersion | None:
    """The group's latest imported version for the month, or None when nothing was imported."""
    found = MonthlyInputs.objects.filter(group_id=group_id, year=year, month=month).order_by("-version").first()
    if found is None:
        return None
    rows = {employee_id: {name: Decimal(figure) for name, figure in values.items()}
            for employee_id, values in MonthlyInputRow.objects.filter(inputs=found).values_list("employee_id", "values")}
    return InputsVersion(id=found.id, version=found.version, created_at=found.created_at, rows=rows,
                         unknown_columns=unknown_columns_of(found.columns))


def inputs_versions(*, tenant_id: int, group_id: int, year: int | None = None,
                    month: int | None = None) -> list[MonthlyInputs]:
    """A group's imports (of one month when given), newest first, each with its row count."""
    found = MonthlyInputs.objects.filter(tenant_id=tenant_id, group_id=group_id)
    if year is not None:
        found = found.filter(year=year)
    if month is not None:
        found = found.filter(month=month)
    return list(found.select_related("uploaded_by").annotate(row_count=Count("rows"))
                .order_by("-year", "-month", "-version"))


def year_openings(tenant_id: int, year: int) -> dict[int, YearOpening]:
    """{employee id: its opening} of the tenant's employees for `year`."""
    return {o.employee_id: o for o in YearOpening.objects.filter(tenant_id=tenant_id, year=year)}


__all__ = ["AttendanceTerms", "InputsVersion", "DEFAULT_TERMS", "TERM_NAMES", "attendance_terms_on",
           "attendance_history", "inputs_latest", "inputs_versions", "year_openings", "unknown_columns_of"]
