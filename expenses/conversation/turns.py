"""The turns: a message that files a claim is read for its facts; what is missing is asked
for, and the claim waits in the conversation's pending state for the answer. Once the facts
are complete blueprint `expense_claim` starts; the facts travel as run parameters, the
claim's id is made by the create step and carried by program state, never by the model.

An invoice that comes with the message or its answer is staged (with its SHA-256), and its
id is the run's `invoice_id` parameter; one sent after the claim was made is filed to that
claim through the expenses services, with the claim's own idempotency key for it."""
from __future__ import annotations

import re
from datetime import date
from decimal import Decimal
from typing import Any

from django.utils.translation import gettext_noop

from config.api import Conflict, DomainError
from config.words import Stored, localised, sentences, words
from tenants.actors import Actor
from workflows.blueprints import Door
from workflows.conversation import TurnContext, TurnReply
from workflows.models import Run, StateCoordinate
from workflows.services import run_start

from expenses.models import ExpenseClaim, Invoice
from expenses.reading.facts import CATEGORY_ZH, CITIES, ClaimFacts, facts_read, is_expense_request
from expenses.records.services import invoice_stage, invoice_upload

from .invoice import InvoiceFile, attached_invoice
from .vocabulary import ASK_ROUTE, BLUEPRINT, INVOICE_ROUTE, NAME, START_ROUTE


MISSING_EN = {"amount": gettext_noop("the total amount (e.g. 1,800 yuan)"),
              "date": gettext_noop("the date of the first night (YYYY-MM-DD)"),
              "city": gettext_noop("the city"), "nights": gettext_noop("how many nights you stayed")}


# A missing fact by its name, for the route frame's words (its code is the English).
MISSING_NAMES_ZH = {"amount": "金额", "date": "日期", "city": "城市", "nights": "晚数"}


def _money(amount: Decimal, currency: str) -> Stored:
    """1,800 yuan / 1,800元; cents only when there are some (words)."""
    shown = f"{amount:,.0f}" if amount == amount.to_integral_value() else f"{amount:,.2f}"
    if currency == "CNY":
        return words(gettext_noop("%(amount)s yuan"), amount=shown)
    return f"{shown} {currency}"


def claim_words(*, category: str, city: str, start_date: date, nights: int, amount: Decimal, currency: str,
                date_words: str = "") -> dict[str, Any]:
    """What was filed, as the user reads it (words): "lodging in Beijing, 2 nights from 2026-11-16,
    1,800 yuan (900 yuan a night)" / "北京住宿，2026-11-16起2晚，共1,800元（900元/晚）". `date_words`: how
    an English request said the date ("next Monday"), shown beside it to an English reader."""
    per_night: Stored = ""
    if nights:
        per_night = words(gettext_noop(" (%(each)s a night)"), each=_money(amount / nights, currency))
    day = start_date.isoformat()
    params = {"category": localised(category, CATEGORY_ZH.get(category, category)),
              "city": localised(city, CITIES.get(city.lower(), city)),
              "date": localised(f"{day} ({date_words})", day) if date_words else day,
              "nights": nights, "money": _money(amount, currency), "per_night": per_night}
    if nights == 1:
        return words(gettext_noop("%(category)s in %(city)s, 1 night from %(date)s, %(money)s%(per_night)s"), **params)
    if nights:
        return words(gettext_noop("%(category)s in %(city)s, %(nights)s nights from %(date)s, %(money)s%(per_night)s"),
                     **params)
    return words(gettext_noop("%(category)s in %(city)s, on %(date)s, %(money)s%(per_night)s"), **params)


def _claim_of(run: Run) -> ExpenseClaim | None:
    coordinate = StateCoordinate.objects.filter(run=run, key="application_id").order_by("-plan_version").first()
    if coordinate is None:
        return None
    return ExpenseClaim.objects.filter(id=int(coordinate.value), tenant_id=run.tenant_id).first()


def _actor(turn: TurnContext) -> Actor:
    m = turn.membership
    return Actor(tenant_id=m.tenant_id, user_id=m.user_id, role=m.role)


def _facts_payload(facts: ClaimFacts) -> dict[str, Any]:
    return {"category": facts.category, "city": facts.city, "nights": facts.nights,
            "start_date": facts.start_date.isoformat() if facts.start_date else None,
            "amount": str(facts.amount) if facts.amount is not None else None, "currency": facts.currency}


def _staged(turn: TurnContext, file: InvoiceFile) -> Invoice:
    invoice = invoice_stage(actor=_actor(turn), filename=file.filename, content=file.content)
    turn.frame("validation", "invoice staged",
               f"The invoice ({invoice.content_type}, {invoice.size} bytes) was kept for the claim.",
               {"invoice": str(invoice.id), "file": invoice.filename, "checksum": invoice.checksum,
                "content_type": invoice.content_type, "size": invoice.size})
    return invoice


