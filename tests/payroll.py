"""Plain helpers for the payroll tests (personas from the demo seed)."""
from __future__ import annotations

from django.test import Client
from rest_framework.test import APIClient

from payroll.models import (
    Employee,
    GroupItem,
    IdempotencyRecord,
    PayrollGroup,
    PayrollTemplate,
    Snapshot,
)
from payroll.records.selectors import configuration_checksum
from payroll.records.services import Actor
from payroll.records.services import snapshot_restore as services_snapshot_restore
from tenants.models import Membership, Tenant

LEGACY_CODE = "cn-sh-legacy-grade-2015"


def actor_for(username: str, *, as_agent: bool = False, approval_id: int | None = None) -> Actor:
    m = Membership.objects.get(user__username=username)
    return Actor(tenant_id=m.tenant_id, user_id=m.user_id, role=None if as_agent else m.role, approval_id=approval_id)


def tenant(slug: str) -> Tenant:
    return Tenant.objects.get(slug=slug)


def template(code: str = "cn-sh-monthly-salaried") -> PayrollTemplate:
    return PayrollTemplate.objects.get(code=code, version=1)


def api(username: str) -> APIClient:
    client = APIClient()
    client.force_authenticate(Membership.objects.get(user__username=username).user)
    return client


def page(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password="keel-demo")
    return client


def state_of(slug: str = "demo") -> tuple:
    """Everything a write could change for a tenant, to assert that nothing did."""
    t = tenant(slug)
    return (configuration_checksum(tenant_id=t.id),
            PayrollGroup.objects.filter(tenant=t).count(),
            GroupItem.objects.filter(group__tenant=t).count(),
            Snapshot.objects.filter(tenant=t).count(),
            IdempotencyRecord.objects.filter(tenant=t).count(),
            sorted(Employee.objects.filter(tenant=t).values_list("id", "group_id")))


def tenant_restore(snapshot_id, *, admin: str = "ada", approver: str = "bob", key: str = "restore"):
    """A whole-tenant restore as people do it: the admin asks (202, a run), a second person
    approves on the desk, the run writes it. Returns the finished run."""
    from approvals.models import ApprovalRequest
    from approvals.services import approval_decide
    from workflows.models import Run
    from tests.helpers import drive, membership, no_broker

    with no_broker():
        receipt = services_snapshot_restore(actor=actor_for(admin), snapshot_id=snapshot_id, idempotency_key=key)
        assert receipt.status_code == 202, receipt.body
        run = drive(Run.objects.get(id=int(receipt.body["run_id"])))
        assert run.status == "awaiting_approval", run.status
        approval_decide(membership=membership(approver), approval_id=ApprovalRequest.objects.get(
            run=run, status="pending").id, verdict="approved")
        return drive(run)


SALES_ATTENDANCE = "cn-sh-sales-attendance"


def month_group(slug: str = "demo", name: str = "Shanghai Sales", salaries=("21750", "18000", "30000"),
                template_code: str = SALES_ATTENDANCE):
    """A Shanghai group made from a catalog template (its items copied, as an import makes them)
    and one employee per salary, each with an ID and a bank account (E-001, E-002…)."""
    from decimal import Decimal

    from payroll.models import EmployeePay
    from payroll.records.seed import templates_seed

    templates_seed()
    t = tenant(slug)
    source = PayrollTemplate.objects.get(code=template_code, version=1)
    group = PayrollGroup.objects.create(tenant=t, name=name, template=source, template_version=1,
                                        variables=source.variables, city="shanghai")
    for item in source.items.order_by("position"):
        GroupItem.objects.create(group=group, position=item.position, code=item.code, name=item.name, kind=item.kind,
                                 rate=item.rate, rate_name=item.rate_name, base=item.base, formula=item.formula)
    for n, salary in enumerate(salaries, start=1):
        employee = Employee.objects.create(
            tenant=t, employee_no=f"E-{n:03d}", name=f"Employee {n}", location="Shanghai",
            base_salary=Decimal(salary), currency="CNY", group=group, id_type="resident_id",
            id_number=f"31010119900101{n:04d}", bank_account=f"6222 0000 0000 {n:04d}", bank_name="ICBC Shanghai")
        EmployeePay.objects.create(employee=employee, effective_from="2026-01-01", base_salary=Decimal(salary),
                                   source="test")
    return group


def month_inputs(group, year: int, month: int, figures: dict, version: int = 1):
    """An imported version of a group's month: {employee_no: {input name: "figure"}}."""
    from payroll.models import MonthlyInputRow, MonthlyInputs

    inputs = MonthlyInputs.objects.create(tenant=group.tenant, group=group, year=year, month=month, version=version,
                                          sha256=f"{version:064d}", columns=[{"header": "工号", "read_as": "employee_no"}])
    for number, values in figures.items():
        MonthlyInputRow.objects.create(inputs=inputs, employee=Employee.objects.get(tenant=group.tenant,
                                                                                   employee_no=number), values=values)
    return inputs
