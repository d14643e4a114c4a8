"""Payroll pages: readable by every role of the tenant; another tenant's id is a 404.
Two writes: anyone takes a whole-tenant snapshot; a tenant admin asks to restore one,
which waits for a second person on the approver's desk."""
import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone, translation
from django.utils.translation import gettext
from django.views.decorators.http import require_POST

from config.api import DomainError, NotFound
from tenants.actors import Actor
from tenants.models import Role
from tenants.selectors import membership_for_user

from . import selectors, services
from .calculation import money_text, percent_text
from .rules import KIND_LABELS, RulesNotInEffect, UnknownCity, city_rules, rules_file
from .trial import TRIAL_MONTHS, NoCityRules, payslip_of


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
    return render(request, "payroll/group.html", {"group": group, "trial_year": timezone.localdate().year,
                                                  "trial_months": TRIAL_MONTH_LIST})


@login_required
def employee_detail(request: HttpRequest, employee_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    employee = selectors.employee_get(membership.tenant_id, employee_id)
    today = timezone.localdate()
    return render(request, "payroll/employee.html", {
        "employee": employee, "pay": employee.pay_on(today), "pay_history": employee.pay_history.all()[:12],
        "trial_year": today.year, "trial_months": TRIAL_MONTH_LIST})


TRIAL_MONTH_LIST = list(range(1, TRIAL_MONTHS + 1))


def _kind_label(kind: str) -> str:
    return str(KIND_LABELS.get(kind, kind))


@login_required
def payslip(request: HttpRequest, employee_id: int, year: int, month: int) -> HttpResponse:
    """One employee's payslip for a month, as the trial computes it (payroll.trial.payslip_of):
    every amount with its formula in a `title` (hover). 404 for another tenant's employee."""
    membership = membership_for_user(request.user)
    employee = selectors.employee_get(membership.tenant_id, employee_id)
    if not (1 <= month <= 12 and 2000 <= year <= 2100):
        raise Http404
    context: dict = {"employee": employee, "year": year, "month": month, "problem": ""}
    try:
        slip = payslip_of(employee, year, month)
    except NoCityRules as none:
        place = none.place_zh if translation.get_language() == "zh-hans" else none.place
        context["problem"] = gettext("No social insurance and housing fund rules for %(city)s: no payslip can be "
                                     "computed.") % {"city": place}
        return render(request, "payroll/payslip.html", context, status=200)
    rules = slip["rules"]
    context["rules"] = rules
    context["city_name"] = rules.name_zh if translation.get_language() == "zh-hans" else rules.name
    if slip["pay"] is None:
        context["problem"] = gettext("%(name)s has no salary yet: no payslip can be computed.") % {"name": employee.name}
        return render(request, "payroll/payslip.html", context)
    result = slip["result"]
    c = result.contributions
    context.update({
        "pay": slip["pay"], "result": result,
        "lines": [{"label": _kind_label(line.kind), "base": line.base, "employee": line.employee,
                   "employer": line.employer, "formulas": line.formulas} for line in c.items],
        "employer_cost": result.gross + c.employer,
        "employer_cost_formula": f"{money_text(result.gross)} + {money_text(c.employer)} = "
                                 f"{money_text(result.gross + c.employer)}",
        "prev": (year, month - 1) if month > 1 else None, "next": (year, month + 1) if month < 12 else None,
    })
    return render(request, "payroll/payslip.html", context)


@login_required
def city_rules_page(request: HttpRequest) -> HttpResponse:
    """A city's social insurance and housing fund rules, with their source (?city=shanghai)."""
    membership_for_user(request.user)
    wanted = (request.GET.get("city") or "shanghai")[:60]
    on = timezone.localdate()
    context: dict = {"cities": list(rules_file().values()), "wanted": wanted, "problem": ""}
    try:
        rules = city_rules(wanted, on)
    except (UnknownCity, RulesNotInEffect) as err:
        context["problem"] = err.message
        return render(request, "payroll/rules.html", context, status=404)
    context.update({"rules": rules, "city_name": rules.name_zh if translation.get_language() == "zh-hans"
                    else rules.name,
                    "lines": [{"label": _kind_label(r.kind), "employee_rate": percent_text(r.employee_rate),
                               "employer_rate": percent_text(r.employer_rate), "floor": r.base.floor,
                               "cap": r.base.cap, "note": r.note} for r in rules.contributions]})
    return render(request, "payroll/rules.html", context)


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
