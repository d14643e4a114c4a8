"""An invoice attached in the chat (issue 15): a user filing an expense claim in the
conversation may attach the invoice — a PDF, PNG or JPEG of at most 5 MB, the same
limits as the expense pages' upload, judged by the file's bytes.

Everything is checked before anything is written: a file that is not an invoice, too
large, or attached to a message that neither files a claim nor answers the claim's
question is refused with a clear message, and no message, invoice or run is made. A
good file is staged in the expense system of record (with its SHA-256) and handed to
the turn; the claim run's upload step files it to the claim its create step made."""
from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from config.api import DomainError
from expenses.models import Invoice
from expenses.services import (
    MAX_INVOICE_BYTES,
    Actor,
    PayloadTooLarge,
    invoice_checked,
    invoice_stage,
)
from tenants.models import Membership
from timeline.models import Activity
from timeline.selectors import conversation_get_for
from timeline.services import frame_record

from .expense_front import (
    ASK_ROUTE,
    START_ROUTE,
    attached_invoice,
    awaits_claim_facts,
    is_expense_request,
)
from .models import Message
from .orchestrator import message_post, message_validate

INVOICE_SUFFIXES = (".pdf", ".png", ".jpg", ".jpeg")


def too_large(size: int) -> PayloadTooLarge:
    return PayloadTooLarge(f"The invoice is {size / 1048576:.1f} MB; the limit is {MAX_INVOICE_BYTES // 1048576} MB.",
                           code="invoice_too_large")


def invoice_message_post(*, membership: Membership, conversation_id: int, text: str | None, filename: str,
                         content: bytes) -> dict[str, Any]:
    """Post a chat message with an invoice attached: → message_post's answer."""
    conversation = conversation_get_for(membership, conversation_id)  # another tenant's: 404 first
    text = message_validate(text)
    if len(content) > MAX_INVOICE_BYTES:
        raise too_large(len(content))
    name, _content_type = invoice_checked(filename=filename, content=content)
    if not (is_expense_request(text) or awaits_claim_facts(conversation.id)):
        raise DomainError(_("An invoice can be attached to an expense claim only: say what it is for, e.g. “Please file an expense claim: lodging in Beijing, 2 nights from 2026-11-16, 1,800 yuan in total”. Nothing was sent."),
                          code="invoice_without_claim")
    invoice = invoice_stage(actor=Actor(tenant_id=membership.tenant_id, user_id=membership.user_id,
                                        role=membership.role), filename=name, content=content)
    token = attached_invoice.set(invoice.id)
    try:
        result = message_post(membership=membership, conversation_id=conversation.id, text=text)
    except BaseException:
        Invoice.objects.filter(id=invoice.id, claim__isnull=True).delete()  # the message was refused
        raise
    finally:
        attached_invoice.reset(token)
    activity_id = int(result["activity_id"])
    if Activity.objects.filter(id=activity_id).values_list("route", flat=True).first() not in (ASK_ROUTE, START_ROUTE):
        # The turn went elsewhere (it did not file a claim): the staged invoice is not kept.
        Invoice.objects.filter(id=invoice.id, claim__isnull=True).delete()
        return result
    with transaction.atomic():
        Message.objects.filter(activity_id=activity_id, role=Message.Role.USER).update(
            attachment_name=invoice.filename)
        frame_record(activity_id=activity_id, kind="validation", name="invoice attached",
                     summary=f"An invoice ({invoice.content_type}, {invoice.size} bytes) was attached and checked.",
                     payload={"invoice": str(invoice.id), "file": invoice.filename, "checksum": invoice.checksum,
                              "content_type": invoice.content_type, "size": invoice.size})
    return {**result, "invoice_id": str(invoice.id)}
