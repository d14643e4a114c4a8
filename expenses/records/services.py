"""The only writers of the expense system of record. The API, the pages and the
agent's tools all call these, so validation, authority and idempotency live here once.

Every write is one transaction: authority → arguments → idempotency record → work →
receipt. The record's unique index (tenant, operation, key) makes a concurrent
retry wait for the first and then replay its receipt; the same key with another
request is refused (422)."""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from datetime import date, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from approvals.authority import approval_covers
from config.api import Conflict, DomainError, Forbidden, NotFound, Unprocessable, strict_decimal, strict_int
from config.words import is_words, words, words_render
from idempotency.services import KeyRequired, Receipt, idempotent, key_checked  # noqa: F401 (KeyRequired: re-exported)
from tenants.actors import Actor
from tenants.models import Role

from expenses.models import (
    Category,
    ClaimStatus,
    ClaimTransition,
    ExpenseClaim,
    IdempotencyRecord,
    Invoice,
    PolicyVerdict,
)
from .selectors import claim_holder

MAX_AMOUNT = Decimal("1000000")
MAX_NIGHTS = 60
MAX_INVOICE_BYTES = 5 * 1024 * 1024
CURRENCIES = ("CNY", "USD", "EUR", "HKD", "SGD")
# Recognised by their first bytes, never by the name or the header a client sends.
INVOICE_TYPES = {b"%PDF-": "application/pdf", b"\x89PNG\r\n\x1a\n": "image/png", b"\xff\xd8\xff": "image/jpeg"}
APPROVER_ROLES = frozenset({Role.APPROVER, Role.ADMIN})
S = ClaimStatus

# The claim's state machine: (from, to) → who may take the edge.
CLAIM_TRANSITIONS: dict[tuple[str, str], str] = {
    (S.DRAFT, S.SUBMITTED): "claimant",
    (S.SUBMITTED, S.DRAFT): "claimant",        # withdrawn (the submit step's compensation)
    (S.SUBMITTED, S.APPROVED): "approver",
    (S.SUBMITTED, S.REJECTED): "approver",
    (S.APPROVED, S.PAID): "admin",
}


class PayloadTooLarge(DomainError):
    status_code = 413
    code = "payload_too_large"


# --- Idempotency ------------------------------------------------------------------------------

_key_checked = key_checked


def _idempotent(*, actor: Actor, operation: str, key: str, request: dict[str, Any],
                work: Callable[[], tuple[int, dict[str, Any]]]) -> Receipt:
    """The generic protocol over this app's table, the work and its receipt in one transaction."""
    return idempotent(IdempotencyRecord, tenant_id=actor.tenant_id, operation=operation, key=key, request=request,
                      work=lambda record: work(), in_one_transaction=True)


# --- Arguments ------------------------------------------------------------------------------------

def _id_checked(value: Any, what: str) -> int:
    try:
        number = strict_int(value)  # ASCII digits only: int() reads "١٢" as 12
    except (TypeError, ValueError):
        number = None
    if number is None or number <= 0 or number >= 2**63:
        raise DomainError(_("The %(what)s must be a numeric id (a string of digits), not %(value)s.")
                          % {"what": what, "value": repr(value)},
                          code="invalid_id")
    return number


def _amount_checked(value: Any) -> Decimal:
    try:
        amount = strict_decimal(str(value).replace(",", ""))  # ASCII digits only, as every number
    except (InvalidOperation, ValueError):
        raise DomainError(_("The amount must be a number, not %(value)s.") % {"value": repr(value)},
                          code="invalid_amount")
    if not amount.is_finite() or amount <= 0 or amount > MAX_AMOUNT:
        raise DomainError(_("The amount must be above 0 and at most %(max)s.")
                          % {"max": format(MAX_AMOUNT, ',')},
                          code="invalid_amount")
    if amount != amount.quantize(Decimal("0.01")):
        raise DomainError(_("The amount may have at most two decimals."), code="invalid_amount")
    return amount.quantize(Decimal("0.01"))


def _date_checked(value: Any) -> date:
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value).strip())
    except ValueError:
        raise DomainError(_("The date must be written YYYY-MM-DD, not %(value)s.") % {"value": repr(value)},
                          code="invalid_date")


