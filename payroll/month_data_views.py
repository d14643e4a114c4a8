"""Pages of the month's data: the attendance rules (every member reads, a tenant admin changes
them), a group's monthly inputs (a section of the group page, with its own page for an upload's
refusals), the year-to-date openings, and the HR export's ID and bank details (an admin's upload)."""
from __future__ import annotations

import uuid
from decimal import Decimal

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext
from django.views.decorators.http import require_POST

from config.api import DomainError, Forbidden
from config.requests import MULTIPART, body_types
from tenants.actors import Actor
from tenants.models import Role
from tenants.selectors import membership_for_user

from .month_data_apis import openings_listed, term_text
from .month_data_forms import TERM_LABELS, AttendanceRulesForm
from .records import selectors, services
from .records.month_inputs import TERM_NAMES, attendance_history, attendance_terms_on, inputs_versions


# The worked example the rules page shows beside the hourly wage rule.
EXAMPLE_BASE, CENT = Decimal("10000"), Decimal("0.01")


def _form_key(request: HttpRequest) -> str:
    # Rendered into the form: a double submit (or a reload) repeats the key, never the write.
    return f"form:{request.POST.get('key', '')[:64]}"


def _upload_of(request: HttpRequest) -> tuple[bytes, str]:
    upload = request.FILES.get("file")
    return (upload.read(), upload.name or "") if upload is not None else (b"", "")


@login_required
def attendance_rules_page(request: HttpRequest) -> HttpResponse:
    """The terms in force, their statute, every change; a tenant admin's form for a change from a
    date (services.attendance_rules_set). Anyone else's POST is refused (403) unread."""
    membership = membership_for_user(request.user)
    may_edit = services.attendance_rules_may_change(membership.role)
    today = timezone.localdate()
    terms = attendance_terms_on(membership.tenant_id, today)
    form, status = None, 200
    if request.method == "POST":
        if not may_edit:
            raise Forbidden(gettext("Only a tenant admin may change the attendance rules."), code="admin_required")
        form = AttendanceRulesForm(request.POST)
        if form.is_valid():
            try:
                services.attendance_rules_set(actor=Actor.of_member(membership),
                                              effective_from=form.cleaned_data["effective_from"],
                                              terms=form.terms(), note=form.cleaned_data["note"])
            except DomainError as err:
                field = (err.extra or {}).get("field")
                form.add_error(field if field in form.fields else None, err.message)
                status = err.status_code
            else:
                messages.success(request, gettext("Attendance rules from %(date)s are saved.")
                                 % {"date": form.cleaned_data["effective_from"].isoformat()})
                return redirect("payroll-attendance")
        else:
            status = 400
    elif may_edit:
        form = AttendanceRulesForm(initial={"effective_from": today.replace(day=1).isoformat(),
                                            **{name: term_text(getattr(terms, name)) for name in TERM_NAMES}})
    rows = [{"label": TERM_LABELS[name], "name": name, "value": term_text(getattr(terms, name))}
            for name in TERM_NAMES]
    history = [{"row": row, "terms": [(TERM_LABELS[name], term_text(getattr(row, name))) for name in TERM_NAMES]}
               for row in attendance_history(membership.tenant_id)]
    return render(request, "payroll/attendance.html", {
        "terms": terms, "rows": rows, "history": history, "form": form,
        "term_labels": [TERM_LABELS[name] for name in TERM_NAMES],
        "example_base": EXAMPLE_BASE,
        "hourly_example": terms.hourly_wage(EXAMPLE_BASE).quantize(CENT),
        "daily_example": (EXAMPLE_BASE / terms.paid_days_per_month).quantize(CENT),
    }, status=status)


def inputs_context(request: HttpRequest, membership, group, *, refused: DomainError | None = None,
                   year: int | None = None, month: int | None = None) -> dict:
    """What the group's inputs section shows: its versions, the upload form, an upload's refusals."""
    today = timezone.localdate()
    return {"group": group, "versions": inputs_versions(tenant_id=membership.tenant_id, group_id=group.id)[:24],
            "inputs_year": year or today.year, "inputs_month": month or today.month, "months": range(1, 13),
            "refused": refused, "refusals": (refused.extra or {}).get("refusals", []) if refused else [],
            "refused_unknown": (refused.extra or {}).get("unknown_columns", []) if refused else [],
            "write_key": uuid.uuid4().hex}


