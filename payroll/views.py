"""Payroll pages: readable by every role of the tenant; another tenant's id is a 404."""
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from tenants.selectors import membership_for_user

from . import selectors


@login_required
def payroll_home(request: HttpRequest) -> HttpResponse:
    membership = membership_for_user(request.user)
    tenant_id = membership.tenant_id
    return render(request, "payroll/home.html", {
        "groups": selectors.groups_for(tenant_id),
        "employees": selectors.employees_for(tenant_id),
        "snapshots": selectors.snapshots_for(tenant_id)[:20],
        "checksum": selectors.configuration_checksum(tenant_id=tenant_id),
    })


@login_required
def template_catalog(request: HttpRequest) -> HttpResponse:
    membership_for_user(request.user)
    return render(request, "payroll/templates.html", {"templates": selectors.templates_all()})


@login_required
def group_detail(request: HttpRequest, group_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    return render(request, "payroll/group.html", {"group": selectors.group_get(membership.tenant_id, group_id)})


@login_required
def employee_detail(request: HttpRequest, employee_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    employee = selectors.employee_get(membership.tenant_id, employee_id)
    return render(request, "payroll/employee.html", {"employee": employee})


@login_required
def snapshot_detail(request: HttpRequest, snapshot_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    snapshot = selectors.snapshot_get(membership.tenant_id, snapshot_id)
    return render(request, "payroll/snapshot.html", {"snapshot": snapshot})
