"""What the approver of a month reads (and the month page shows): the totals, each employee's
change against the group's previous closed month with the anomalies flagged, sample payslips,
and what the tax withholding started from. No bank or ID numbers: this lands in the approval
and in frames. `figures_checksum` binds an approval to the figures it showed."""
from __future__ import annotations

import hashlib
from decimal import Decimal
from typing import Any

from django.db.models import Q

from payroll.models import MonthStatus, Payslip, PayslipStatus, PayrollMonth

ANOMALY_SHARE = Decimal("0.20")  # net pay up or down by more than this against the previous closed month
SAMPLES = 3
MAX_ROWS = 200  # the card lists the anomalies first, then the rest up to this


def previous_closed(month: PayrollMonth) -> PayrollMonth | None:
    return (PayrollMonth.objects.filter(group_id=month.group_id, status=MonthStatus.CLOSED)
            .filter(Q(year=month.year, month__lt=month.month) | Q(year__lt=month.year))
            .order_by("-year", "-month").first())


def figures_checksum(month_id: int) -> str:
    """The month's draft figures, hashed: what an approval of them is bound to."""
    month = PayrollMonth.objects.get(id=month_id)
    rows = Payslip.objects.filter(month_id=month_id).exclude(status=PayslipStatus.VOID).order_by(
        "employee_id").values_list("employee_id", "gross", "tax", "net", "employer_cost")
    text = f"{month.inputs_id}|{month.stale}|" + ";".join(",".join(map(str, r)) for r in rows)
    return hashlib.sha256(text.encode()).hexdigest()


def _change(now: Decimal, before: Decimal | None) -> str | None:
    if before is None or before == 0:
        return None
    return str(((now - before) / before * 100).quantize(Decimal("0.1")))


def month_review(month_id: int) -> dict[str, Any]:
    month = PayrollMonth.objects.select_related("group").get(id=month_id)
    slips = list(Payslip.objects.filter(month_id=month_id).exclude(status=PayslipStatus.VOID)
                 .select_related("employee").order_by("employee__employee_no"))
    previous = previous_closed(month)
    before = ({p.employee_id: p for p in Payslip.objects.filter(month=previous, status=PayslipStatus.FINAL)
               .select_related("employee")} if previous else {})
    missing_rows = set((month.opening or {}).get("missing_input_rows") or [])
    rows: list[dict[str, Any]] = []
    for slip in slips:
        prior = before.get(slip.employee_id)
        flags = []
        if previous is not None and prior is None:
            flags.append("new")
        change = _change(slip.net, prior.net if prior else None)
        if change is not None and abs(Decimal(change)) > ANOMALY_SHARE * 100:
            flags.append("net_up" if Decimal(change) > 0 else "net_down")
        if slip.employee.employee_no in missing_rows:
            flags.append("no_inputs")
        elif slip.missing_inputs:
            flags.append("missing_input")
        rows.append({"employee_no": slip.employee.employee_no, "name": slip.employee.name, "net": str(slip.net),
                     "previous_net": str(prior.net) if prior else None, "change_percent": change, "flags": flags,
                     "missing_inputs": slip.missing_inputs})
    present = {s.employee_id for s in slips}
    for employee_id, prior in before.items():
        if employee_id not in present:
            rows.append({"employee_no": prior.employee.employee_no, "name": prior.employee.name, "net": None,
                         "previous_net": str(prior.net), "change_percent": None, "flags": ["missing"],
                         "missing_inputs": []})
    rows.sort(key=lambda r: (not r["flags"], r["employee_no"]))
    samples = [{"employee_no": s.employee.employee_no, "name": s.employee.name, "gross": str(s.gross),
                "employee_contributions": str(s.employee_contributions), "tax": str(s.tax), "net": str(s.net),
                "items": s.items} for s in slips[:SAMPLES]]
    return {"month_id": str(month.id), "group": month.group.name, "year": month.year, "month": month.month,
            "currency": month.group.template.currency if month.group.template_id else "CNY",
            "totals": month.totals, "previous": ({"year": previous.year, "month": previous.month}
                                                 if previous else None),
            "employees": rows[:MAX_ROWS], "anomalies": sum(1 for r in rows if r["flags"]),
            "samples": samples, "opening": month.opening or {}, "attendance": month.attendance or {},
            "inputs_version": (month.opening or {}).get("inputs_version"), "stale": month.stale}
