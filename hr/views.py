"""Hiring pages: TANs, their approval (the event that starts candidate matching), the
matching run and the persisted matches. Another tenant's TAN is a 404."""
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from config.api import DomainError, strict_int
from tenants.actors import Actor
from tenants.selectors import membership_for_user

from . import selectors, services
from .models import Candidate, Seniority


@login_required
def tans_page(request: HttpRequest) -> HttpResponse:
    membership = membership_for_user(request.user)
    if request.method == "POST":
        try:
            tan = services.tan_create(actor=Actor.of_member(membership), title=request.POST.get("title", ""),
                                      location=request.POST.get("location", ""),
                                      skills=request.POST.get("skills", ""),
                                      seniority=strict_int(request.POST.get("seniority") or Seniority.MID))
        except (DomainError, ValueError) as err:
            messages.error(request, getattr(err, "message", _("Check the form.")))
            return redirect("hr-tans")
        return redirect("hr-tan", tan.id)
    return render(request, "hr/tans.html", {
        "tans": selectors.tans_for(membership), "seniorities": Seniority.choices,
        "candidates": Candidate.objects.filter(tenant_id=membership.tenant_id)})


def _tan_context(membership, tan_id: int) -> dict:
    tan = selectors.tan_get_for(membership, tan_id)
    return {"tan": tan, "matches": selectors.matches_for_tan(membership, tan_id),
            "run": selectors.matching_run_for_tan(membership, tan_id),
            "events": selectors.events_for_tan(membership, tan_id), "can_approve": membership.can_approve}


@login_required
def tan_page(request: HttpRequest, tan_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    context = _tan_context(membership, tan_id)
    if request.htmx:  # the matching panel refreshes itself until the run has finished
        return render(request, "hr/tan.html#matching", context)
    return render(request, "hr/tan.html", context)


@login_required
@require_POST
def tan_approve(request: HttpRequest, tan_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    selectors.tan_get_for(membership, tan_id)
    try:
        services.tan_approve(actor=Actor.of_member(membership), tan_id=tan_id)
        messages.success(request, _("Approved. The supervisor starts candidate matching from the approval event."))
    except DomainError as err:
        messages.error(request, err.message)
    return redirect("hr-tan", tan_id)
