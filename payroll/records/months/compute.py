"""A month's payslips: every employee of the group, the group's own items through the one
evaluator, under the city's rules and the tenant's attendance terms in force on the month's
first day, with the latest imported inputs; income tax withheld cumulatively from the year's
closed months (and a previous system's year-to-date opening, when imported).

Two halves: `month_figures` computes (no writes), `month_compute` writes the payslips,
replacing the drafts in one transaction, so a killed worker leaves the old set or the new
one, never two; it writes each payslip as it is computed (`figures_computing`)."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

import orjson
from django.db import connection, models, transaction
from django.db.models import Count, Sum
from django.utils import timezone
from psycopg.types.json import Jsonb

from config.api import Conflict

from payroll.models import (
    Employee,
    EmployeePay,
    MonthStatus,
    Payslip,
    PayslipStatus,
    PayrollMonth,
)
from payroll.records import evaluator
from payroll.records.calculation import ZERO, EmployeeInput, YearToDate
from payroll.records.month_inputs import AttendanceTerms, InputsVersion, attendance_terms_on, inputs_latest, year_openings
from payroll.records.trial import group_structure, items_json, rules_for

from .bulk import gc_paused
from .state import month_transition

CONTRIBUTION_KINDS = ("pension", "medical", "unemployment", "housing_fund")  # the declaration's special deductions


@dataclass
class Computed:
    """One employee's month, as a payslip stores it."""

    employee_id: int
    result: evaluator.EvaluatedMonth
    inputs: dict[str, str]
    withholding: dict[str, str]


@dataclass
class Figures:
    payslips: list[Computed] = field(default_factory=list)
    no_pay: list[dict[str, str]] = field(default_factory=list)  # employees with no salary: not computed
    missing_input_rows: list[str] = field(default_factory=list)  # employee numbers with no inputs row
    opening: dict[str, Any] = field(default_factory=dict)


def _money(value: Decimal) -> str:
    return str(value)


def withholding_json(income: Any, last: Any, result: evaluator.EvaluatedMonth) -> dict[str, str]:
    """The cumulative figures the tax declaration reports, and the month's special deductions by kind."""
    by_kind = {kind: ZERO for kind in CONTRIBUTION_KINDS}
    for item in result.items:
        if item.side == "employee" and item.rule_kind in by_kind and not item.merged_into:
            by_kind[item.rule_kind] += item.amount
    out = {kind: _money(amount) for kind, amount in by_kind.items()}
    if last is None:
        return out
    out.update({"income": _money(income.gross), "contributions": _money(income.employee_contributions),
                "special_additional_deductions": _money(income.special_additional_deductions),
                "months_employed": str(last.month),
                "cumulative_income": _money(last.income_cumulative),
                "cumulative_basic_deduction": _money(last.basic_deduction_cumulative),
                "cumulative_contributions": _money(last.contributions_cumulative),
                "cumulative_special_additional_deductions": _money(last.special_additional_deductions_cumulative),
                "cumulative_taxable_income": _money(last.taxable_cumulative), "rate": str(last.rate),
                "quick_deduction": _money(last.quick_deduction), "cumulative_tax": _money(last.tax_cumulative),
                "tax_withheld_before": _money(last.withheld_before), "tax_this_month": _money(last.tax)})
    return out


def year_to_date(month: PayrollMonth, employee_ids: list[int]) -> tuple[dict[int, YearToDate], dict[str, Any]]:
    """Per employee, what the year held before this month: the previous system's opening (if
    imported) plus this group's closed months of the year before this one (final payslips).
    And what that means, for the card: which source, and what an employee with neither is taken as."""
    openings = year_openings(month.tenant_id, month.year)
    closed = (Payslip.objects.filter(employee_id__in=employee_ids, status=PayslipStatus.FINAL,
                                     month__year=month.year, month__month__lt=month.month,
                                     month__status=MonthStatus.CLOSED)
              .values("employee_id").annotate(n=Count("id"), gross=Sum("gross"), tax=Sum("tax")))
    sums = {row["employee_id"]: row for row in closed}
    detail: dict[int, dict[str, Decimal]] = defaultdict(lambda: {"contributions": ZERO, "deductions": ZERO})
    for slip in Payslip.objects.filter(employee_id__in=list(sums), status=PayslipStatus.FINAL, month__year=month.year,
                                       month__month__lt=month.month, month__status=MonthStatus.CLOSED
                                       ).only("employee_id", "withholding", "employee_contributions"):
        detail[slip.employee_id]["contributions"] += Decimal(slip.withholding.get("contributions")
                                                             or slip.employee_contributions)
        detail[slip.employee_id]["deductions"] += Decimal(slip.withholding.get("special_additional_deductions") or 0)
    out: dict[int, YearToDate] = {}
    for eid in employee_ids:
        opening, before = openings.get(eid), sums.get(eid)
        if opening is None and before is None:
            continue
        out[eid] = YearToDate(
            months_employed=(opening.months_employed if opening else 0) + (before["n"] if before else 0),
            income=(opening.cumulative_income if opening else ZERO) + (before["gross"] if before else ZERO),
            contributions=(opening.cumulative_contributions if opening else ZERO) + detail[eid]["contributions"],
            special_additional_deductions=(opening.cumulative_special_additional_deductions if opening else ZERO)
            + detail[eid]["deductions"],
            tax_withheld=(opening.cumulative_tax_withheld if opening else ZERO) + (before["tax"] if before else ZERO))
    with_opening = sorted(e for e in employee_ids if e in openings)
    with_closed = sorted(e for e in employee_ids if e in sums)
    fresh = [e for e in employee_ids if e not in out]
    summary = {"year_openings": len(with_opening), "closed_months_employees": len(with_closed),
               "assumed_joined": len(fresh), "employees": len(employee_ids),
               "openings": [{"employee_id": str(e), "months_employed": openings[e].months_employed,
                             "income": str(openings[e].cumulative_income),
                             "tax_withheld": str(openings[e].cumulative_tax_withheld),
                             "source": openings[e].source} for e in with_opening[:20]]}
    return out, summary


