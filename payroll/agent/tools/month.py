"""The payroll month's tools (blueprints payroll_month and payroll_month_reopen): gather the
inputs, compute, close (the one approval), verify; and the approved reopen. Each is a thin
door to payroll.records.months; the approval card reads payroll.records.months.review."""
from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils.translation import gettext_noop

from config.api import Conflict
from config.words import words
from workflows.tools import Acceptance, NeedsInput, Preview, Tool, ToolBlocked, ToolContext, ToolError, tool_register

from payroll.models import FileStatus, MonthFile, MonthStatus, Payslip, PayslipStatus, PayrollMonth
from payroll.records.month_inputs import inputs_latest
from payroll.records.months import (
    month_close, month_compute, month_rejected, month_reopen_apply, month_transition, month_verify,
)
from payroll.records.months.close import later_months
from payroll.records.months.review import figures_checksum, month_review
from payroll.records.trial import group_structure

from .common import ID

PROCEED = ("compute without inputs", "without inputs", "go ahead", "proceed", "不导入", "直接计算", "继续")
MONTH_ARG = {"type": "object", "properties": {"month_id": ID}, "required": ["month_id"]}


def _month(ctx_or_tenant: Any, month_id: Any) -> PayrollMonth:
    tenant_id = getattr(ctx_or_tenant, "tenant_id", ctx_or_tenant)
    month = PayrollMonth.objects.select_related("group").filter(id=int(month_id), tenant_id=tenant_id).first()
    if month is None:
        raise ToolBlocked("That payroll month is not in this tenant.")
    return month


def _period(month: PayrollMonth) -> str:
    return f"{month.year}-{month.month:02d}"


