"""The expense claim in the conversation (issue 15, issue 29; workflows.conversation is the
contract). Moved here from the conversation front, which no longer knows expenses.

A message that files a claim is read for its facts, in English or Chinese — category,
city, date, nights, amount; what is missing (the amount, the date, the nights of a stay,
the city) is asked for, and the claim waits in the conversation's pending state for the
answer (the domain then holds the turn). Once the facts are complete blueprint
`expense_claim` starts; the facts travel as run parameters, the claim's id is made by the
create step and carried by program state, never by the model. The first reply names what
was filed, and asks for the invoice when none came with it.

An invoice (a PDF, PNG or JPEG of at most 5 MB, judged by its bytes) may come with the
message that files the claim, with the answer to its question, or later in the same
conversation. It is checked before anything is written (`_invoice_parse`: a file that is
not an invoice, too large, or sent where there is no claim is refused, and nothing is
written); then staged (with its SHA-256). With a claim still to start, its staged id is the
run's `invoice_id` parameter and the run's upload step files it. With the claim already
made, it is filed to that claim through the expenses services with the claim's own
idempotency key for it, and the chat says so."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from config.api import Conflict, DomainError
from config.words import Stored, localised, sentences, words
from tenants.actors import Actor
from timeline.models import Activity
from workflows.blueprints import Door
from workflows.conversation import (
    Attached,
    AttachmentKind,
    Claim,
    ConversationDomain,
    TurnContext,
    TurnReply,
    Vocabulary,
)
from workflows.models import Run, StateCoordinate
from workflows.services import run_start

from expenses.models import ExpenseClaim, Invoice
from expenses.records.services import MAX_INVOICE_BYTES, PayloadTooLarge, invoice_checked, invoice_stage, invoice_upload

NAME = "expenses"
BLUEPRINT = "expense_claim"
ASK_ROUTE = "expense_ask"
START_ROUTE = "expense_claim"
INVOICE_ROUTE = "expense_invoice"
PERSONA = "Keel files the user's expense claims, with their invoices, and checks them against the travel policy."
CLAIM_EN = (r"\b(expense claims?|file (an? |my |the )?(expense|claim|reimbursement)s?|reimburse(ment)?|"
            r"expense report|claim (my |the )?(expenses?|hotel|lodging|costs?))\b")
CLAIM_ZH = ("报销", "报账")
VOCABULARY = Vocabulary(
    subject_en=(r"expenses?", r"reimburse(ment)?"), subject_zh=("报销",),
    act_en=(r"file (an? |my |the )?(expense|claim|reimbursement)s?( claim)?", r"reimburse me"),
    act_zh=("报销",),  # asking to be reimbursed is a request to act
)
CATEGORIES = {
    "lodging": (r"\b(lodging|hotel|accommodation|room|stay)\b", ("住宿", "酒店", "宾馆", "房费")),
    "meals": (r"\b(meals?|dinner|lunch|breakfast|food)\b", ("餐费", "餐饮", "伙食", "饭")),
    "transport": (r"\b(taxi|train|flight|airfare|transport|ticket)\b", ("交通", "机票", "火车", "打车", "车费")),
}
CATEGORY_ZH = {"lodging": "住宿", "meals": "餐费", "transport": "交通", "other": "其他"}
CITIES = {"beijing": "北京", "shanghai": "上海", "shenzhen": "深圳", "guangzhou": "广州", "hangzhou": "杭州",
          "chengdu": "成都", "nanjing": "南京", "wuhan": "武汉", "xi'an": "西安", "tianjin": "天津",
          "hong kong": "香港", "singapore": "新加坡"}
ZH_DIGITS = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
INVOICE_SUFFIXES = (".pdf", ".png", ".jpg", ".jpeg")


@dataclass
class ClaimFacts:
    category: str | None = None
    city: str | None = None
    start_date: date | None = None
    date_words: str = ""
    nights: int | None = None
    amount: Decimal | None = None
    currency: str = "CNY"
    missing: list[str] = field(default_factory=list)


def is_expense_request(text: str) -> bool:
    return bool(re.search(CLAIM_EN, text.lower())) or any(w in text for w in CLAIM_ZH)


def _number(word: str) -> int | None:
    if word.isdigit():
        return int(word)
    if word == "十":
        return 10
    if len(word) == 2 and word[0] == "十":
        return 10 + ZH_DIGITS.get(word[1], 0)
    if len(word) == 2 and word[1] == "十":
        return ZH_DIGITS.get(word[0], 0) * 10
    return ZH_DIGITS.get(word)


def _date(text: str, today: date) -> tuple[date | None, str]:
    lowered = text.lower()
    full = re.search(r"(20\d\d)[-/.年](\d{1,2})[-/.月](\d{1,2})", text)
    if full:
        try:
            return date(int(full.group(1)), int(full.group(2)), int(full.group(3))), ""
        except ValueError:
            return None, ""
    monday = today - timedelta(days=today.weekday())
    if "上周" in text or "上星期" in text or "last week" in lowered:
        return monday - timedelta(days=7), "Monday of last week"
    if "昨天" in text or "yesterday" in lowered:
        return today - timedelta(days=1), "yesterday"
    if "今天" in text or "today" in lowered:
        return today, "today"
    return None, ""


def facts_read(text: str, today: date | None = None) -> ClaimFacts:
    """The claim's facts as written; what a claim cannot do without is listed in `missing`."""
    today = today or timezone.localdate()
    lowered = text.lower()
    facts = ClaimFacts()
    for category, (english, chinese) in CATEGORIES.items():
        if re.search(english, lowered) or any(w in text for w in chinese):
            facts.category = category
            break
    for city, city_zh in CITIES.items():
        if city in lowered or city_zh in text:
            facts.city = city.title()
            break
    facts.start_date, facts.date_words = _date(text, today)
    nights = re.search(r"(\d+|one|two|three|four|five|six|seven)\s+nights?", lowered) or \
        re.search(r"([一二两三四五六七八九十\d]{1,3})\s*(晚|夜)", text)
    if nights:
        word = nights.group(1)
        facts.nights = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
                        "seven": 7}.get(word) or _number(word)
    amount = (re.search(r"(?:¥|￥|rmb|cny)\s*(\d[\d,]*(?:\.\d{1,2})?)", lowered)
              or re.search(r"(\d[\d,]*(?:\.\d{1,2})?)\s*(?:yuan|rmb|cny|元|块)", lowered))
    if amount:
        try:
            facts.amount = Decimal(amount.group(1).replace(",", ""))
        except InvalidOperation:
            facts.amount = None
    if facts.category is None and facts.nights:
        facts.category = "lodging"
    facts.missing = [name for name, value in (("amount", facts.amount), ("date", facts.start_date),
                                               ("city", facts.city)) if value is None]
    if facts.category in (None, "lodging") and not facts.nights:
        facts.missing.append("nights")
    return facts


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