def claim_turn(turn: TurnContext, earlier: str | None, pending_invoice: int | None) -> TurnReply:
    """A message that files a claim, or the answer to its question: ask, or start the claim run."""
    text = turn.text
    zh = bool(re.search(r"[\u4e00-\u9fff]", (earlier or "") + text))
    facts = facts_read(f"{earlier} {text}" if earlier else text)
    file = attached_invoice(turn)
    invoice = _staged(turn, file) if file else None
    invoice_id = invoice.id if invoice else pending_invoice
    extra = {"invoice_id": str(invoice.id)} if invoice else {}
    pending = turn.pending(NAME)
    if facts.missing:
        asked = [words(MISSING_EN[m]) for m in facts.missing]
        reply = words(gettext_noop("I can file that expense claim. I still need %(asked)s."),
                      asked=asked[0] if len(asked) == 1 else
                      words(gettext_noop("%(names)s and %(last)s"), names=asked[:-1], last=asked[-1]))
        turn.frame("route", "route → expense_ask",
                   words(gettext_noop("Expense claim: asked for %(missing)s."),
                         missing=[localised(m, MISSING_NAMES_ZH.get(m)) for m in facts.missing]),
                   {"missing": facts.missing, "facts": _facts_payload(facts),
                    "invoice": str(invoice_id) if invoice_id else None})
        pending.set({"text": ((earlier + " ") if earlier else "") + text, "invoice": invoice_id})
        return TurnReply(route=ASK_ROUTE, reply=reply, extra=extra)
    params: dict[str, Any] = {
        "category": facts.category or "other", "city": facts.city, "start_date": facts.start_date.isoformat(),
        "nights": facts.nights or 0, "amount": f"{facts.amount:.2f}", "currency": facts.currency,
        "lang": "zh" if zh else "en", "description": (((earlier + " ") if earlier else "") + text)[:500]}
    if invoice_id:
        params["invoice_id"] = str(invoice_id)
    try:
        run = run_start(membership=turn.membership, blueprint=BLUEPRINT, params=params,
                        conversation_id=turn.conversation_id, door=Door.CONVERSATION)
    except BaseException:
        if invoice is not None:  # the claim was refused: the staged invoice is not kept
            Invoice.objects.filter(id=invoice.id, claim__isnull=True).delete()
        raise
    pending.clear()
    turn.frame("route", "route → expense_claim",
               words(gettext_noop("Expense claim: the facts are complete; the claim run starts.")),
               {"facts": _facts_payload(facts), "run": str(run.id), "invoice": str(invoice_id) if invoice_id else None})
    filed = claim_words(category=params["category"], city=facts.city, start_date=facts.start_date,
                        nights=facts.nights or 0, amount=facts.amount, currency=facts.currency,
                        date_words=facts.date_words if not zh else "")
    reply = sentences(
        words(gettext_noop("I've filed an expense claim: %(filed)s. I'll check it against the travel policy; if it "
                           "is over the limit, an approver has to agree before it is submitted."), filed=filed),
        words(gettext_noop("The invoice you attached is filed with the claim.")) if invoice_id else
        words(gettext_noop("Please attach the invoice (a PDF, PNG or JPEG) here in the chat and I'll file it with "
                           "the claim.")))
    return TurnReply(route=START_ROUTE, reply=reply, run_id=run.id, extra=extra)


def later_invoice_turn(turn: TurnContext, run: Run, file: InvoiceFile) -> TurnReply:
    """An invoice sent after the claim started: filed to that claim, with its own idempotency key."""
    claim = _claim_of(run)
    if claim is None:
        turn.frame("route", "route → expense_invoice", words(gettext_noop("A later invoice: the claim is not made yet.")),
                   {"run": str(run.id)})
        return TurnReply(route=INVOICE_ROUTE, run_id=run.id, status="failed", reply=words(gettext_noop(
            "The claim is still being created, so the invoice can't be filed to it yet. Please send it again "
            "in a moment.")))
    what = claim_words(category=claim.category, city=claim.city, start_date=claim.start_date, nights=claim.nights,
                       amount=claim.amount, currency=claim.currency)
    if claim.invoices.filter(checksum=file.checksum).exists():
        reply = words(gettext_noop("That invoice is already filed with the claim (%(what)s)."), what=what)
        return TurnReply(route=INVOICE_ROUTE, reply=reply, run_id=run.id)
    invoice = _staged(turn, file)
    try:
        receipt = invoice_upload(actor=_actor(turn), claim_id=claim.id, invoice_id=invoice.id,
                                 idempotency_key=f"conversation-invoice:{claim.id}:{invoice.id}")
    except (Conflict, DomainError) as err:
        Invoice.objects.filter(id=invoice.id, claim__isnull=True).delete()
        turn.frame("route", "route → expense_invoice",
                   words(gettext_noop("A later invoice was refused: %(reason)s"), reason=err.message),
                   {"run": str(run.id), "claim": str(claim.id), "code": err.code})
        reply = words(gettext_noop("I couldn't file the invoice with the claim (%(what)s): %(why)s"), what=what,
                      why=err.message)
        return TurnReply(route=INVOICE_ROUTE, reply=reply, run_id=run.id, status="failed")
    turn.frame("route", "route → expense_invoice",
               words(gettext_noop("A later invoice was filed to the conversation's claim.")),
               {"run": str(run.id), "claim": str(claim.id), "invoice": receipt.body["invoice_id"]})
    reply = words(gettext_noop("I've filed the invoice “%(file)s” with your expense claim (%(what)s)."),
                  file=invoice.filename, what=what)
    return TurnReply(route=INVOICE_ROUTE, reply=reply, run_id=run.id, extra={"invoice_id": str(invoice.id)})


def states_a_new_claim(text: str) -> bool:
    """Asks to file a claim and states one of its facts: not an invoice for the claim already made."""
    facts = facts_read(text)
    return is_expense_request(text) and any((facts.amount, facts.start_date, facts.nights))
