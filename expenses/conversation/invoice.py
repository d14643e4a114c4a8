"""The invoice as an attachment (a PDF, PNG or JPEG of at most 5 MB, judged by its bytes):
checked before anything is written (`_invoice_parse`: a file that is not an invoice, too
large, or sent where there is no claim is refused, and nothing is written)."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from config.api import DomainError
from config.words import words
from timeline.models import Activity
from workflows.conversation import Attached, AttachmentKind, TurnContext
from workflows.models import Run

from expenses.reading.facts import is_expense_request
from expenses.records.services import MAX_INVOICE_BYTES, PayloadTooLarge, invoice_checked

from .vocabulary import ASK_ROUTE, BLUEPRINT


INVOICE_SUFFIXES = (".pdf", ".png", ".jpg", ".jpeg")


def _last_route(conversation_id: int) -> str:
    return (Activity.objects.filter(conversation_id=conversation_id, kind=Activity.Kind.MESSAGE)
            .order_by("-started_at", "-id").values_list("route", flat=True).first()) or ""


def claim_run(conversation_id: int, tenant_id: int) -> Run | None:
    """The conversation's latest expense claim run: the claim a later invoice is for."""
    return (Run.objects.filter(conversation_id=conversation_id, tenant_id=tenant_id, blueprint=BLUEPRINT)
            .order_by("-created_at").first())


@dataclass
class InvoiceFile:
    filename: str
    content: bytes
    content_type: str
    checksum: str


def too_large(size: int) -> PayloadTooLarge:
    return PayloadTooLarge(_("The invoice is %(value)s MB; the limit is %(limit)s MB.")
                           % {"value": format(size / 1048576, ".1f"), "limit": MAX_INVOICE_BYTES // 1048576},
                           code="invoice_too_large")


def _invoice_parse(membership, conversation_id: int, text: str, filename: str, raw: bytes, lang: str) -> Attached:
    """Checked before anything is written: an invoice's bytes, and a claim it can go with (this
    message files one, answers the claim's question, or the conversation has one)."""
    if len(raw) > MAX_INVOICE_BYTES:
        raise too_large(len(raw))
    name, content_type = invoice_checked(filename=filename, content=raw)
    if not (is_expense_request(text) or _last_route(conversation_id) == ASK_ROUTE
            or claim_run(conversation_id, membership.tenant_id) is not None):
        raise DomainError(_("An invoice can be attached to an expense claim only: say what it is for, e.g. “Please file an expense claim: lodging in Beijing, 2 nights from 2026-11-16, 1,800 yuan in total”. Nothing was sent."),
                          code="invoice_without_claim")
    checksum = hashlib.sha256(raw).hexdigest()
    return Attached(filename=name, data=InvoiceFile(name, raw, content_type, checksum),
                    summary=words(gettext_noop("An invoice (%(type)s, %(size)s bytes) was attached and checked."),
                                  type=content_type, size=len(raw)),
                    payload={"file": name, "checksum": checksum, "content_type": content_type, "size": len(raw)})


INVOICE = AttachmentKind(name="invoice", suffixes=INVOICE_SUFFIXES, max_bytes=MAX_INVOICE_BYTES,
                         described=gettext_noop("an invoice for an expense claim (.pdf, .png or .jpg)"),
                         parse=_invoice_parse, too_large=too_large)


def attached_invoice(turn: TurnContext) -> InvoiceFile | None:
    return turn.attachment if turn.attachment_kind == INVOICE.name else None