def gather_month_inputs(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """The month's inputs: the latest imported version, or — when the group's items read inputs
    and none were imported — the question: import them, or compute them as zero (said as assumed)."""
    month = _month(ctx, arguments["month_id"])
    needed = list(group_structure(month.group).inputs)
    found = inputs_latest(month.group_id, month.year, month.month)
    answer = (arguments.get("answer") or "").strip().lower()
    assumed: list[str] = []
    if found is None and needed:
        if not any(word in answer for word in PROCEED):
            raise NeedsInput(words(gettext_noop(
                "No attendance or sales figures are imported for %(group)s, %(period)s, and its items read "
                "%(inputs)s. Import them on the month's page and answer “done”, or answer “compute without "
                "inputs” to compute them as zero."), group=month.group.name, period=_period(month),
                inputs=", ".join(needed)),
                options=[{"label": words(gettext_noop("Compute without inputs")), "label_en": "Compute without inputs",
                          "label_zh": "不导入，直接计算", "answer": "compute without inputs"},
                         {"label": words(gettext_noop("Done, they are imported")), "label_en": "Done",
                          "label_zh": "已导入", "answer": "done"}],
                link={"href": f"/payroll/months/{month.id}/", "label": words(gettext_noop("The month's page"))})
        assumed = needed
    rows = len(found.rows) if found else 0
    return {"month_id": str(month.id), "inputs_version": found.version if found else 0, "rows": rows,
            "assumed_zero": assumed, "unknown_columns": list(found.unknown_columns) if found else [],
            "receipt_ref": f"payroll/months/{month.id}"}


def _gather_summary(output: dict[str, Any]):
    if output.get("assumed_zero"):
        return words(gettext_noop("No inputs imported: %(inputs)s are computed as zero, as asked."),
                     inputs=", ".join(output["assumed_zero"]))
    if not output.get("inputs_version"):
        return words(gettext_noop("The group's items read no monthly inputs."))
    return words(gettext_noop("Inputs version %(version)s: %(rows)s employees' figures."),
                 version=output["inputs_version"], rows=output["rows"])


tool_register(Tool(
    name="gather_month_inputs", title=gettext_noop("Gather the month's inputs"),
    description="Check that the payroll month's attendance and sales inputs are imported; ask for what is missing.",
    input_schema={"type": "object", "properties": {"month_id": ID, "answer": {"type": ["string", "null"]}},
                  "required": ["month_id"]},
    output_schema={"type": "object", "properties": {"month_id": ID, "inputs_version": {"type": "integer"}},
                   "required": ["month_id", "inputs_version"]},
    fn=gather_month_inputs, summary=_gather_summary,
    accept=lambda ctx, arguments, output: [Acceptance(
        "the month's inputs are imported, or computing without them was chosen",
        bool(output.get("inputs_version")) or output.get("assumed_zero") is not None)],
))


def compute_payroll_month(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """Every payslip computed (drafts replaced in one transaction); the month then waits for its approval."""
    month = _month(ctx, arguments["month_id"])
    try:
        month_compute(month_id=month.id, by_id=ctx.user_id, run_id=ctx.run_id)
    except Conflict as err:
        raise ToolBlocked(err.message) from None
    with transaction.atomic():
        month = month_transition(month_id=month.id, to=MonthStatus.AWAITING_APPROVAL, by_id=ctx.user_id,
                                 run_id=ctx.run_id, reason="the close waits for its approval")
    totals = month.totals
    return {"month_id": str(month.id), "month_checksum": figures_checksum(month.id), "headcount": totals["headcount"],
            "gross": totals["gross"], "net": totals["net"], "tax": totals["tax"],
            "no_pay": len((month.opening or {}).get("no_pay") or []), "receipt_ref": f"payroll/months/{month.id}"}


def _compute_accept(ctx, arguments, output) -> list[Acceptance]:
    month = PayrollMonth.objects.get(id=int(output["month_id"]))
    slips = Payslip.objects.filter(month=month).exclude(status=PayslipStatus.VOID)
    nets = sum((p.net for p in slips), 0)
    return [Acceptance("every employee with a salary has a payslip", slips.count() == month.totals.get("headcount")),
            Acceptance("the totals are the payslips' sums", str(nets) == str(month.totals.get("net")) or (
                not slips.exists() and month.totals.get("net") in ("0", "0.00")))]


tool_register(Tool(
    name="compute_payroll_month", title=gettext_noop("Compute the payroll month"),
    description="Compute every employee's payslip of the payroll month with the group's items.",
    input_schema=MONTH_ARG,
    output_schema={"type": "object", "properties": {"month_id": ID, "month_checksum": {"type": "string"}},
                   "required": ["month_id", "month_checksum"]},
    fn=compute_payroll_month, produces=["month_checksum"], accept=_compute_accept,
    summary=lambda output: words(gettext_noop("Computed %(n)s payslips: gross %(gross)s, tax %(tax)s, net %(net)s."),
                                 n=output["headcount"], gross=output["gross"], tax=output["tax"], net=output["net"]),
))


def close_preview(tenant_id: int, arguments: dict[str, Any], params: dict[str, Any]) -> Preview:
    month = _month(tenant_id, arguments["month_id"])
    review = month_review(month.id)
    totals = review["totals"] or {}
    return Preview(summary=words(gettext_noop("Close %(group)s's payroll for %(period)s: %(n)s payslips, net pay "
                                              "%(net)s %(currency)s, tax %(tax)s."),
                                 group=month.group.name, period=_period(month), n=totals.get("headcount", 0),
                                 net=totals.get("net", "0"), tax=totals.get("tax", "0"), currency=review["currency"]),
                   diff={"month": review}, measures={"headcount": totals.get("headcount", 0),
                                                     "net": totals.get("net", "0"), "currency": review["currency"]})


def close_preconditions(tenant_id: int, run_id: int, arguments: dict[str, Any]) -> str:
    """The approver decided on these figures: a recompute or an earlier month's reopen since makes it stale."""
    month = _month(tenant_id, arguments["month_id"])
    if month.stale:
        return "an earlier month of the group was reopened: this month must compute again"
    if figures_checksum(month.id) != arguments.get("month_checksum"):
        return "the month's figures changed after the approval was asked for"
    return ""


def close_payroll_month(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    month = _month(ctx, arguments["month_id"])
    if month.status != MonthStatus.CLOSED and figures_checksum(month.id) != arguments.get("month_checksum"):
        raise ToolBlocked("The month's figures changed after they were approved; nothing was closed.")
    try:
        month = month_close(month_id=month.id, by_id=ctx.user_id, run_id=ctx.run_id)
    except Conflict as err:
        raise ToolBlocked(err.message) from None
    files = MonthFile.objects.filter(month=month, status=FileStatus.CURRENT)
    return {"month_id": str(month.id), "status": month.status,
            "files": {f.kind: f.sha256 for f in files}, "receipt_ref": f"payroll/months/{month.id}"}


def _close_accept(ctx, arguments, output) -> list[Acceptance]:
    month = PayrollMonth.objects.get(id=int(output["month_id"]))
    kinds = sorted(MonthFile.objects.filter(month=month, status=FileStatus.CURRENT).values_list("kind", flat=True))
    return [Acceptance("the month is closed with one bank file pair and one declaration",
                       month.status == MonthStatus.CLOSED and kinds == ["bank_csv", "bank_xlsx", "tax_xlsx"])]


def _close_rejected(tenant_id: int, run_id: int, arguments: dict[str, Any], by_id: int, why: str) -> None:
    """The run ends blocked with the decider's words; the month goes back to open, its payslips drafts."""
    month = PayrollMonth.objects.filter(id=int(arguments["month_id"]), tenant_id=tenant_id).first()
    if month is not None:
        month_rejected(month_id=month.id, by_id=by_id, run_id=run_id, why=why)


tool_register(Tool(
    name="close_payroll_month", title=gettext_noop("Close the payroll month"),
    description="Close the payroll month: payslips final, the bank payment file and the tax declaration written.",
    input_schema={"type": "object", "properties": {"month_id": ID, "month_checksum": {"type": "string"}},
                  "required": ["month_id", "month_checksum"]},
    output_schema={"type": "object", "properties": {"month_id": ID, "status": {"type": "string"}},
                   "required": ["month_id", "status"]},
    fn=close_payroll_month, consumes=["month_checksum"], side_effects=True, read_only=False, needs_approval=True,
    accept=_close_accept, preview=close_preview, preconditions_check=close_preconditions, on_reject=_close_rejected,
    irreversible="It commits in one transaction; its compensation is the reopen, an admin's request with its "
                 "own approval (blueprint payroll_month_reopen).",
    summary=lambda output: words(gettext_noop("Closed the month: payslips final, the bank file and the tax "
                                              "declaration written.")),
    approval_rule={"roles": ["approver", "admin"], "deadline_seconds": 3 * 24 * 3600,
                   "remind_before_seconds": 4 * 3600},
    milestones={"awaiting_approval": "the month's payslips wait for their approval",
                "completed": "the month is closed and its files are written",
                "blocked": "the month could not close"},
))


def verify_payroll_month(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    month = _month(ctx, arguments["month_id"])
    result = month_verify(month_id=month.id)
    if not result["ok"]:
        wrong = "; ".join(f"{c['check']}: the file says {c['file']}, the payslips {c['payslips']}"
                          for c in result["checks"] if not c["ok"])
        raise ToolError(f"The files do not add up to the payslips: {wrong}")
    return {"month_id": str(month.id), "ok": True, "net": result["net"], "tax": result["tax"],
            "headcount": result["headcount"], "receipt_ref": f"payroll/months/{month.id}"}


tool_register(Tool(
    name="verify_payroll_month", title=gettext_noop("Verify the payroll month's files"),
    description="Read the month's files back and compare their totals with the payslips'.",
    input_schema=MONTH_ARG,
    output_schema={"type": "object", "properties": {"month_id": ID, "ok": {"type": "boolean"}},
                   "required": ["month_id", "ok"]},
    fn=verify_payroll_month,
    accept=lambda ctx, arguments, output: [Acceptance("the files' totals equal the payslips' totals",
                                                      bool(output.get("ok")))],
    summary=lambda output: words(gettext_noop("The bank file pays %(net)s to %(n)s people and the declaration "
                                              "withholds %(tax)s: both equal the payslips."),
                                 net=output["net"], n=output["headcount"], tax=output["tax"]),
))


def reopen_preview(tenant_id: int, arguments: dict[str, Any], params: dict[str, Any]) -> Preview:
    month = _month(tenant_id, arguments["month_id"])
    files = list(MonthFile.objects.filter(month=month, status=FileStatus.CURRENT).values_list("kind", flat=True))
    later = [{"year": m.year, "month": m.month, "status": m.status}
             for m in later_months(month).exclude(status=MonthStatus.CLOSED).order_by("year", "month")]
    return Preview(summary=words(gettext_noop("Reopen %(group)s's closed payroll for %(period)s: its files become "
                                              "void and its payslips drafts again."),
                                 group=month.group.name, period=_period(month)),
                   diff={"reopen": {"group": month.group.name, "year": month.year, "month": month.month,
                                    "reason": arguments.get("reason", ""), "files": sorted(files),
                                    "totals": month.totals, "later": later}},
                   measures={"headcount": (month.totals or {}).get("headcount", 0)})


def reopen_payroll_month(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    month = _month(ctx, arguments["month_id"])
    try:
        month = month_reopen_apply(month_id=month.id, reason=arguments["reason"], by_id=ctx.user_id,
                                   run_id=ctx.run_id)
    except Conflict as err:
        raise ToolBlocked(err.message) from None
    return {"month_id": str(month.id), "status": month.status, "receipt_ref": f"payroll/months/{month.id}"}


tool_register(Tool(
    name="reopen_payroll_month", title=gettext_noop("Reopen a closed payroll month"),
    description="Reopen a closed payroll month: its files void, its payslips drafts, later months to compute again.",
    input_schema={"type": "object", "properties": {"month_id": ID, "reason": {"type": "string"}},
                  "required": ["month_id", "reason"]},
    output_schema={"type": "object", "properties": {"month_id": ID, "status": {"type": "string"}},
                   "required": ["month_id", "status"]},
    fn=reopen_payroll_month, side_effects=True, read_only=False, needs_approval=True, preview=reopen_preview,
    accept=lambda ctx, arguments, output: [Acceptance(
        "the month is reopened and its files are void",
        PayrollMonth.objects.filter(id=int(output["month_id"]), status=MonthStatus.REOPENED).exists()
        and not MonthFile.objects.filter(month_id=int(output["month_id"]), status=FileStatus.CURRENT).exists())],
    irreversible="It commits in one transaction and ends its run; the month closes again through its own run.",
    summary=lambda output: words(gettext_noop("Reopened the month: its files are void and its payslips drafts.")),
    # Whoever asked (a tenant admin) may not decide it: a second person does.
    approval_rule={"roles": ["approver", "admin"], "deadline_seconds": 3 * 24 * 3600,
                   "remind_before_seconds": 4 * 3600},
))
