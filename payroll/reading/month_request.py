"""Reading a request to pay a month: "run November payroll for Shanghai Sales", "发11月工资",
"发上海销售11月的工资". A request to run a month names the month (a month's name, 11月, this or
last month) and asks for the payroll to be run (run, process, pay, close; 发, 算, 跑, 核算),
and is not a request to set a group up. The group is what the text names: a group's name as
written, or the place and the people ("上海销售" reads as Shanghai Sales). Pure: no database."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date

from .requirements import POPULATION_NAMES, REGION_NAMES, requirements_extract

MONTHS_EN = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
             "november", "december")
MONTH_EN = (r"\b(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
            r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b")
ZH_DIGITS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10,
             "十一": 11, "十二": 12}
MONTH_ZH = r"(1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])\s*月(?!薪)"
PAYROLL_EN = r"(payroll|pay ?run|salar(?:y|ies)|wages?|pay)"
RUN_EN = (rf"\b(run|process|do|close|pay|calculate|compute|start)\b.{{0,40}}\b{PAYROLL_EN}\b|"
          rf"\b{PAYROLL_EN}\b.{{0,12}}\b(run|close|calculation)\b|\bpay\b")
RUN_ZH = r"(发|算|跑|计算|核算|结算|关账|做)[^，。,]{0,20}(工资|薪资|薪水|薪酬|薪)|(工资|薪资)[^，。,]{0,4}(发放|核算|结算)"
# A request to set a group up is the setup's, even when it names a month ("monthly" is a pay cycle).
SETUP = re.compile(r"\b(set ?up|create|configure|import|new (payroll )?group|add (a|an|new))\b|设置|创建|建立|新建|建组|"
                   r"建个|建一个|导入|配置|薪资组|工资组")
QUESTION = re.compile(r"^(how (much|many)|what|which|when|did|was|has|is|show|list)\b|多少|吗[?？]?$|哪些|是否|有没有")


@dataclass(frozen=True)
class MonthRequest:
    """What the text asks: the month (1–12), the year if it says one (else None: the current
    payroll year unless ambiguous), and the names it may give the group (as written first)."""

    month: int
    year: int | None
    group_names: tuple[str, ...]


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text or "").lower().strip()


def month_named(text: str, today: date) -> tuple[int | None, int | None]:
    """(month, year) as the text names them; (None, None) when it names no month."""
    lowered = _normal(text)
    year = None
    if m := re.search(r"\b(20\d\d)[-/.](0?[1-9]|1[0-2])\b", lowered):
        return int(m.group(2)), int(m.group(1))
    if m := re.search(r"(20\d\d)\s*年", lowered) or re.search(r"\b(20\d\d)\b", lowered):
        year = int(m.group(1))
    elif re.search(r"去年|\blast year\b", lowered):
        year = today.year - 1
    elif re.search(r"今年|\bthis year\b", lowered):
        year = today.year
    if re.search(r"本月|这个月|当月|\bthis month'?s?\b", lowered):
        return today.month, year or today.year
    if re.search(r"上个月|上月|\blast month'?s?\b", lowered):
        return (12, (year or today.year - 1)) if today.month == 1 else (today.month - 1, year or today.year)
    if m := re.search(MONTH_ZH, lowered):
        word = m.group(1)
        return (ZH_DIGITS[word] if word in ZH_DIGITS else int(word)), year
    if m := re.search(MONTH_EN, lowered):
        word = m.group(1)
        if word == "may" and not re.search(rf"\bmay\b.{{0,20}}\b{PAYROLL_EN}|\b{PAYROLL_EN}\b.{{0,20}}\bmay\b", lowered):
            return None, None  # "may" is a verb far more often than a month
        return next(i for i, name in enumerate(MONTHS_EN, start=1) if name.startswith(word[:3])), year
    return None, None


def month_request_read(text: str, today: date) -> MonthRequest | None:
    """The month request in `text`, or None when it is none (a setup, a question, no month)."""
    lowered = _normal(text)
    if not lowered or SETUP.search(lowered) or QUESTION.search(lowered):
        return None
    if not (re.search(RUN_EN, lowered) or re.search(RUN_ZH, lowered)):
        return None
    month, year = month_named(text, today)
    if month is None:
        return None
    return MonthRequest(month=month, year=year, group_names=group_names_read(text))


def group_names_read(text: str) -> tuple[str, ...]:
    """The names the text may give a group: as the requirement reading names it, and the place
    and people it names in English and in Chinese (a group is named in one of them)."""
    req = requirements_extract(text)
    names: list[str] = []
    # A name as written, capitalised, after "for" ("… payroll for Shanghai Sales"): read first.
    written = re.search(r"\bfor ((?!(?:January|February|March|April|May|June|July|August|September|October|"
                        r"November|December)\b)[A-Z][\w&'-]*(?: [A-Z0-9][\w&'-]*){0,4})", unicodedata.normalize("NFKC", text))
    if written:
        names.append(re.sub(r"'s?$", "", written.group(1)).strip())
    if req.get("group_name"):
        names.append(req["group_name"])
    region, population = req.get("region"), req.get("population")
    if region in REGION_NAMES and population in POPULATION_NAMES:
        for index in (0, 1):
            joiner = " " if index == 0 else ""
            names.append(REGION_NAMES[region][index] + joiner + POPULATION_NAMES[population][index])
    return tuple(dict.fromkeys(n for n in names if n))


def year_is_ambiguous(month: int, today: date) -> bool:
    """Early in a year, November or December may mean last year's: ask rather than guess."""
    return today.month <= 2 and month >= 11
