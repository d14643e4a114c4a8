"""A claim's facts read from what a person wrote, in English or Chinese: category, city, date,
nights and amount; what a claim cannot do without is listed as missing."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal, InvalidOperation

from django.utils import timezone


CLAIM_EN = (r"\b(expense claims?|file (an? |my |the )?(expense|claim|reimbursement)s?|reimburse(ment)?|"
            r"expense report|claim (my |the )?(expenses?|hotel|lodging|costs?))\b")


CLAIM_ZH = ("报销", "报账")
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
