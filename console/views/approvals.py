"""The approver's desk: the inbox (queue + card), a run's approval history, the matrix.
Decisions go through the API (/api/v1/approvals/{id}/approve/), the one entry the page
shares with scripts; these views only read, except the matrix form."""
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from approvals.matrix import DECIDING_ROLES, matrix_rows, matrix_rule_update, measures_of
from approvals.models import ApprovalStatus
from approvals.selectors import (
    approval_card,
    approval_get,
    approval_history,
    approvals_for,
    reminders_for,
)
from config.api import DomainError
from config.forms import id_parse, number_parse
from tenants.models import Membership, Role
from tenants.selectors import membership_for_user
from workflows.tools import tool_title


def _queue_context(membership: Membership, selected_id: int | None) -> dict:
    pending = list(approvals_for(membership, ApprovalStatus.PENDING))
    recent = list(approvals_for(membership).exclude(status=ApprovalStatus.PENDING).order_by("-decided_at",
                                                                                             "-deadline")[:8])
    return {"pending": pending, "recent": recent, "selected_id": selected_id,
            "reminders": reminders_for(membership), "can_decide": membership.can_approve}


@login_required
def inbox(request: HttpRequest, approval_id: int | None = None) -> HttpResponse:
    membership = membership_for_user(request.user)
    context = _queue_context(membership, approval_id)
    if approval_id is None and context["pending"]:
        approval = context["pending"][0]
    else:
        approval = approval_get(membership, approval_id) if approval_id else None
    context["selected_id"] = approval.id if approval else None
    context["card"] = approval_card(membership, approval) if approval else None
    return render(request, "approvals/inbox.html", context)


@login_required
def queue_partial(request: HttpRequest) -> HttpResponse:
    membership = membership_for_user(request.user)
    selected = request.GET.get("selected")
    try:
        selected_id = id_parse(selected, what="selected") if selected else None
    except DomainError as err:
        return HttpResponseBadRequest(err.message)
    context = _queue_context(membership, selected_id)
    return render(request, "approvals/inbox.html#queue", context)


@login_required
def card_partial(request: HttpRequest, approval_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    card = approval_card(membership, approval_get(membership, approval_id))
    return render(request, "approvals/inbox.html#card", {"card": card, "can_decide": membership.can_approve})


@login_required
def run_history(request: HttpRequest, run_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    history = approval_history(membership, run_id)
    # The role each approval needs and each decision's verdict, as the reader reads them.
    roles = dict(Role.choices)
    verdicts = dict(ApprovalStatus.choices)
    for approval in history["approvals"]:
        approval.needs_role_label = roles.get(approval.needs_role, approval.needs_role)
    for decision in history["decisions"]:
        decision.verdict_label = verdicts.get(decision.verdict, decision.verdict)
    return render(request, "approvals/history.html", history)


@login_required
@require_http_methods(["GET", "POST"])
def matrix(request: HttpRequest) -> HttpResponse:
    membership = membership_for_user(request.user)
    if request.method == "POST":
        tool = request.POST.get("tool", "")
        try:
            # The times are parsed (finite, bounded, ASCII) here; the limits by the service, after its role check.
            hours = number_parse(request.POST.get("deadline_hours"), what="The deadline (hours)", minimum=0,
                                 maximum=24 * 365, places=2, required=True)
            minutes = number_parse(request.POST.get("remind_minutes") or "0", what="The reminder (minutes)",
                                   minimum=0, maximum=60 * 24 * 365, places=2)
            matrix_rule_update(
                membership=membership, tool=tool, roles=request.POST.getlist("roles"),
                deadline_seconds=round(hours * 3600), remind_before_seconds=round(minutes * 60),
                # One field per measure the tool declares ("<measure>_limit"), blank for none.
                limits={m.name: request.POST.get(f"{m.name}_limit") for m in measures_of(tool)},
                above_limit_role=request.POST.get("above_limit_role", Role.ADMIN))
        except DomainError as err:
            if err.status_code == 403:
                raise
            messages.error(request, err.message)
        else:
            messages.success(request, _("Saved the rule for %(tool)s; pending approvals re-routed.")
                             % {"tool": tool_title(tool)})
        return redirect("approvals-matrix")
    return render(request, "approvals/matrix.html", {
        "rows": matrix_rows(membership), "can_edit": membership.role == Role.ADMIN,
        "deciding_roles": [(r.value, r.label) for r in DECIDING_ROLES]})
