"""Closing a month (payslips final, the month locked, the bank payment file and the tax
declaration generated, in ONE transaction: a killed worker leaves the month computed or
closed, never half), verifying it (the files read back add up to the payslips), and the
reopen that undoes a close (files void, payslips draft, later months to compute again)."""
from __future__ import annotations

from decimal import Decimal
from typing import Any, NamedTuple

from django.db import transaction
from django.utils import timezone

from config.api import Conflict, Unprocessable

from payroll.models import FileKind, FileStatus, MonthFile, MonthStatus, Payslip, PayslipStatus, PayrollMonth
from payroll.records.calculation import ZERO
from payroll.records.month_files import (
    BankRow,
    TaxRow,
    bank_files,
    bank_file_totals,
    file_checksum,
    tax_declaration,
    tax_declaration_totals,
)

from .bulk import gc_paused
from .state import month_transition

CLOSABLE = (MonthStatus.COMPUTED, MonthStatus.AWAITING_APPROVAL)
TAX_FIELDS = ("cumulative_income", "cumulative_basic_deduction", "cumulative_contributions",
              "cumulative_special_additional_deductions", "cumulative_taxable_income", "quick_deduction",
              "cumulative_tax")


def _d(value: Any) -> Decimal:
    return Decimal(str(value if value not in (None, "") else "0"))


class Slip(NamedTuple):
    """A payslip as the month's files read it: its employee's details and its figures."""

    employee_no: str
    name: str
    bank_account: str
    bank_name: str
    id_type: str
    id_number: str
    gross: Decimal
    net: Decimal
    tax: Decimal
    withholding: dict[str, str]


SLIP_COLUMNS = ("employee__employee_no", "employee__name", "employee__bank_account", "employee__bank_name",
                "employee__id_type", "employee__id_number", "gross", "net", "tax", "withholding")


def bank_rows(payslips: list[Slip]) -> list[BankRow]:
    return [BankRow(employee_no=p.employee_no, name=p.name, bank_account=p.bank_account, bank_name=p.bank_name,
                    amount=p.net) for p in payslips]


def tax_rows(payslips: list[Slip]) -> list[TaxRow]:
    rows = []
    for p in payslips:
        w = p.withholding or {}
        rows.append(TaxRow(
            employee_no=p.employee_no, name=p.name, id_type=p.id_type, id_number=p.id_number, income=p.gross,
            pension=_d(w.get("pension")), medical=_d(w.get("medical")), unemployment=_d(w.get("unemployment")),
            housing_fund=_d(w.get("housing_fund")), rate=_d(w.get("rate")),
            tax_withheld_before=_d(w.get("tax_withheld_before")), tax_this_month=p.tax,
            **{name: _d(w.get(name)) for name in TAX_FIELDS}))
    return rows


def month_files_build(month: PayrollMonth, payslips: list[Slip]) -> list[MonthFile]:
    """The month's three files from its payslips: regenerated from the same payslips, the same bytes."""
    try:
        bank = bank_files(bank_rows(payslips), year=month.year, month=month.month)
        tax = tax_declaration(tax_rows(payslips), year=month.year, month=month.month)
    except ValueError as err:
        raise Unprocessable(f"The month's files cannot be made: {err}", code="month_files_refused") from None
    net = sum((p.net for p in payslips), ZERO)
    withheld = sum((p.tax for p in payslips), ZERO)
    return [MonthFile(month=month, kind=kind, content=data, sha256=file_checksum(data), rows=len(payslips), total=total)
            for kind, data, total in ((FileKind.BANK_CSV, bank["csv"], net), (FileKind.BANK_XLSX, bank["xlsx"], net),
                                      (FileKind.TAX_XLSX, tax, withheld))]


def month_payslips(month_id: int, status: str | None = None) -> list[Slip]:
    """The payslips as the files read them, as plain values: their items stay in the database
    (at 10,000 payslips, loading twenty items each cost more than writing the files), and
    building 10,000 payslip and employee models cost as much as reading their values."""
    found = Payslip.objects.filter(month_id=month_id).order_by("employee__employee_no")
    if status:
        found = found.filter(status=status)
    return [Slip._make(row) for row in found.values_list(*SLIP_COLUMNS)]