def claim_fields_checked(*, category: Any, city: Any, start_date: Any, nights: Any, amount: Any,
                         currency: Any = "CNY", description: Any = "") -> dict[str, Any]:
    """The fields of a new claim, validated, each with a message a person can act on."""
    if category not in Category.values:
        raise DomainError(_("The category must be one of %(choices)s.") % {"choices": ', '.join(Category.values)},
                          code="invalid_category")
    city = str(city or "").strip()
    if not city or len(city) > 80:
        raise DomainError(_("Give the city (at most 80 characters)."), code="invalid_city")
    start = _date_checked(start_date)
    try:
        nights = strict_int(nights)
    except (TypeError, ValueError):
        raise DomainError(_("The number of nights must be a whole number, not %(nights)s.") % {"nights": repr(nights)},
                          code="invalid_nights")
    if nights < 0 or nights > MAX_NIGHTS or (category == Category.LODGING and nights == 0):
        raise DomainError(_("A lodging claim needs 1 to %(max)s nights; other claims 0 to %(max)s.")
                          % {"max": MAX_NIGHTS},
                          code="invalid_nights")
    currency = str(currency or "").strip().upper()
    if currency not in CURRENCIES:
        raise DomainError(_("The currency must be one of %(choices)s.") % {"choices": ', '.join(CURRENCIES)},
                          code="invalid_currency")
    description = str(description or "").strip()
    if len(description) > 500:
        raise DomainError(_("The description may be at most 500 characters."), code="invalid_description")
    return {"category": category, "city": city, "start_date": start, "end_date": start + timedelta(days=nights),
            "nights": nights, "amount": _amount_checked(amount), "currency": currency, "description": description}


