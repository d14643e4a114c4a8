"""Expense pages: every member reads their tenant's claims; writes go through the services
(each form carries an idempotency key made when the form was rendered, so a double submit
replays instead of writing twice). Another tenant's claim is a 404."""
import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_POST

from config.api import DomainError
from config.parsers import RequestTooLarge
from config.requests import MULTIPART, body_types
from tenants.actors import Actor
from tenants.selectors import membership_for_user

from .records import selectors, services
from .models import Category
from .uploads import invoice_upload_limit


@login_required
def claims_page(request: HttpRequest) -> HttpResponse:
    membership = membership_for_user(request.user)
    if request.method == "POST":
        form = request.POST
        try:
            receipt = services.claim_create(
                actor=Actor.of_member(membership), idempotency_key=form.get("form_key", ""),
                category=form.get("category"),
                city=form.get("city"), start_date=form.get("start_date"), nights=form.get("nights") or 0,
                amount=form.get("amount"), currency=form.get("currency") or "CNY",
                description=form.get("description", ""))
        except DomainError as err:
            messages.error(request, err.message)
            return redirect("expenses-claims")
        return redirect("expenses-claim", int(receipt.body["application_id"]))
    claims = list(selectors.claims_for(membership)[:200])
    policies = selectors.claims_policy(claims)
    for claim in claims:  # each row says what its check found, as the claim's page does
        claim.policy = policies[claim.id]
    return render(request, "expenses/claims.html", {
        "claims": claims, "categories": Category.choices,
        "form_key": uuid.uuid4().hex})


@login_required
def claim_page(request: HttpRequest, claim_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    claim = selectors.claim_get_for(membership, claim_id)
    return render(request, "expenses/claim.html", {
        "claim": claim, "transitions": claim.transitions.select_related("actor"), "form_key": uuid.uuid4().hex,
        "holder": selectors.claim_holder(claim), "policy": selectors.claim_policy(claim),
        "can_decide": membership.can_approve and claim.claimant_id != membership.user_id,
        "max_mb": services.MAX_INVOICE_BYTES // 1048576})


@body_types(MULTIPART)  # a form without its file is refused unread (config.requests)
@csrf_exempt  # claim_action checks it, once the invoice's upload limit is in place
def claim_invoice(request: HttpRequest, claim_id: int) -> HttpResponse:
    """The claim page's invoice form: an upload, so its route reads multipart only."""
    return claim_action(request, claim_id, "invoice")


@csrf_exempt  # checked by csrf_protect below, once an invoice's upload limit is in place
@login_required
@require_POST
def claim_action(request: HttpRequest, claim_id: int, action: str) -> HttpResponse:
    if action == "invoice":
        invoice_upload_limit(request)
    try:
        request.FILES  # noqa: B018 (parses the form and its files, within the limit)
    except RequestTooLarge:  # the request passed the upload limit while it streamed in
        messages.error(request, _("The file is larger than the limit of %(mb)d MB.")
                       % {"mb": services.MAX_INVOICE_BYTES // 1048576})
        return redirect("expenses-claim", claim_id)
    return _claim_action(request, claim_id, action)


@csrf_protect
def _claim_action(request: HttpRequest, claim_id: int, action: str) -> HttpResponse:
    membership = membership_for_user(request.user)
    selectors.claim_get_for(membership, claim_id)
    actor, key = Actor.of_member(membership), request.POST.get("form_key", "")
    try:
        if action == "invoice":
            upload = request.FILES.get("file")
            if upload is None:
                raise DomainError(_("Choose a PDF, PNG or JPEG file first."))
            if upload.size > services.MAX_INVOICE_BYTES:
                raise services.PayloadTooLarge(_("The file is %(size).1f MB; the limit is %(mb)d MB.") % {
                    "size": upload.size / 1048576, "mb": services.MAX_INVOICE_BYTES // 1048576})
            services.invoice_upload(actor=actor, claim_id=claim_id, filename=upload.name, content=upload.read(),
                                    idempotency_key=key)
        elif action == "submit":
            services.claim_submit(actor=actor, claim_id=claim_id, idempotency_key=key)
        elif action in ("approved", "rejected"):
            services.claim_decide(actor=actor, claim_id=claim_id, verdict=action,
                                  comment=request.POST.get("comment", ""), idempotency_key=key)
        elif action == "pay":
            services.claim_pay(actor=actor, claim_id=claim_id, idempotency_key=key)
        else:
            raise DomainError(_("Unknown action."))
    except DomainError as err:
        messages.error(request, err.message)
    return redirect("expenses-claim", claim_id)