def _last_route(conversation_id: int) -> str:
    return (Activity.objects.filter(conversation_id=conversation_id, kind=Activity.Kind.MESSAGE)
            .order_by("-started_at", "-id").values_list("route", flat=True).first()) or ""


def _claim_run(conversation_id: int, tenant_id: int) -> Run | None:
    """The conversation's latest expense claim run: the claim a later invoice is for."""
    return (Run.objects.filter(conversation_id=conversation_id, tenant_id=tenant_id, blueprint=BLUEPRINT)
            .order_by("-created_at").first())


def _claim_of(run: Run) -> ExpenseClaim | None:
    coordinate = StateCoordinate.objects.filter(run=run, key="application_id").order_by("-plan_version").first()
    if coordinate is None:
        return None
    return ExpenseClaim.objects.filter(id=int(coordinate.value), tenant_id=run.tenant_id).first()


# --- The invoice as an attachment ------------------------------------------------------------

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
            or _claim_run(conversation_id, membership.tenant_id) is not None):
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


def _actor(turn: TurnContext) -> Actor:
    m = turn.membership
    return Actor(tenant_id=m.tenant_id, user_id=m.user_id, role=m.role)


def _invoice(turn: TurnContext) -> InvoiceFile | None:
    return turn.attachment if turn.attachment_kind == INVOICE.name else None


# --- The turns ---------------------------------------------------------------------------------

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
    file = _invoice(turn)
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


def _states_a_new_claim(text: str) -> bool:
    """Asks to file a claim and states one of its facts: not an invoice for the claim already made."""
    facts = facts_read(text)
    return is_expense_request(text) and any((facts.amount, facts.start_date, facts.nights))


class ExpensesConversation(ConversationDomain):
    name = NAME
    persona = PERSONA
    blueprints = (BLUEPRINT,)
    vocabulary = VOCABULARY
    attachments = (INVOICE,)

    def _pending(self, turn: TurnContext) -> dict[str, Any] | None:
        """The claim whose missing facts the turn before this one asked for."""
        if turn.signal in ("chat", "analyze") or turn.last_route() != ASK_ROUTE:
            return None
        return turn.pending(NAME).get()

    def holds(self, turn: TurnContext) -> Claim | None:
        if self._pending(turn) is None:
            return None
        return Claim(1.0, "the claim's missing facts were asked for; this message answers")

    def claims(self, turn: TurnContext) -> Claim | None:
        if _invoice(turn) is not None:
            return Claim(0.95, "an invoice was attached")
        if turn.signal in ("resolve", "unknown") and is_expense_request(turn.text):
            return Claim(0.9, "a request to file an expense claim")
        return None

    def answer(self, turn: TurnContext) -> TurnReply:
        pending = self._pending(turn)
        if pending is not None:
            return claim_turn(turn, pending.get("text") or None, pending.get("invoice"))
        file = _invoice(turn)
        if file is not None and not _states_a_new_claim(turn.text):
            run = _claim_run(turn.conversation_id, turn.membership.tenant_id)
            if run is not None:
                return later_invoice_turn(turn, run, file)
        return claim_turn(turn, None, None)

    def run_title(self, run: Any) -> Any:
        return words(gettext_noop("The expense claim"))

    def capability(self, zh: bool) -> str:
        return "提交报销" if zh else "file expense claims"

    def example(self, zh: bool) -> str:
        return "请帮我报销：北京住宿，2026-11-16起住了2晚，共1800元" if zh else \
            "Please file an expense claim: lodging in Beijing, 2 nights from 2026-11-16, 1,800 yuan in total"
