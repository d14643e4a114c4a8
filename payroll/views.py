"""Payroll pages: readable by every role of the tenant; another tenant's id is a 404.
Writes: anyone takes a whole-tenant snapshot; a tenant admin asks to restore one, which
waits for a second person on the approver's desk; an approver or a tenant admin records an
employee's pay on the employee page; Keel's staff change the (global) city rules on the
rules page."""
import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext
from django.views.decorators.http import require_POST

from config.api import DomainError, Forbidden, NotFound
from tenants.actors import Actor
from tenants.models import Role
from tenants.selectors import membership_for_user

from .records.evaluator import FormulaError
from .records import selectors, services
from .records.calculation import money_text, percent_text
from .forms import CityRulePeriodForm, PayForm
from .models import CityRulePeriod, DeductionKind
from .records.rules import KIND_LABELS, RulesNotInEffect, UnknownCity, city_rules, note_text, period_rows, rules_all
from .records.trial import TRIAL_MONTHS, NoCityRules, payslip_of


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
    year = timezone.localdate().year
    return render(request, "payroll/group.html", {"group": group, "trial_year": year,
                                                  "trial_months": TRIAL_MONTH_LIST, **_group_computed(group, year)})


def _group_computed(group, year: int) -> dict:
    """What the group's items compute for its first employee with a salary in January (the
    payslip's evaluation), with the rules used; or why nothing is computed."""
    first = next((e for e in group.employees.order_by("employee_no") if e.pay_on(timezone.localdate())), None)
    if first is None:
        return {"computed": None}
    try:
        slip = payslip_of(first, year, 1)
    except NoCityRules as none:
        place = none.place_zh if translation.get_language() == "zh-hans" else none.place
        return {"computed": None, "computed_problem": gettext(
            "No social insurance and housing fund rules for %(city)s: the group's items cannot be computed. Keel's "
            "staff can enter the city's rules on the rules page.") % {"city": place}}
    except FormulaError as err:
        return {"computed": None, "computed_problem": str(err)}
    rules = slip["rules"]
    return {"computed": {"employee": first, "items": _items_shown(slip["result"]), "rules": rules,
                         "missing_inputs": slip["result"].missing_inputs,
                         "city_name": rules.name_zh if translation.get_language() == "zh-hans" else rules.name}}


def _items_shown(result) -> list[dict]:
    """Evaluated items as the payslip and the group page show them."""
    zh = translation.get_language() == "zh-hans"
    return [{"name": i.name_zh if zh and i.name_zh else i.name, "code": i.code, "formula": i.formula, "base": i.base,
             "rate": percent_text(i.rate) if i.rate is not None else "", "amount": i.amount, "detail": i.detail}
            for i in result.items]


@login_required
def employee_detail(request: HttpRequest, employee_id: int) -> HttpResponse:
    """An employee, the pay in force and its history. Approvers and tenant admins also get the
    form that records a new pay (services.employee_pay_record, keyed by the form's key); anyone
    else's POST is refused (403) before anything is read from it."""
    membership = membership_for_user(request.user)
    employee = selectors.employee_get(membership.tenant_id, employee_id)
    may_edit = membership.role in services.APPROVER_ROLES
    today = timezone.localdate()
    pay = employee.pay_on(today)
    form, status = None, 200
    if request.method == "POST":
        if not may_edit:
            raise Forbidden(gettext("Only an approver or a tenant admin may change an employee's pay."),
                            code="role_required")
        form = PayForm(request.POST)
        if form.is_valid():
            try:
                services.employee_pay_record(
                    actor=Actor.of_member(membership), idempotency_key=_form_key(request),
                    employee_pay=[{"employee_id": str(employee.id), "pay": form.pay()}],
                    source=f"{request.user.get_username()}, employee page")
            except DomainError as err:
                form.add_error(None, err.message)
                status = err.status_code
            else:
                messages.success(request, gettext("Pay of %(name)s recorded from %(date)s.")
                                 % {"name": employee.name, "date": form.cleaned_data["effective_from"].isoformat()})
                return redirect("payroll-employee", employee.id)
        else:
            status = 400
    elif may_edit:
        form = PayForm(initial={**PayForm.initial_from(pay, on=today), "key": uuid.uuid4().hex})
    deduction_labels = dict(DeductionKind.choices)
    history = [{"row": row, "deductions": [(deduction_labels.get(kind, kind), amount)
                                           for kind, amount in (row.deductions_breakdown or {}).items()]}
               for row in employee.pay_history.all()[:24]]
    return render(request, "payroll/employee.html", {
        "employee": employee, "pay": pay, "pay_history": history, "form": form,
        "total_not_by_kind": bool(pay and pay.special_additional_deductions and not pay.deductions_breakdown),
        "trial_year": today.year, "trial_months": TRIAL_MONTH_LIST}, status=status)


