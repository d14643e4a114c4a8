"""What a setup's import changes besides the new group, worked out before its approval so that
the card can show each change as its own line: employees moved out of another group (that
group's name and the person whose run made it), employees created from the attached list, and
salaries set — from the list, or answered before the approval (the `salaries` step)."""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.utils import timezone

from payroll.models import Employee
from payroll.records.selectors import runs_that_made


def _ids(values: Any) -> list[int]:
    return [int(i) for i in values or [] if str(i).isascii() and str(i).isdigit()]


def with_salaries(params: dict[str, Any], salaries: list[dict[str, Any]] | None) -> dict[str, Any]:
    """The run's params with the salaries answered before the approval folded in, as an export
    would have given them: a new employee's row gets its pay, an employee the tenant has gets
    an `employee_pay` entry. What the list itself gave is never overridden."""
    if not salaries:
        return params
    given = {str(s["key"]): str(s["base_salary"]) for s in salaries if s.get("key") and s.get("base_salary")}
    rows = []
    for row in params.get("new_employees") or []:
        key = f"new:{str(row.get('employee_no') or '').strip()}"
        rows.append({**row, "pay": {"base_salary": given[key]}} if key in given and not row.get("pay") else row)
    paid = {str(e.get("employee_id")) for e in params.get("employee_pay") or []}
    pay = list(params.get("employee_pay") or []) + [
        {"employee_id": key, "pay": {"base_salary": amount}} for key, amount in given.items()
        if not key.startswith("new:") and key not in paid]
    out = {**params}
    if rows:
        out["new_employees"] = rows
    if pay:
        out["employee_pay"] = pay
    return out


def moved_proposed(*, tenant_id: int, employee_ids: list[Any]) -> list[dict[str, str]]:
    """The listed employees who are in a group now: the import moves each out of it."""
    employees = list(Employee.objects.filter(tenant_id=tenant_id, id__in=_ids(employee_ids), group__isnull=False)
                     .select_related("group").order_by("employee_no"))
    makers = runs_that_made(tenant_id, list({e.group_id for e in employees}))
    moved = []
    for e in employees:
        run = makers.get(e.group_id)
        owner = run.created_by if run is not None and run.created_by_id else None
        moved.append({"employee_id": str(e.id), "employee_no": e.employee_no, "name": e.name,
                      "from_group": e.group.name, "from_group_id": str(e.group_id),
                      "owner": (owner.get_full_name() or owner.username) if owner else "",
                      "owner_run": str(run.id) if run is not None else ""})
    return moved


def pay_changes_proposed(*, tenant_id: int, params: dict[str, Any],
                         salaries: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Each base salary the approval sets: old → new for an employee the tenant has (only
    where it differs from the pay in force), new for one it creates; `answered` when the
    starter gave it in answer to the `salaries` step's question."""
    answered = {str(s.get("key")) for s in salaries or []}
    params = with_salaries(params, salaries)
    today = timezone.localdate()
    lines = []
    entries = {str(e.get("employee_id")): e.get("pay") or {} for e in params.get("employee_pay") or []}
    employees = Employee.objects.filter(tenant_id=tenant_id, id__in=_ids(entries)).prefetch_related("pay_history")
    for employee in employees.order_by("employee_no"):
        new = entries[str(employee.id)].get("base_salary")
        if new in (None, ""):
            continue
        now = employee.pay_on(today)
        old = Decimal(now.base_salary) if now is not None else None
        if old is not None and old == Decimal(str(new)):
            continue
        lines.append({"employee_no": employee.employee_no, "name": employee.name,
                      "old": None if old is None else f"{old:.2f}", "new": f"{Decimal(str(new)):.2f}",
                      "answered": str(employee.id) in answered})
    known = set(Employee.objects.filter(tenant_id=tenant_id, employee_no__in=[
        str(r.get("employee_no") or "").strip() for r in params.get("new_employees") or []])
        .values_list("employee_no", flat=True))
    for row in params.get("new_employees") or []:
        number = str(row.get("employee_no") or "").strip()
        base = (row.get("pay") or {}).get("base_salary")
        if number and number not in known and base not in (None, ""):
            lines.append({"employee_no": number, "name": str(row.get("name") or ""), "old": None,
                          "new": f"{Decimal(str(base)):.2f}", "answered": f"new:{number}" in answered})
    return lines