@gc_paused()
def month_close(*, month_id: int, by_id: int | None = None, run_id: int | None = None) -> PayrollMonth:
    """Close a computed month: its payslips final, its files written, its status closed. A
    second call (a retried step) finds it closed with its files and changes nothing."""
    with transaction.atomic():
        month = PayrollMonth.objects.select_for_update().get(id=month_id)
        if month.status == MonthStatus.CLOSED:
            return month  # closed by an earlier attempt whose worker died before it said so
        if month.status not in CLOSABLE:
            raise Conflict(f"Only a computed month can close; this one is {month.status}.", code="month_not_computed")
        if month.stale:
            raise Conflict("An earlier month of this group was reopened after this one was computed: compute it "
                           "again before it closes.", code="month_stale")
        earlier = PayrollMonth.objects.filter(group_id=month.group_id, year=month.year, month__lt=month.month
                                              ).exclude(status=MonthStatus.CLOSED).order_by("month").first()
        if earlier is not None:
            # Its tax would read an earlier month's figures that may still change.
            raise Conflict(f"{earlier.year}-{earlier.month:02d} of this group is not closed; close it first.",
                           code="earlier_month_open")
        payslips = month_payslips(month_id, PayslipStatus.DRAFT)
        if not payslips:
            raise Conflict("This month has no payslips to close.", code="month_empty")
        for built in month_files_build(month, payslips):  # three rows of bytes: one INSERT each
            built.save(force_insert=True)
        Payslip.objects.filter(month_id=month_id, status=PayslipStatus.DRAFT).update(status=PayslipStatus.FINAL)
        return month_transition(month_id=month_id, to=MonthStatus.CLOSED, by_id=by_id, run_id=run_id,
                                reason="closed", closed_at=timezone.now(), closed_by_id=by_id)


def current_files(month_id: int) -> dict[str, MonthFile]:
    return {f.kind: f for f in MonthFile.objects.filter(month_id=month_id, status=FileStatus.CURRENT)}


def month_verify(*, month_id: int) -> dict[str, Any]:
    """The files read back against the final payslips: the bank files' payments and total are
    the net pay's, the declaration's lines, income and tax the payslips'. `ok` and each check,
    with both figures, so a failure says what disagreed."""
    payslips = month_payslips(month_id, PayslipStatus.FINAL)
    files = current_files(month_id)
    net, gross = sum((p.net for p in payslips), ZERO), sum((p.gross for p in payslips), ZERO)
    tax = sum((p.tax for p in payslips), ZERO)
    checks: list[dict[str, Any]] = []

    def check(name: str, found: Any, expected: Any) -> None:
        checks.append({"check": name, "file": str(found), "payslips": str(expected), "ok": found == expected})

    for kind, fmt in ((FileKind.BANK_CSV, "csv"), (FileKind.BANK_XLSX, "xlsx")):
        if kind not in files:
            check(f"{kind} exists", False, True)
            continue
        data = bytes(files[kind].content)
        check(f"{kind} checksum", file_checksum(data), files[kind].sha256)
        try:
            totals = bank_file_totals(data, fmt=fmt)
        except ValueError as err:
            check(f"{kind} reads back", str(err), "")
            continue
        check(f"{kind} payments", totals.count, len(payslips))
        check(f"{kind} total = net pay", totals.total, net)
    if FileKind.TAX_XLSX not in files:
        check("tax_xlsx exists", False, True)
    else:
        data = bytes(files[FileKind.TAX_XLSX].content)
        check("tax_xlsx checksum", file_checksum(data), files[FileKind.TAX_XLSX].sha256)
        try:
            declared = tax_declaration_totals(data)
            check("tax_xlsx lines", declared.count, len(payslips))
            check("tax_xlsx income = gross pay", declared.income, gross)
            check("tax_xlsx tax = tax withheld", declared.tax, tax)
        except ValueError as err:
            check("tax_xlsx reads back", str(err), "")
    return {"ok": bool(payslips) and all(c["ok"] for c in checks), "checks": checks, "net": str(net),
            "tax": str(tax), "gross": str(gross), "headcount": len(payslips)}


def later_months(month: PayrollMonth):
    """The group's months after this one (this year's later months and any later year's)."""
    from django.db.models import Q

    return PayrollMonth.objects.filter(group_id=month.group_id).filter(
        Q(year=month.year, month__gt=month.month) | Q(year__gt=month.year))


def month_reopen_apply(*, month_id: int, reason: str, by_id: int | None = None,
                       run_id: int | None = None) -> PayrollMonth:
    """Undo a close (the approved reopen): its files void, its payslips draft, the month
    reopened; the group's later months that are not closed must compute again before they
    close (their tax withheld read this month's figures). A second call changes nothing."""
    with transaction.atomic():
        month = PayrollMonth.objects.select_for_update().get(id=month_id)
        if month.status == MonthStatus.REOPENED:
            return month
        if month.status != MonthStatus.CLOSED:
            raise Conflict(f"Only a closed month can be reopened; this one is {month.status}.",
                           code="month_not_closed")
        MonthFile.objects.filter(month_id=month_id, status=FileStatus.CURRENT).update(status=FileStatus.VOID)
        Payslip.objects.filter(month_id=month_id, status=PayslipStatus.FINAL).update(status=PayslipStatus.DRAFT)
        later_months(month).exclude(status=MonthStatus.CLOSED).update(stale=True)
        return month_transition(month_id=month_id, to=MonthStatus.REOPENED, by_id=by_id, run_id=run_id,
                                reason=reason, reopened_at=timezone.now(), reopened_by_id=by_id,
                                reopen_reason=reason[:2000])
