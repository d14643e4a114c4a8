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
from payroll.selectors import configuration_checksum
from payroll.services import Actor
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