@body_types(MULTIPART)
@login_required
def group_inputs(request: HttpRequest, group_id: int) -> HttpResponse:
    """GET: the group's inputs on a page of their own. POST (any member): import a month's file
    (services.monthly_inputs_import); a good file goes back to the group page, a refused one
    stays here with every refusal listed (nothing was imported)."""
    membership = membership_for_user(request.user)
    group = selectors.group_get(membership.tenant_id, group_id)
    if request.method != "POST":
        return render(request, "payroll/group_inputs.html", inputs_context(request, membership, group))
    year, month = request.POST.get("year", ""), request.POST.get("month", "")
    raw, filename = _upload_of(request)
    try:
        receipt = services.monthly_inputs_import(tenant=membership.tenant_id, group=group.id, year=year,
                                                 month=month, file=raw, filename=filename, user=request.user,
                                                 idempotency_key=_form_key(request))
    except DomainError as err:
        shown_year, shown_month = (int(year) if year.isdigit() else None), (int(month) if month.isdigit() else None)
        return render(request, "payroll/group_inputs.html",
                      inputs_context(request, membership, group, refused=err, year=shown_year, month=shown_month),
                      status=err.status_code)
    body = receipt.body
    messages.success(request, gettext("Inputs of %(year)s-%(month)02d imported: version %(version)s, %(rows)s rows.")
                     % {"year": body["year"], "month": body["month"], "version": body["version"],
                        "rows": body["row_count"]})
    return redirect(f"{reverse('payroll-group', args=[group.id])}#inputs")


@body_types(MULTIPART)
@login_required
def year_openings_page(request: HttpRequest) -> HttpResponse:
    """The year's openings (every member reads); an approver or a tenant admin imports a file,
    a tenant admin may replace figures already imported."""
    membership = membership_for_user(request.user)
    wanted = request.GET.get("year") or request.POST.get("year") or ""
    year = int(wanted) if wanted.isdigit() and 2000 <= int(wanted) <= 2100 else timezone.localdate().year
    refused, status = None, 200
    if request.method == "POST":
        raw, filename = _upload_of(request)
        try:
            receipt = services.year_openings_import(
                actor=Actor.of_member(membership), year=year, file=raw, filename=filename,
                replace=request.POST.get("replace") == "on", idempotency_key=_form_key(request))
        except DomainError as err:
            refused, status = err, err.status_code
        else:
            messages.success(request, gettext("Year-to-date figures of %(count)s employees imported for %(year)s.")
                             % {"count": receipt.body["imported"], "year": year})
            return redirect(f"{reverse('payroll-year-openings')}?year={year}")
    return render(request, "payroll/year_openings.html", {
        "year": year, "openings": openings_listed(membership.tenant_id, year),
        "may_import": membership.role in services.APPROVER_ROLES, "may_replace": membership.role == Role.ADMIN,
        "refused": refused, "refusals": (refused.extra or {}).get("refusals", []) if refused else [],
        "write_key": uuid.uuid4().hex}, status=status)


@body_types(MULTIPART)
@login_required
@require_POST
def employee_identities_upload(request: HttpRequest) -> HttpResponse:
    """A tenant admin imports the HR export's ID and bank columns (services.employee_identities_import)."""
    membership = membership_for_user(request.user)
    if membership.role != Role.ADMIN:
        raise Forbidden(gettext("Only a tenant admin may import ID and bank details."), code="admin_required")
    raw, filename = _upload_of(request)
    try:
        receipt = services.employee_identities_import(actor=Actor.of_member(membership), file=raw,
                                                      filename=filename, idempotency_key=_form_key(request))
    except DomainError as err:
        return render(request, "payroll/year_openings.html", {
            "year": timezone.localdate().year, "openings": openings_listed(membership.tenant_id,
                                                                           timezone.localdate().year),
            "may_import": True, "may_replace": True, "identities_refused": err,
            "identity_refusals": (err.extra or {}).get("refusals", []), "write_key": uuid.uuid4().hex},
            status=err.status_code)
    messages.success(request, gettext("ID and bank details of %(count)s employees imported.")
                     % {"count": receipt.body["updated"]})
    return redirect("payroll-year-openings")