def pays_on(group_id: int, on: date) -> dict[int, dict[str, Any]]:
    """{employee id: the pay in force on `on`} for the group's employees in one query, as
    Employee.pay_on chooses it (the latest effective by then; the newest written wins a tie),
    as plain values: building 10,000 employees and their pay history as models was most of
    a compute's reading."""
    rows = (EmployeePay.objects.filter(employee__group_id=group_id, effective_from__lte=on)
            .order_by("employee_id", "-effective_from", "-created_at").distinct("employee_id")
            .values_list("employee_id", "base_salary", "allowances", "special_additional_deductions"))
    return {eid: {"base_salary": Decimal(base),
                  "allowances": {k: Decimal(str(v)) for k, v in (allowances or {}).items()},
                  "special_additional_deductions": Decimal(deductions or 0)}
            for eid, base, allowances, deductions in rows}


def pay_of_base(base_salary: Decimal | None) -> dict[str, Any] | None:
    """An employee with no pay history is paid the base salary on their record, when it is set."""
    if not base_salary or base_salary <= 0:
        return None
    return {"base_salary": Decimal(base_salary), "allowances": {}, "special_additional_deductions": ZERO}


def month_figures(month: PayrollMonth, *, terms: AttendanceTerms | None = None,
                  inputs: InputsVersion | None = None) -> Figures:
    """Every employee's payslip figures for `month`; nothing written."""
    figures, computing = figures_computing(month, terms=terms, inputs=inputs)
    figures.payslips.extend(computing)
    return figures


def figures_computing(month: PayrollMonth, *, terms: AttendanceTerms | None = None,
                      inputs: InputsVersion | None = None) -> tuple[Figures, Iterator[Computed]]:
    """`month_figures` in two steps: everything is read now, and each employee is computed as
    the iterator reaches them, with no query (so that month_compute can pass each payslip to
    its COPY as it comes: a COPY holds the connection). The iterator notes the employees with
    no pay and those with no inputs row in the Figures; it leaves their `payslips` to the caller."""
    group = month.group
    first_day = date(month.year, month.month, 1)
    structure = group_structure(group)
    rules = rules_for(group.template.region if group.template_id else "", month.year, month.month, city=group.city)
    terms = terms or attendance_terms_on(month.tenant_id, first_day)
    rows = inputs.rows if inputs is not None else {}
    employees = list(Employee.objects.filter(group=group).order_by("employee_no")
                     .values_list("id", "employee_no", "name", "base_salary"))
    pays = pays_on(group.id, first_day)
    openings, summary = year_to_date(month, [e[0] for e in employees])
    figures = Figures(opening=summary)

    def computing() -> Iterator[Computed]:
        for employee_id, employee_no, name, base_salary in employees:
            pay = pays.get(employee_id) or pay_of_base(base_salary)
            if pay is None:
                figures.no_pay.append({"employee_no": employee_no, "name": name})
                continue
            given = rows.get(employee_id)
            if given is None and structure.inputs:
                figures.missing_input_rows.append(employee_no)
            year = evaluator._Year(opening=openings.get(employee_id))
            person = EmployeeInput(employee_no=employee_no, base_salary=pay["base_salary"],
                                   allowances=pay["allowances"],
                                   special_additional_deductions=pay["special_additional_deductions"])
            result = evaluator.month_evaluate(structure, person, rules, month.month, given or {}, year, terms)
            yield Computed(employee_id=employee_id, result=result,
                           inputs={name: str(value) for name, value in (given or {}).items()},
                           withholding=withholding_json(year.incomes[-1] if year.incomes else None, year.last,
                                                        result))

    return figures, computing()


def totals_of(computed: list[Computed]) -> dict[str, str]:
    def total(get) -> str:
        return str(sum((get(c.result) for c in computed), ZERO))

    return {"gross": total(lambda r: r.gross), "employer_cost": total(lambda r: r.employer_cost),
            "employee_contributions": total(lambda r: r.contributions.employee),
            "employer_contributions": total(lambda r: r.contributions.employer),
            "tax": total(lambda r: r.tax), "net": total(lambda r: r.net), "headcount": len(computed)}


