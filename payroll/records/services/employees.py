"""Employees: assigning them to a group, creating those an approved import proposed, and
recording their pay (Decimal, checked, one row per change)."""
from __future__ import annotations

from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext as _

from config.api import DomainError, Forbidden, NotFound
from idempotency.services import Receipt, key_checked
from tenants.actors import Actor

from payroll.models import DeductionKind, Employee, EmployeePay, IdempotencyRecord, PayrollGroup

from .protocol import APPROVER_ROLES, id_checked, idempotent_write
from .snapshots import moved_tell


def employees_assign(*, actor: Actor, group_id: int, employee_ids: list[int], idempotency_key: str) -> Receipt:
    """Assign employees to a payroll group. A person needs an approver role; the agent needs no approval."""
    key = key_checked(idempotency_key)
    group_id = id_checked(group_id, "group_id")
    ids = sorted({id_checked(e, "employee id") for e in employee_ids or []})
    if actor.role is not None and actor.role not in APPROVER_ROLES:
        raise Forbidden(_("Only an approver or a tenant admin may assign employees to a payroll group."),
                        code="role_required")
    if not ids:
        raise DomainError(_("Give at least one employee id."), code="invalid")
    if not PayrollGroup.objects.filter(tenant_id=actor.tenant_id, id=group_id).exists():
        raise NotFound(_("No such payroll group."), code="group_not_found")
    found = set(Employee.objects.filter(tenant_id=actor.tenant_id, id__in=ids).values_list("id", flat=True))
    missing = [str(i) for i in ids if i not in found]
    if missing:
        raise NotFound(_("No such employee: %(choices)s.") % {"choices": ', '.join(missing)}, code="employee_not_found")

    def work(record: IdempotencyRecord) -> tuple[int, dict[str, Any]]:
        # Where each employee was: the receipt is what an undo puts back, and nothing else.
        previous = dict(Employee.objects.select_for_update().filter(tenant_id=actor.tenant_id, id__in=ids)
                        .values_list("id", "group_id"))
        Employee.objects.filter(tenant_id=actor.tenant_id, id__in=ids).update(group_id=group_id)
        moved_tell(actor=actor, group_id=group_id, previous=previous)
        return 200, {"group_id": str(group_id), "employee_ids": [str(i) for i in ids], "assigned": len(ids),
                     "previous": {str(e): (None if g is None else str(g)) for e, g in previous.items()}}

    return idempotent_write(actor=actor, operation="employees_assign", key=key,
                       request={"group_id": group_id, "employee_ids": ids}, work=work, atomic=True)


def employees_create(*, actor: Actor, group_id: int, employees: list[dict[str, Any]], idempotency_key: str) -> Receipt:
    """Create the employees an approved run proposed (an attached HR export's rows that the
    tenant did not have), once per key: a number the tenant has by now is reused, never
    duplicated. Currency from the group's template; the pay a row carries (base salary,
    allowances, special additional deductions) becomes the employee's EmployeePay, in the
    same transaction, and `base_salary` follows it; a row without pay leaves the salary 0."""
    key = key_checked(idempotency_key)
    group_id = id_checked(group_id, "group_id")
    rows = [{"employee_no": str(e.get("employee_no") or "").strip()[:40], "name": str(e.get("name") or "").strip()[:200],
             "department": str(e.get("department") or "").strip()[:100],
             "location": str(e.get("location") or "").strip()[:100]} for e in employees or []]
    pays = [pay_checked(e["pay"]) if isinstance(e, dict) and e.get("pay") else None for e in employees or []]
    if not rows or any(not r["employee_no"] or not r["name"] for r in rows):
        raise DomainError(_("Each new employee needs a number and a name."), code="invalid")
    group = PayrollGroup.objects.filter(tenant_id=actor.tenant_id, id=group_id).select_related("template").first()
    if group is None:
        raise NotFound(_("No such payroll group."), code="group_not_found")
    currency = group.template.currency if group.template_id else "CNY"

    def work(record: IdempotencyRecord) -> tuple[int, dict[str, Any]]:
        ids, created, paid = [], [], []
        for row, pay in zip(rows, pays):
            employee, made = Employee.objects.get_or_create(
                tenant_id=actor.tenant_id, employee_no=row["employee_no"],
                defaults={"name": row["name"], "department": row["department"] or "—",
                          "location": row["location"] or "—", "base_salary": 0, "currency": currency})
            ids.append(str(employee.id))
            if made:
                created.append(str(employee.id))
            if pay is not None and _pay_write(employee, pay, source=f"HR export, approved ({key[:120]})"):
                paid.append(str(employee.id))
        return 201, {"employee_ids": ids, "created": created, "paid": paid}

    request: dict[str, Any] = {"group_id": group_id, "employees": rows}
    if any(pays):  # the same hash as before for an export without pay
        request["pay"] = [_pay_json(p) if p else None for p in pays]
    return idempotent_write(actor=actor, operation="employees_create", key=key, request=request, work=work, atomic=True)


MAX_PAY = Decimal("1e10")


