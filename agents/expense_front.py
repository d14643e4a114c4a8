"""The conversation's door to the expense claim (issue 15, seed 000 §2).

`expense_turn` is called by the orchestrator after the intent is classified. It answers
None when the message is not an expense claim (nor the answer to a question it asked), so
the orchestrator's own branches go on. Otherwise it reads the claim's facts from the text
in English or Chinese — category, city, date, nights, amount — asks for what is missing
(the amount, the date, the nights of a stay, the city) and, once the facts are complete,
starts blueprint `expense_claim`. The facts travel as run parameters; the claim's id is
made by the create step and carried by program state, never by the model.

An invoice attached to the message (agents.invoice_chat stages it first) travels the same
way: its staged id is the run's `invoice_id` parameter, and the upload step files it, with
its checksum, to the claim the create step made. A turn that asks for a missing fact keeps
the staged invoice for the answer that completes the claim."""
from __future__ import annotations

import contextvars
import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from django.utils import timezone

from tenants.models import Membership
from timeline.models import Activity, FramePayload
from timeline.services import frame_record
from workflows.blueprints import Door
from workflows.services import run_start

from .models import Message

ASK_ROUTE = "expense_ask"
START_ROUTE = "expense_claim"
CLAIM_EN = (r"\b(expense claims?|file (an? |my |the )?(expense|claim|reimbursement)s?|reimburse(ment)?|"
            r"expense report|claim (my |the )?(expenses?|hotel|lodging|costs?))\b")
CLAIM_ZH = ("报销", "报账")
CATEGORIES = {
    "lodging": (r"\b(lodging|hotel|accommodation|room|stay)\b", ("住宿", "酒店", "宾馆", "房费")),
    "meals": (r"\b(meals?|dinner|lunch|breakfast|food)\b", ("餐费", "餐饮", "伙食", "饭")),
    "transport": (r"\b(taxi|train|flight|airfare|transport|ticket)\b", ("交通", "机票", "火车", "打车", "车费")),
}
CITIES = {"beijing": "北京", "shanghai": "上海", "shenzhen": "深圳", "guangzhou": "广州", "hangzhou": "杭州",
          "chengdu": "成都", "nanjing": "南京", "wuhan": "武汉", "xi'an": "西安", "tianjin": "天津",
          "hong kong": "香港", "singapore": "新加坡"}
# The invoice staged for the message being handled (set by agents.invoice_chat around it).
attached_invoice: contextvars.ContextVar[int | None] = contextvars.ContextVar("keel_attached_invoice", default=None)
ZH_DIGITS = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}


@dataclass
class ExpenseReply:
    route: str
    reply: str
    run_id: int | None = None


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


MISSING_EN = {"amount": "the total amount (e.g. 1,800 yuan)", "date": "the date of the first night (YYYY-MM-DD)",
              "city": "the city", "nights": "how many nights you stayed"}
MISSING_ZH = {"amount": "总金额（例如1800元）", "date": "入住日期（YYYY-MM-DD）", "city": "城市", "nights": "住了几晚"}


def _pending_text(conversation_id: int, activity_id: int) -> str | None:
    """The user's earlier text, when the turn before this one asked for a claim's missing facts."""
    previous = (Activity.objects.filter(conversation_id=conversation_id, kind=Activity.Kind.MESSAGE)
                .exclude(id=activity_id).order_by("-started_at", "-id").first())
    if previous is None or previous.route != ASK_ROUTE:
        return None
    return (Message.objects.filter(activity_id=previous.id, role=Message.Role.USER)
            .values_list("text", flat=True).first())


def _pending_invoice(conversation_id: int, activity_id: int) -> int | None:
    """The invoice staged with the claim whose missing facts the turn before this one asked for."""
    previous = (Activity.objects.filter(conversation_id=conversation_id, kind=Activity.Kind.MESSAGE)
                .exclude(id=activity_id).order_by("-started_at", "-id").first())
    if previous is None or previous.route != ASK_ROUTE:
        return None
    data = (FramePayload.objects.filter(frame__activity_id=previous.id, frame__kind="route")
            .values_list("data", flat=True).first()) or {}
    return int(data["invoice"]) if str(data.get("invoice") or "").isdigit() else None