def payslip_row(month_id: int, c: Computed) -> dict[str, Any]:
    """One draft payslip's columns (by attribute name; the others take their defaults)."""
    r = c.result
    return {"month_id": month_id, "employee_id": c.employee_id, "status": PayslipStatus.DRAFT, "items": items_json(r),
            "inputs": c.inputs, "missing_inputs": list(r.missing_inputs), "gross": r.gross,
            "employee_contributions": r.contributions.employee, "employer_contributions": r.contributions.employer,
            "tax": r.tax, "net": r.net, "employer_cost": r.employer_cost, "taxable_cumulative": r.taxable_cumulative,
            "tax_cumulative": Decimal(c.withholding.get("cumulative_tax") or 0), "withholding": c.withholding}


def payslips_write(rows: Iterable[dict[str, Any]]) -> None:
    """Insert the payslips with COPY, in the caller's transaction, each row as `rows` gives it.
    bulk_create binds every column of every row client-side (each JSON text escaped by a
    regular expression): for 10,000 payslips of twenty items that was most of a close; COPY
    streams the rows as they are, from plain values (10,000 Payslip models cost as much again)."""
    fields = list(Payslip._meta.concrete_fields)
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    now = timezone.now()
    # A payslip's columns are plain values (ids, text, a time, amounts quantized to the cent
    # by the evaluator) that psycopg writes as they are: Django's per-value preparation was
    # half of the write. JSON goes as jsonb, dumped by orjson, three times as fast as the
    # standard library's: PostgreSQL stores the same jsonb from either text (its amounts are
    # strings; orjson refuses a Decimal as json does).
    prepare = [(f.attname, f, (lambda value: None if value is None else Jsonb(value, dumps=orjson.dumps))
                if isinstance(f, models.JSONField) else (lambda value: value)) for f in fields]
    with connection.cursor() as cursor:
        with cursor.cursor.copy(f"COPY {Payslip._meta.db_table} ({columns}) FROM STDIN") as copy:
            for row in rows:
                row.setdefault("created_at", now)
                copy.write_row([to_db(row[name] if name in row else field.get_default())
                                for name, field, to_db in prepare])


def terms_json(terms: AttendanceTerms) -> dict[str, str]:
    return {"source": terms.source, "effective_from": terms.effective_from.isoformat() if terms.effective_from else "",
            **{name: str(getattr(terms, name)) for name in ("hours_per_day", "paid_days_per_month",
                                                             "overtime_workday_rate", "overtime_restday_rate",
                                                             "overtime_holiday_rate", "absence_deduction_rate",
                                                             "sick_leave_pay_rate")}}


@gc_paused()
def month_compute(*, month_id: int, by_id: int | None = None, run_id: int | None = None) -> PayrollMonth:
    """Compute (or compute again) every payslip of an open, computed, waiting or reopened month:
    the drafts are replaced in one transaction with the month's new totals and status."""
    month = PayrollMonth.objects.select_related("group", "group__template").get(id=month_id)
    if month.status == MonthStatus.CLOSED:
        raise Conflict("This month is closed: reopen it (an admin, approved) before computing it again.",
                       code="month_closed")
    terms = attendance_terms_on(month.tenant_id, date(month.year, month.month, 1))
    inputs = inputs_latest(month.group_id, month.year, month.month)
    with transaction.atomic():
        # The row lock orders two computes of one month: the second waits, then computes and
        # replaces the first's drafts.
        locked = PayrollMonth.objects.select_for_update().get(id=month_id)
        if locked.status == MonthStatus.CLOSED:
            raise Conflict("This month closed while this compute waited for it; nothing was changed.",
                           code="month_closed")
        Payslip.objects.filter(month_id=month_id).exclude(status=PayslipStatus.FINAL).delete()
        figures, computing = figures_computing(month, terms=terms, inputs=inputs)

        def rows() -> Iterator[dict[str, Any]]:
            for computed in computing:
                figures.payslips.append(computed)
                yield payslip_row(month_id, computed)

        # Each payslip goes to the COPY as soon as it is computed: PostgreSQL stores it (on
        # another core, or its own machine) while the next is computed, not all after the last.
        payslips_write(rows())
        opening = {**figures.opening, "no_pay": figures.no_pay, "missing_input_rows": figures.missing_input_rows,
                   "unknown_columns": list(inputs.unknown_columns) if inputs else [],
                   "inputs_version": inputs.version if inputs else None}
        return month_transition(month_id=month_id, to=MonthStatus.COMPUTED, by_id=by_id, run_id=run_id,
                                reason="computed", totals=totals_of(figures.payslips), opening=opening,
                                attendance=terms_json(terms), inputs_id=inputs.id if inputs else None,
                                stale=False, computed_at=timezone.now())