def invoice_checked(*, filename: str, content: bytes) -> tuple[str, str]:
    """(clean filename, content type) of an acceptable invoice, judged by its bytes."""
    name = re.sub(r"[^\w.\- ]", "_", (filename or "invoice").strip())[:200] or "invoice"
    if not content:
        raise DomainError(_("The invoice file is empty."), code="invoice_empty")
    if len(content) > MAX_INVOICE_BYTES:
        raise PayloadTooLarge(_("The invoice is %(value)s MB; the limit is %(limit)s MB.")
                              % {"value": format(len(content) / 1048576, '.1f'), "limit": MAX_INVOICE_BYTES // 1048576},
                              code="invoice_too_large")
    content_type = next((t for magic, t in INVOICE_TYPES.items() if content.startswith(magic)), None)
    if content_type is None:
        raise Unprocessable(_("An invoice must be a PDF, PNG or JPEG file; this file is none of them."),
                            code="invoice_type")
    return name, content_type


# --- Authority and the state machine -----------------------------------------------------------

def _claim_for(actor: Actor, claim_id: Any, *, lock: bool = False) -> ExpenseClaim:
    rows = ExpenseClaim.objects.select_for_update() if lock else ExpenseClaim.objects
    claim = rows.filter(tenant_id=actor.tenant_id, id=_id_checked(claim_id, "application_id")).first()
    if claim is None:
        raise NotFound(_("No such expense claim."), code="claim_not_found")
    return claim


def _may(actor: Actor, claim: ExpenseClaim, who: str) -> None:
    if who == "claimant":
        if actor.role is None or actor.user_id == claim.claimant_id or actor.role == Role.ADMIN:
            return  # the agent acts for the claimant who started its run
        raise Forbidden(_("Only the claimant (or a tenant admin) may change this claim."), code="not_claimant")
    if actor.role not in APPROVER_ROLES or (who == "admin" and actor.role != Role.ADMIN):
        raise Forbidden(_("Only a tenant admin may do this.") if who == "admin"
                        else _("Only an approver or a tenant admin may do this."), code="role_required")
    if who == "approver" and actor.user_id == claim.claimant_id:
        raise Forbidden(_("You filed this claim, so someone else must decide it (four-eyes rule)."), code="four_eyes")


def _not_held(actor: Actor, claim: ExpenseClaim) -> None:
    """A claim a run created changes status only through that run until the run has ended for
    good: its approver is deciding this very claim, so a direct submit would act behind the
    approval's back. Refused with a link to the run, where it can be followed or cancelled; the
    agent's write for the holding run itself goes on. (An invoice may still be filed to the
    draft: it changes nothing the approver decides, and the approver is glad of it.)"""
    run = claim_holder(claim)
    if run is None or (actor.role is None and actor.run_id == run.id):
        return
    raise Conflict(words(gettext_noop("Run %(run)s holds this claim until it ends, so the claim changes only "
                                      "through that run. Open the run to follow it, or cancel the run first."),
                         run=str(run.id)),
                   code="held_by_run", extra={"run": str(run.id), "run_url": reverse("run", args=[run.id])})


def _claim_transition(claim: ExpenseClaim, to: str, *, actor: Actor, reason: str = "", **fields: Any) -> None:
    """The claim's one status writer: allowed edge, hold, compare-and-set, transition row."""
    assert transaction.get_connection().in_atomic_block, "claim transitions run inside a transaction"
    edge = (claim.status, to)
    if edge not in CLAIM_TRANSITIONS:
        raise Conflict(_("A %(status)s claim cannot become %(to)s.")
                       % {"status": claim.get_status_display().lower(), "to": str(ClaimStatus(to).label).lower()},
                       code="claim_status",
                       extra={"status": claim.status})
    _may(actor, claim, CLAIM_TRANSITIONS[edge])
    _not_held(actor, claim)
    if not ExpenseClaim.objects.filter(id=claim.id, status=claim.status).update(status=to, **fields):
        raise Conflict(_("The claim changed meanwhile; reload it."), code="claim_changed")
    ClaimTransition.objects.create(claim=claim, from_status=claim.status, to_status=to, actor_id=actor.user_id,
                                   approval_id=actor.approval_id, reason=reason)
    claim.status = to
    for name, value in fields.items():
        setattr(claim, name, value)


def claim_body(claim: ExpenseClaim) -> dict[str, Any]:
    return {"application_id": str(claim.id), "status": claim.status, "category": claim.category,
            "city": claim.city, "start_date": claim.start_date.isoformat(), "end_date": claim.end_date.isoformat(),
            "nights": claim.nights, "amount": str(claim.amount), "currency": claim.currency,
            "per_night": str(claim.per_night) if claim.per_night is not None else None,
            "policy_verdict": claim.policy_verdict,
            "policy_limit": str(claim.policy_limit) if claim.policy_limit is not None else None,
            "policy_source": claim.policy_source, "invoices": claim.invoices.count()}


# --- Services -------------------------------------------------------------------------------------

def claim_create(*, actor: Actor, idempotency_key: str, **fields: Any) -> Receipt:
    """A new draft claim for the actor (or, for the agent, the user whose run it is)."""
    key = _key_checked(idempotency_key)
    checked = claim_fields_checked(**fields)
    if actor.user_id is None:
        raise Forbidden(_("A claim needs a claimant."), code="no_claimant")

    def work() -> tuple[int, dict[str, Any]]:
        claim = ExpenseClaim.objects.create(tenant_id=actor.tenant_id, claimant_id=actor.user_id, **checked)
        return 201, claim_body(claim)

    return _idempotent(actor=actor, operation="claim_create", key=key, request=checked, work=work)


def invoice_stage(*, actor: Actor, filename: str, content: bytes) -> Invoice:
    """Keep an uploaded invoice, not yet filed to a claim (a chat attachment a run will file)."""
    name, content_type = invoice_checked(filename=filename, content=content)
    return Invoice.objects.create(tenant_id=actor.tenant_id, filename=name, content_type=content_type,
                                  size=len(content), checksum=hashlib.sha256(content).hexdigest(), content=content,
                                  uploaded_by_id=actor.user_id)


def invoice_upload(*, actor: Actor, claim_id: Any, idempotency_key: str, filename: str = "",
                   content: bytes | None = None, invoice_id: Any = None) -> Receipt:
    """File an invoice to a draft claim: new bytes, or an invoice staged before."""
    key = _key_checked(idempotency_key)
    staged = None
    if invoice_id is not None:
        staged = Invoice.objects.filter(tenant_id=actor.tenant_id, id=_id_checked(invoice_id, "invoice id")).first()
        if staged is None:
            raise NotFound(_("No such invoice upload."), code="invoice_not_found")
        request = {"claim": str(claim_id), "invoice": str(staged.id)}
    else:
        name, content_type = invoice_checked(filename=filename, content=content or b"")
        request = {"claim": str(claim_id), "checksum": hashlib.sha256(content).hexdigest(), "name": name}

    def work() -> tuple[int, dict[str, Any]]:
        claim = _claim_for(actor, claim_id, lock=True)
        _may(actor, claim, "claimant")
        if claim.status != S.DRAFT:
            raise Conflict(_("Invoices can be added only while the claim is a draft."), code="claim_status")
        if staged is not None:
            if staged.claim_id not in (None, claim.id):
                raise Conflict(_("This invoice is filed to another claim."), code="invoice_taken")
            Invoice.objects.filter(id=staged.id).update(claim=claim)
            invoice = staged
        else:
            invoice = Invoice.objects.create(tenant_id=actor.tenant_id, claim=claim, filename=name,
                                             content_type=content_type, size=len(content),
                                             checksum=request["checksum"], content=content,
                                             uploaded_by_id=actor.user_id)
        return 201, {"invoice_id": str(invoice.id), "application_id": str(claim.id), "filename": invoice.filename,
                     "content_type": invoice.content_type, "size": invoice.size, "checksum": invoice.checksum}

    return _idempotent(actor=actor, operation="invoice_upload", key=key, request=request, work=work)


def policy_over(claim: ExpenseClaim, policy: dict[str, Any] | None) -> bool:
    """Does this claim need an approver before it is submitted? The system of record's own
    check: the recorded verdict, and its own arithmetic against the cited limit — a verdict
    of "within" does not pass a claim whose amount per night is above the limit."""
    if not policy or policy.get("verdict") != PolicyVerdict.WITHIN:
        return True
    try:
        limit = Decimal(str(policy.get("limit")))
    except InvalidOperation:
        return True
    per_unit = claim.per_night if claim.nights else claim.amount
    return per_unit is None or per_unit > limit or claim.currency != "CNY"


def check_reason(policy: dict[str, Any] | None) -> str:
    """What the history records for a submit: the policy check's finding as words (config.words),
    kept as their JSON text in the transition's reason, so each reader reads it in their language
    (`reason_shown`); a check without words (recorded before) gives its English summary."""
    found = (policy or {}).get("summary_words")
    if is_words(found):
        return json.dumps(found, ensure_ascii=False)
    return (policy or {}).get("summary", "submitted")


def reason_shown(reason: str) -> str:
    """A history row's reason as the reader reads it: stored words rendered in the active language;
    a code ("submitted") or prose written before words as it is."""
    if reason.startswith("{"):
        try:
            stored = json.loads(reason)
        except ValueError:
            return reason
        if is_words(stored):
            return words_render(stored)
    return reason


def claim_submit(*, actor: Actor, claim_id: Any, idempotency_key: str, policy: dict[str, Any] | None = None) -> Receipt:
    """draft → submitted, recording the policy check. The agent may submit a claim that is
    not within the policy only under a decided approval for exactly this claim."""
    key = _key_checked(idempotency_key)
    request = {"claim": str(claim_id), "policy": policy or {}}

    def work() -> tuple[int, dict[str, Any]]:
        claim = _claim_for(actor, claim_id, lock=True)
        if actor.role is None and policy_over(claim, policy):
            approval_covers(tenant_id=actor.tenant_id, approval_id=actor.approval_id, tool="submit_claim",
                            arguments={"application_id": claim.id})
        limit = (policy or {}).get("limit")
        _claim_transition(claim, S.SUBMITTED, actor=actor, reason=check_reason(policy),
                          submitted_at=timezone.now(), policy_verdict=(policy or {}).get("verdict", ""),
                          policy_limit=Decimal(str(limit)) if limit not in (None, "") else None,
                          policy_source=(policy or {}).get("source", "") or "")
        return 200, claim_body(claim)

    return _idempotent(actor=actor, operation="claim_submit", key=key, request=request, work=work)


def claim_withdraw(*, actor: Actor, claim_id: Any, idempotency_key: str) -> Receipt:
    """submitted → draft: the submit step's compensation (and the claimant's own undo)."""
    key = _key_checked(idempotency_key)

    def work() -> tuple[int, dict[str, Any]]:
        claim = _claim_for(actor, claim_id, lock=True)
        _claim_transition(claim, S.DRAFT, actor=actor, reason="withdrawn", submitted_at=None)
        return 200, claim_body(claim)

    return _idempotent(actor=actor, operation="claim_withdraw", key=key, request={"claim": str(claim_id)}, work=work)


def claim_decide(*, actor: Actor, claim_id: Any, verdict: str, comment: str = "", idempotency_key: str) -> Receipt:
    """submitted → approved | rejected, by an approver who did not file it."""
    key = _key_checked(idempotency_key)
    if verdict not in (S.APPROVED, S.REJECTED):
        raise DomainError(_("The verdict must be approved or rejected."), code="invalid_verdict")

    def work() -> tuple[int, dict[str, Any]]:
        claim = _claim_for(actor, claim_id, lock=True)
        _claim_transition(claim, verdict, actor=actor, reason=comment[:2000])
        return 200, claim_body(claim)

    return _idempotent(actor=actor, operation="claim_decide", key=key,
                       request={"claim": str(claim_id), "verdict": verdict}, work=work)


def claim_pay(*, actor: Actor, claim_id: Any, idempotency_key: str) -> Receipt:
    """approved → paid, by a tenant admin."""
    key = _key_checked(idempotency_key)

    def work() -> tuple[int, dict[str, Any]]:
        claim = _claim_for(actor, claim_id, lock=True)
        _claim_transition(claim, S.PAID, actor=actor, reason="paid")
        return 200, claim_body(claim)

    return _idempotent(actor=actor, operation="claim_pay", key=key, request={"claim": str(claim_id)}, work=work)
