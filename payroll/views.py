"""Payroll pages: readable by every role of the tenant; another tenant's id is a 404.
Two writes: anyone takes a whole-tenant snapshot; a tenant admin asks to restore one,
which waits for a second person on the approver's desk."""
import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext
from django.views.decorators.http import require_POST

from config.api import DomainError, NotFound
from tenants.actors import Actor
from tenants.models import Role
from tenants.selectors import membership_for_user

from . import selectors, services


@login_required
def payroll_home(request: HttpRequest) -> HttpResponse:
    membership = membership_for_user(request.user)
    tenant_id = membership.tenant_id
    return render(request, "payroll/home.html", {
        "groups": selectors.groups_for(tenant_id),
        "employees": selectors.employees_for(tenant_id),
        "snapshots": selectors.snapshots_for(tenant_id)[:20],
        "checksum": selectors.configuration_checksum(tenant_id=tenant_id),
        "write_key": uuid.uuid4().hex,
    })


@login_required
def template_catalog(request: HttpRequest) -> HttpResponse:
    membership_for_user(request.user)
    return render(request, "payroll/templates.html", {"templates": selectors.templates_all()})


@login_required
def group_detail(request: HttpRequest, group_id: int) -> HttpResponse:
    """A group's page; a group a restore deleted says so, by whom and by which run (410), not 404."""
    membership = membership_for_user(request.user)
    try:
        group = selectors.group_get(membership.tenant_id, group_id)
    except NotFound:
        removed = selectors.removed_group(membership.tenant_id, group_id)
        if removed is None:
            raise
        return render(request, "payroll/group_removed.html", {"removed": removed}, status=410)
    return render(request, "payroll/group.html", {"group": group})


@login_required
def employee_detail(request: HttpRequest, employee_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    employee = selectors.employee_get(membership.tenant_id, employee_id)
    return render(request, "payroll/employee.html", {"employee": employee})


@login_required
def snapshot_detail(request: HttpRequest, snapshot_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    snapshot = selectors.snapshot_get(membership.tenant_id, snapshot_id)
    restore = None
    if snapshot.scope is None and membership.role == Role.ADMIN:
        restore = selectors.restore_diff(tenant_id=membership.tenant_id, snapshot=snapshot)
    return render(request, "payroll/snapshot.html", {"snapshot": snapshot, "restore": restore,
                                                     "write_key": uuid.uuid4().hex})


def _form_key(request: HttpRequest) -> str:
    # Rendered into the form: a double submit (or a reload) repeats the key, never the write.
    return f"form:{request.POST.get('key', '')[:64]}"


@login_required
@require_POST
def snapshot_take(request: HttpRequest) -> HttpResponse:
    membership = membership_for_user(request.user)
    try:
        receipt = services.snapshot_create(actor=Actor.of_member(membership), label=request.POST.get("label", ""),
                                           idempotency_key=_form_key(request))
    except DomainError as err:
        messages.error(request, err.message)
        return redirect("payroll-home")
    messages.success(request, gettext("Snapshot “%(label)s” taken.") % {"label": receipt.body["label"]})
    return redirect("payroll-snapshot", int(receipt.body["snapshot_id"]))


@login_required
@require_POST
def snapshot_restore_request(request: HttpRequest, snapshot_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    try:
        receipt = services.snapshot_restore(actor=Actor.of_member(membership), snapshot_id=snapshot_id,
                                            idempotency_key=_form_key(request))
    except DomainError as err:
        messages.error(request, err.message)
        return redirect("payroll-snapshot", snapshot_id)
    messages.success(request, receipt.body["detail"])
    return redirect(f"/runs/{receipt.body['run_id']}/")
