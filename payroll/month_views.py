"""The payroll month as people see it: the group page's "Run a month" (it starts the month's
workflow, payroll.records.months.month_start, the service the API and the chat call too), the
month page (status, inputs version, totals, payslips, the files with their checksums, an
admin's reopen) kept live by the conversation's event stream as the run page is, and a
payslip of the month (every item with its formula and inputs, printable, ID and account
masked for whoever may not read them). Another tenant's month is a 404."""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone, translation
from django.utils.translation import gettext, gettext_lazy as _
from django.views.decorators.http import require_GET, require_POST

from config.api import DomainError
from tenants.models import Membership, Role
from tenants.selectors import membership_for_user

from .models import FileKind, FileStatus, MonthFile, Payslip, PayrollMonth
from .records import selectors
from .records.calculation import percent_text
from .records.masking import sensitive_visible, shown
from .records.months import month_reopen, month_start
from .records.months.reads import month_watched_conversation

# Each month status in the console's one set of status colours (UI.md).
STATUS_COLOUR = {"open": "pending", "computed": "ready", "awaiting_approval": "awaiting_approval",
                 "closed": "completed", "reopened": "rolled_back"}
INPUT_LABELS = {"personal_leave_days": _("Personal leave days"), "sick_leave_days": _("Sick leave days"),
                "overtime_workday_hours": _("Workday overtime hours"),
                "overtime_restday_hours": _("Rest-day overtime hours"),
                "overtime_holiday_hours": _("Holiday overtime hours"), "sales_amount": _("Sales amount"),
                "other_amount": _("Other amount")}
TOTALS = (("gross", _("Gross")), ("employer_cost", _("Employer cost")),
          ("employee_contributions", _("Employee contributions")),
          ("employer_contributions", _("Employer contributions")), ("tax", _("Income tax")), ("net", _("Net pay")))
