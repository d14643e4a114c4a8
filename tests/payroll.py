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
