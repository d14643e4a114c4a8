"""Reads of payroll months for pages and the API, tenancy enforced here: another tenant's
month is a 404, never a 403 that says it exists."""
from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

from config.api import NotFound
from tenants.models import Membership

from workflows.models import Run

from payroll.models import FileStatus, MonthFile, MonthStatus, PayrollMonth, Payslip, PayslipStatus
from payroll.records.masking import sensitive_visible, shown

from .state import month_rejection


def month_get(tenant_id: int, month_id: int) -> PayrollMonth:
    found = PayrollMonth.objects.select_related("group", "group__template", "run").filter(
        id=month_id, tenant_id=tenant_id).first()
    if found is None:
        raise NotFound(_("No payroll month %(id)s in your tenant.") % {"id": month_id}, code="month_not_found")
    return found


def months_for(tenant_id: int, *, group_id: int | None = None, year: int | None = None) -> list[PayrollMonth]:
    found = PayrollMonth.objects.select_related("group").filter(tenant_id=tenant_id)
    if group_id is not None:
        found = found.filter(group_id=group_id)
    if year is not None:
        found = found.filter(year=year)
    return list(found.order_by("group__name", "-year", "-month"))


def deciding(membership: Membership, month: PayrollMonth) -> bool:
    """The member is an approver who may decide this month's waiting approval (not whoever started it)."""
    return bool(month.status == MonthStatus.AWAITING_APPROVAL and membership.can_approve and month.run_id
                and month.run.created_by_id != membership.user_id)


def numbers_visible(membership: Membership, month: PayrollMonth) -> bool:
    return sensitive_visible(membership.user, membership.tenant_id, deciding=deciding(membership, month))


def files_json(month: PayrollMonth) -> dict[str, Any]:
    files = {f.kind: f for f in MonthFile.objects.filter(month=month, status=FileStatus.CURRENT).defer("content")}
    base = f"/api/v1/payroll/months/{month.id}"

    def one(kind: str, url: str) -> dict[str, Any] | None:
        f = files.get(kind)
        return None if f is None else {"sha256": f.sha256, "rows": f.rows, "total": str(f.total), "url": url}

    bank = {fmt: one(f"bank_{fmt}", f"{base}/bank-file/?format={fmt}") for fmt in ("csv", "xlsx")}
    return {"bank": bank if any(bank.values()) else None, "tax": one("tax_xlsx", f"{base}/tax-declaration/")}


def month_json(month: PayrollMonth) -> dict[str, Any]:
    opening = month.opening or {}
    return {"id": str(month.id), "group": str(month.group_id), "group_name": month.group.name, "year": month.year,
            "month": month.month, "status": month.status, "stale": month.stale, "totals": month.totals or {},
            "employees": (month.totals or {}).get("headcount", 0), "inputs_version": opening.get("inputs_version"),
            "run_id": str(month.run_id) if month.run_id else None,
            "opening": {k: opening.get(k) for k in ("year_openings", "closed_months_employees", "assumed_joined")},
            "computed_at": month.computed_at.isoformat() if month.computed_at else None,
            "closed_at": month.closed_at.isoformat() if month.closed_at else None, "files": files_json(month),
            "rejection": month_rejection(month)}


def payslips_json(membership: Membership, month: PayrollMonth) -> list[dict[str, Any]]:
    """The month's payslips as the reader may see them: ID and account numbers masked but for
    admins and the approver deciding the month."""
    visible = numbers_visible(membership, month)
    slips = (Payslip.objects.filter(month=month).exclude(status=PayslipStatus.VOID).select_related("employee")
             .order_by("employee__employee_no"))
    return [{"id": str(s.id), "status": s.status,
             "employee": {"id": str(s.employee_id), "employee_no": s.employee.employee_no, "name": s.employee.name,
                          "id_type": s.employee.id_type, "id_number": shown(s.employee.id_number, visible=visible),
                          "bank_name": s.employee.bank_name,
                          "bank_account": shown(s.employee.bank_account, visible=visible)},
             "gross": str(s.gross), "employee_contributions": str(s.employee_contributions),
             "employer_contributions": str(s.employer_contributions), "tax": str(s.tax), "net": str(s.net),
             "employer_cost": str(s.employer_cost), "items": s.items, "inputs": s.inputs,
             "missing_inputs": s.missing_inputs, "withholding": s.withholding} for s in slips]


def month_file(month: PayrollMonth, kind: str) -> MonthFile | None:
    return MonthFile.objects.filter(month=month, kind=kind, status=FileStatus.CURRENT).first()


def month_watched_conversation(month: PayrollMonth) -> tuple[int | None, int]:
    """(id, last seq) of the conversation the month's page listens to: that of the newest run
    working on the month (a reopen asked for after the close moves the month in its own
    conversation), else none."""
    newest = (Run.objects.filter(tenant_id=month.tenant_id, params__month_id=str(month.id))
              .select_related("conversation").order_by("-created_at", "-id").first())
    conversation = newest.conversation if newest is not None else None
    return (conversation.id, conversation.last_seq) if conversation is not None else (None, 0)