FILE_FORMATS = {FileKind.BANK_CSV: ("csv", "text/csv; charset=utf-8"),
                FileKind.BANK_XLSX: ("xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
                FileKind.TAX_XLSX: ("xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")}
YEARS_BACK, YEARS_AHEAD = 1, 1


def _month_for(membership: Membership, month_id: int) -> PayrollMonth:
    found = (PayrollMonth.objects.select_related("group", "group__template", "run", "inputs", "closed_by",
                                                 "reopened_by")
             .filter(id=month_id, tenant_id=membership.tenant_id).first())
    if found is None:
        raise Http404  # another tenant's month and a missing one answer the same
    return found


def months_of_group(group_id: int) -> list[PayrollMonth]:
    return list(PayrollMonth.objects.filter(group_id=group_id).select_related("run").order_by("-year", "-month"))


def period_choices(today=None) -> dict[str, Any]:
    """The year/month picker: this payroll year (the calendar year) and its neighbours, this month chosen."""
    today = today or timezone.localdate()
    return {"years": list(range(today.year - YEARS_BACK, today.year + YEARS_AHEAD + 1)), "this_year": today.year,
            "months": list(range(1, 13)), "this_month": today.month}


@login_required
@require_POST
def month_start_view(request: HttpRequest, group_id: int) -> HttpResponse:
    """The group page's "Run a month": the month's workflow starts and its page opens; a month
    that exists already opens instead, with the reason."""
    membership = membership_for_user(request.user)
    group = selectors.group_get(membership.tenant_id, group_id)
    try:
        started = month_start(membership=membership, group_id=group.id, year=request.POST.get("year"),
                              month=request.POST.get("month"))
    except DomainError as err:
        existing = (err.extra or {}).get("id") if err.code == "month_exists" else None
        messages.error(request, err.message)
        return redirect("payroll-month", int(existing)) if existing else redirect("payroll-group", group.id)
    messages.success(request, gettext("The payroll of %(year)s-%(month)02d has started: Keel gathers the inputs, "
                                      "computes every payslip and asks an approver before it closes.")
                     % {"year": started.month.year, "month": started.month.month})
    return redirect("payroll-month", started.month.id)


def _money(value: Any) -> Decimal:
    return Decimal(str(value if value not in (None, "") else "0"))


def month_context(membership: Membership, month: PayrollMonth) -> dict[str, Any]:
    """Everything the month page shows, read fresh (the live part re-renders from it)."""
    slips = list(Payslip.objects.filter(month=month).select_related("employee").order_by("employee__employee_no"))
    totals = month.totals or {}
    files = list(MonthFile.objects.filter(month=month).defer("content").order_by("status", "kind", "-created_at"))
    sums = {name: sum((getattr(s, name) for s in slips), Decimal("0"))
            for name in ("gross", "employee_contributions", "employer_contributions", "tax", "net", "employer_cost")}
    return {
        "month": month, "group": month.group, "status_colour": STATUS_COLOUR.get(month.status, "pending"),
        "run": month.run, "run_status": month.run.status if month.run_id else "",
        "totals": [{"key": key, "label": label, "amount": _money(totals.get(key))} for key, label in TOTALS
                   if key in totals],
        "headcount": totals.get("headcount"), "payslips": slips, "payslip_sums": sums,
        "current_files": [f for f in files if f.status == FileStatus.CURRENT],
        "void_files": [f for f in files if f.status == FileStatus.VOID],
        "opening": month.opening or {}, "inputs_version": month.inputs.version if month.inputs_id else None,
        "may_reopen": membership.role == Role.ADMIN and month.status == "closed",
        "conversation_id": month_watched_conversation(month)[0],
    }


@login_required
@require_GET
def month_page(request: HttpRequest, month_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    month = _month_for(membership, month_id)
    context = month_context(membership, month)
    return render(request, "payroll/month.html", {**context, "last_seq": month_watched_conversation(month)[1]})


@login_required
@require_GET
def month_live_fragment(request: HttpRequest, month_id: int) -> HttpResponse:
    """The month page's live part, re-read when one of the tenant's runs moves."""
    membership = membership_for_user(request.user)
    return render(request, "payroll/month.html#month-live", month_context(membership, _month_for(membership, month_id)))


@login_required
@require_GET
def month_file_download(request: HttpRequest, month_id: int, kind: str) -> HttpResponse:
    """A file the month's close wrote, byte for byte (its checksum is on the page); a void one
    too, named so: what was sent before a reopen stays readable. Only a closed month has them."""
    membership = membership_for_user(request.user)
    month = _month_for(membership, month_id)
    if kind not in FILE_FORMATS:
        raise Http404
    wanted = MonthFile.objects.filter(month=month, kind=kind)
    file_id = request.GET.get("file")
    found = (wanted.filter(id=int(file_id)) if file_id and file_id.isdigit() else
             wanted.filter(status=FileStatus.CURRENT)).first()
    if found is None:
        raise Http404
    suffix, content_type = FILE_FORMATS[kind]
    name = {"bank_csv": "bank-payment", "bank_xlsx": "bank-payment", "tax_xlsx": "iit-declaration"}[kind]
    void = "-void" if found.status == FileStatus.VOID else ""
    response = HttpResponse(bytes(found.content), content_type=content_type)
    response["Content-Disposition"] = (f'attachment; filename="{name}-{month.year}-{month.month:02d}{void}.{suffix}"')
    response["X-Checksum-SHA256"] = found.sha256
    return response


@login_required
@require_POST
def month_reopen_view(request: HttpRequest, month_id: int) -> HttpResponse:
    """An admin asks to reopen a closed month, with the reason; a second person approves it."""
    membership = membership_for_user(request.user)
    month = _month_for(membership, month_id)
    try:
        run = month_reopen(membership=membership, month_id=month.id, reason=request.POST.get("reason", ""))
    except DomainError as err:
        messages.error(request, err.message)
        return redirect("payroll-month", month.id)
    messages.success(request, gettext("The reopen of %(year)s-%(month)02d waits for an approver; once approved its "
                                      "files are void and its payslips drafts again.")
                     % {"year": month.year, "month": month.month})
    return redirect(f"/runs/{run.id}/")


def _item_rows(slip: Payslip, zh: bool) -> list[dict[str, Any]]:
    return [{"code": i.get("code"), "name": (i.get("name_zh") if zh and i.get("name_zh") else i.get("name")),
             "kind": i.get("kind"), "formula": i.get("formula"), "base": i.get("base"),
             "rate": percent_text(Decimal(i["rate"])) if i.get("rate") not in (None, "") else "",
             "amount": i.get("amount"), "detail": i.get("detail"), "merged_into": i.get("merged_into")}
            for i in slip.items or []]


@login_required
@require_GET
def month_payslip(request: HttpRequest, month_id: int, employee_id: int) -> HttpResponse:
    """One employee's payslip of the month as it was computed (draft) or closed (final): every
    item with its formula and what it read, the month's inputs, the totals, the cumulative tax.
    ID and account numbers are masked but for admins and an approver while the month awaits
    their decision."""
    membership = membership_for_user(request.user)
    month = _month_for(membership, month_id)
    slip = Payslip.objects.filter(month=month, employee_id=employee_id).select_related("employee").first()
    if slip is None:
        raise Http404
    zh = translation.get_language() == "zh-hans"
    visible = sensitive_visible(request.user, month.tenant_id, deciding=month.status == "awaiting_approval")
    employee = slip.employee
    w = slip.withholding or {}
    return render(request, "payroll/month_payslip.html", {
        "month": month, "group": month.group, "slip": slip, "employee": employee,
        "items": _item_rows(slip, zh),
        "inputs": [{"name": name, "label": INPUT_LABELS.get(name, name), "value": value}
                   for name, value in (slip.inputs or {}).items()],
        "missing_inputs": [INPUT_LABELS.get(name, name) for name in slip.missing_inputs or []],
        "bank_account": shown(employee.bank_account, visible=visible),
        "id_number": shown(employee.id_number, visible=visible), "sensitive_visible": visible,
        "withholding": [{"label": label, "rate": percent_text(Decimal(w[key])) if key == "rate" else "",
                         "amount": _money(w[key])} for key, label in WITHHOLDING if w.get(key) not in (None, "")],
    })


WITHHOLDING = (("cumulative_income", _("Cumulative income")),
               ("cumulative_basic_deduction", _("Cumulative basic deduction")),
               ("cumulative_contributions", _("Cumulative special deductions")),
               ("cumulative_special_additional_deductions", _("Cumulative special additional deductions")),
               ("cumulative_taxable_income", _("Cumulative taxable income")), ("rate", _("Rate")),
               ("quick_deduction", _("Quick deduction")), ("cumulative_tax", _("Cumulative tax")),
               ("tax_withheld_before", _("Tax withheld before this month")),
               ("tax_this_month", _("Tax this month")))