TRIAL_MONTH_LIST = list(range(1, TRIAL_MONTHS + 1))


def _kind_label(kind: str) -> str:
    return str(KIND_LABELS.get(kind, kind))


@login_required
def payslip(request: HttpRequest, employee_id: int, year: int, month: int) -> HttpResponse:
    """One employee's payslip for a month, as the trial computes it (payroll.records.trial.payslip_of):
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
        "items": _items_shown(result),
        "missing_inputs": result.missing_inputs,
        "employer_cost": result.gross + c.employer,
        "employer_cost_formula": f"{money_text(result.gross)} + {money_text(c.employer)} = "
                                 f"{money_text(result.gross + c.employer)}",
        "prev": (year, month - 1) if month > 1 else None, "next": (year, month + 1) if month < 12 else None,
    })
    return render(request, "payroll/payslip.html", context)


@login_required
def city_rules_page(request: HttpRequest) -> HttpResponse:
    """A city's social insurance and housing fund rules, with their source (?city=shanghai).
    Every member reads them; Keel's staff (who need no tenant: the rules are global) also get
    a form per period of the city."""
    if not services.city_rules_may_change(request.user):
        membership_for_user(request.user)
    return _rules_page(request, (request.GET.get("city") or "shanghai")[:60])


def _rules_page(request: HttpRequest, wanted: str, *, bound: CityRulePeriodForm | None = None,
                status: int = 200) -> HttpResponse:
    on = timezone.localdate()
    context: dict = {"cities": list(rules_all().values()), "wanted": wanted, "problem": ""}
    try:
        rules = city_rules(wanted, on)
    except (UnknownCity, RulesNotInEffect) as err:
        context["problem"] = err.message
        return render(request, "payroll/rules.html", context, status=404)
    context.update({"rules": rules, "city_name": rules.name_zh if translation.get_language() == "zh-hans"
                    else rules.name,
                    "lines": [{"label": _kind_label(r.kind), "employee_rate": percent_text(r.employee_rate),
                               "employer_rate": percent_text(r.employer_rate), "floor": r.base.floor,
                               "cap": r.base.cap, "note": note_text(r.note, translation.get_language())}
                              for r in rules.contributions],
                    "notes": [note_text(n, translation.get_language()) for n in rules.notes]})
    rows = period_rows(rules.key)
    context["row"] = rows.get(rules.effective_from)
    if services.city_rules_may_change(request.user):
        editing = []
        for period in rules_all()[rules.key].periods:
            row = rows.get(period.effective_from)
            if row is None:
                continue  # the file's rules (an empty table): nothing to change here
            form = bound if bound is not None and bound.period.effective_from == period.effective_from else \
                CityRulePeriodForm(period=period, initial=CityRulePeriodForm.initial_from(period, row))
            editing.append({"period": period, "row": row, "form": form})
        context["editing"] = editing
    return render(request, "payroll/rules.html", context, status=status)


@login_required
@require_POST
def city_rule_period_change(request: HttpRequest, period_id: int) -> HttpResponse:
    """Staff save one period's figures (services.city_rule_period_change); anyone else: 403."""
    if not services.city_rules_may_change(request.user):
        raise Forbidden(gettext("Only Keel's staff may change the city rules: every tenant's payroll reads them."),
                        code="staff_required")
    row = CityRulePeriod.objects.filter(id=period_id).first()
    if row is None:
        raise Http404
    period = next((p for p in rules_all()[row.city].periods if p.effective_from == row.effective_from), None)
    if period is None:
        raise Http404
    form = CityRulePeriodForm(request.POST, period=period)
    if not form.is_valid():
        return _rules_page(request, row.city, bound=form, status=400)
    try:
        services.city_rule_period_change(user=request.user, period_id=row.id, **form.figures())
    except DomainError as err:
        form.add_error(None, err.message)
        return _rules_page(request, row.city, bound=form, status=err.status_code)
    messages.success(request, gettext("The rules of %(city)s from %(start)s are saved.")
                     % {"city": row.name_zh if translation.get_language() == "zh-hans" else row.name,
                        "start": row.effective_from.isoformat()})
    return redirect(f"{reverse('payroll-rules')}?city={row.city}")


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