def awaits_claim_facts(conversation_id: int) -> bool:
    """Did the conversation's last turn ask for a claim's missing facts?"""
    last = (Activity.objects.filter(conversation_id=conversation_id, kind=Activity.Kind.MESSAGE)
            .order_by("-started_at", "-id").first())
    return last is not None and last.route == ASK_ROUTE


def expense_turn(*, membership: Membership, conversation_id: int, activity_id: int, text: str,
                 signal: str) -> ExpenseReply | None:
    """Handle a message that files an expense claim; None for any other message."""
    earlier = _pending_text(conversation_id, activity_id) if signal not in ("chat", "analyze") else None
    if earlier is None and (signal not in ("resolve", "unknown") or not is_expense_request(text)):
        return None
    zh = bool(re.search(r"[\u4e00-\u9fff]", (earlier or "") + text))
    facts = facts_read(f"{earlier} {text}" if earlier else text)
    invoice_id = attached_invoice.get() or (_pending_invoice(conversation_id, activity_id) if earlier else None)
    if facts.missing:
        words = [(MISSING_ZH if zh else MISSING_EN)[m] for m in facts.missing]
        reply = (f"好的，我来提交报销单。还需要：{'、'.join(words)}。" if zh else
                 f"I can file that expense claim. I still need {', '.join(words[:-1]) + ' and ' if len(words) > 1 else ''}"
                 f"{words[-1]}.")
        _frame(activity_id, "route → expense_ask", f"Expense claim: asked for {', '.join(facts.missing)}.",
               {"missing": facts.missing, "facts": _facts_payload(facts),
                "invoice": str(invoice_id) if invoice_id else None})
        return ExpenseReply(route=ASK_ROUTE, reply=reply)
    params: dict[str, Any] = {
        "category": facts.category or "other", "city": facts.city, "start_date": facts.start_date.isoformat(),
        "nights": facts.nights or 0, "amount": f"{facts.amount:.2f}", "currency": facts.currency,
        "lang": "zh" if zh else "en", "description": ((earlier + " ") if earlier else "") + text}
    params["description"] = params["description"][:500]
    if invoice_id:
        params["invoice_id"] = str(invoice_id)
    run = run_start(membership=membership, blueprint="expense_claim", params=params, conversation_id=conversation_id,
                    door=Door.CONVERSATION)
    _frame(activity_id, "route → expense_claim", "Expense claim: the facts are complete; the claim run starts.",
           {"facts": _facts_payload(facts), "run": str(run.id),
            "invoice": str(invoice_id) if invoice_id else None})
    per_night = f" ({facts.amount / facts.nights:,.2f} {'元/晚' if zh else 'a night'})" if facts.nights else ""
    when = f"{facts.start_date.isoformat()}" + (f", {facts.date_words}" if facts.date_words and not zh else "")
    if zh:
        reply = (f"已开始报销：{facts.city}{'住宿' if facts.category == 'lodging' else ''}，{when}起"
                 f"{facts.nights or 0}晚，共{facts.amount:,.2f}元{per_night}。我会按差旅制度检查；"
                 "超出标准时需审批人同意后才会提交。")
    else:
        reply = (f"I've started an expense claim: {facts.category} in {facts.city}, "
                 f"{facts.nights or 0} night{'s' if facts.nights != 1 else ''} from {when}, "
                 f"{facts.amount:,.2f} {facts.currency}{per_night}. I'll check it against the travel policy; "
                 "if it is over the limit, an approver has to agree before it is submitted.")
    if invoice_id:
        reply += " 附上的发票会一并归入这张报销单。" if zh else " The invoice you attached is filed with the claim."
    return ExpenseReply(route=START_ROUTE, reply=reply, run_id=run.id)


def _facts_payload(facts: ClaimFacts) -> dict[str, Any]:
    return {"category": facts.category, "city": facts.city, "nights": facts.nights,
            "start_date": facts.start_date.isoformat() if facts.start_date else None,
            "amount": str(facts.amount) if facts.amount is not None else None, "currency": facts.currency}


def _frame(activity_id: int, name: str, summary: str, payload: dict[str, Any]) -> None:
    frame_record(activity_id=activity_id, kind="route", name=name, summary=summary, payload=payload)