def _money(value: Any, what: str) -> Decimal:
    try:
        amount = Decimal(str(value).strip().replace(",", ""))
    except (InvalidOperation, ValueError):
        amount = None
    if amount is None or not amount.is_finite() or amount < 0 or amount >= MAX_PAY:
        raise DomainError(_("%(what)s is not an amount: “%(value)s”.") % {"what": what, "value": str(value)[:40]},
                          code="invalid")
    return amount.quantize(Decimal("0.01"))


def pay_checked(pay: dict[str, Any]) -> dict[str, Any]:
    """A pay as given (an export's row, an answer, the API) checked: amounts as Decimals,
    allowances by name, deductions by DeductionKind (their sum is the total when no total
    is given), an optional effective date (default: the first of this month)."""
    if not isinstance(pay, dict):
        raise DomainError(_("A pay needs a base salary."), code="invalid")
    base = _money(pay.get("base_salary"), "base_salary")
    allowances = {str(name).strip()[:60]: _money(v, str(name)[:60])
                  for name, v in (pay.get("allowances") or {}).items() if str(name).strip()}
    kinds = {}
    for kind, v in (pay.get("deductions_breakdown") or {}).items():
        if kind not in DeductionKind.values:
            raise DomainError(_("“%(value)s” is not a kind of special additional deduction.") % {"value": str(kind)[:40]},
                              code="invalid")
        kinds[kind] = _money(v, kind)
    total = pay.get("special_additional_deductions")
    total = _money(total, "special_additional_deductions") if total not in (None, "") else sum(
        kinds.values(), Decimal("0.00"))
    effective = pay.get("effective_from")
    if effective:
        try:
            effective = date.fromisoformat(str(effective)[:10])
        except ValueError:
            raise DomainError(_("“%(value)s” is not a date (YYYY-MM-DD).") % {"value": str(effective)[:40]},
                              code="invalid") from None
    else:
        effective = timezone.localdate().replace(day=1)
    return {"base_salary": base, "allowances": allowances, "special_additional_deductions": total,
            "deductions_breakdown": kinds, "effective_from": effective}


def _pay_json(pay: dict[str, Any]) -> dict[str, Any]:
    return {"base_salary": str(pay["base_salary"]), "allowances": {k: str(v) for k, v in pay["allowances"].items()},
            "special_additional_deductions": str(pay["special_additional_deductions"]),
            "deductions_breakdown": {k: str(v) for k, v in pay["deductions_breakdown"].items()},
            "effective_from": pay["effective_from"].isoformat()}


def _pay_same(row: EmployeePay | None, pay: dict[str, Any]) -> bool:
    if row is None:
        return False
    return (Decimal(row.base_salary) == pay["base_salary"]
            and {k: Decimal(str(v)) for k, v in (row.allowances or {}).items()} == pay["allowances"]
            and Decimal(row.special_additional_deductions) == pay["special_additional_deductions"]
            and {k: Decimal(str(v)) for k, v in (row.deductions_breakdown or {}).items()} == pay["deductions_breakdown"])


def _pay_write(employee: Employee, pay: dict[str, Any], *, source: str) -> bool:
    """A new EmployeePay row when `pay` differs from the one in force on its date (False: the
    same pay, nothing written). The employee's base_salary follows the newest pay."""
    if _pay_same(employee.pay_on(pay["effective_from"]), pay):
        return False
    EmployeePay.objects.create(
        employee=employee, effective_from=pay["effective_from"], base_salary=pay["base_salary"],
        allowances={k: str(v) for k, v in pay["allowances"].items()},
        special_additional_deductions=pay["special_additional_deductions"],
        deductions_breakdown={k: str(v) for k, v in pay["deductions_breakdown"].items()}, source=source[:200])
    latest = employee.pay_history.order_by("-effective_from", "-created_at").first()
    Employee.objects.filter(id=employee.id).update(base_salary=latest.base_salary)
    return True


def employee_pay_record(*, actor: Actor, employee_pay: list[dict[str, Any]], idempotency_key: str,
                        source: str) -> Receipt:
    """Record the pay of the tenant's employees ({"employee_id", "pay"} each), once per key: a
    new EmployeePay row for each whose pay differs from the one in force (the approved step that
    assigns an export's employees; a person's answer to a run's question). A person needs an
    approver role; the agent writes only what an approval covered or a person answered."""
    key = key_checked(idempotency_key)
    if actor.role is not None and actor.role not in APPROVER_ROLES:
        raise Forbidden(_("Only an approver or a tenant admin may change an employee's pay."), code="role_required")
    entries = [(id_checked(e.get("employee_id"), "employee id"), pay_checked(e.get("pay"))) for e in employee_pay or []]
    found = {e.id: e for e in Employee.objects.filter(tenant_id=actor.tenant_id, id__in=[i for i, _ in entries])}
    missing = [str(i) for i, _ in entries if i not in found]
    if missing:
        raise NotFound(_("No such employee: %(choices)s.") % {"choices": ", ".join(missing)}, code="employee_not_found")

    def work(record: IdempotencyRecord) -> tuple[int, dict[str, Any]]:
        written = [str(i) for i, pay in entries if _pay_write(found[i], pay, source=source)]
        return 200, {"employee_ids": [str(i) for i, _ in entries], "written": written}

    return idempotent_write(actor=actor, operation="employee_pay_record", key=key,
                       request={"employee_pay": [{"employee_id": i, "pay": _pay_json(p)} for i, p in entries]},
                       work=work, atomic=True)
