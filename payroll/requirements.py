"""Requirement extraction for a payroll-group request, by rules, in English and Chinese.

`requirements_extract(text)` returns {region, pay_frequency, population, items_named,
group_name, missing}. Each lexicon lists the template words *and* the everyday ways
people say the same thing ("the Pudong office", "get a cut of each deal"), because
customers describe their staff, not our catalog. The rules only find what is said: an
unsaid region or frequency is reported `missing`, never guessed (the inferences are
CPF, which exists only in Singapore, and MPF, only in Hong Kong).
"""
from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

REQUIRED = ("region", "pay_frequency")

# (code, English patterns, Chinese substrings). English patterns are regexes matched on
# lower-cased text with word boundaries added.
REGIONS: list[tuple[str, list[str], list[str]]] = [
    ("CN-SH", ["shanghai", "pudong", "puxi", "lujiazui", "jing'?an", "xuhui", "hongqiao", "zhangjiang"],
     ["上海", "浦东", "浦西", "陆家嘴", "静安", "徐汇", "虹桥", "张江", "沪"]),
    ("CN-BJ", ["beijing", "peking", "haidian", "chaoyang district", "zhongguancun", "wangjing"],
     ["北京", "海淀", "朝阳区", "中关村", "望京", "京城"]),
    ("CN-SZ", ["shenzhen", "nanshan", "futian", "qianhai", "longgang"],
     ["深圳", "南山", "福田", "前海", "龙岗"]),
    ("CN-GZ", ["guangzhou", "canton", "tianhe", "panyu"], ["广州", "天河", "番禺", "羊城"]),
    ("HK", ["hong kong", "hongkong", "kowloon", "hk"], ["香港", "九龙"]),
    ("SG", ["singapore", "singaporean", "jurong", "marina bay", "changi"], ["新加坡", "狮城"]),
    ("US", ["united states", "u\\.s\\.a?\\.?", "usa", "america", "american", "new york", "california",
            "san francisco", "seattle", "texas", "chicago", "boston"], ["美国", "纽约", "加州", "旧金山"]),
]
REGION_NAMES = {"CN-SH": ("Shanghai", "上海"), "CN-BJ": ("Beijing", "北京"), "CN-SZ": ("Shenzhen", "深圳"),
                "CN-GZ": ("Guangzhou", "广州"), "HK": ("Hong Kong", "香港"),
                "SG": ("Singapore", "新加坡"), "US": ("US", "美国")}

# Checked in this order: "semi-monthly" contains "monthly", "biweekly" contains "weekly",
# and an explicit period beats "hourly", which often names the pay basis of people who
# are still paid monthly.
FREQUENCIES: list[tuple[str, list[str], list[str]]] = [
    ("semi_monthly", ["semi-?monthly", "twice (a|per|each) month", "twice monthly", "1st and (the )?15th",
                      "first and fifteenth", "every half month", "half-?monthly"],
     ["半月", "每半个月", "一个月两次", "每月两次"]),
    ("biweekly", ["bi-?weekly", "every (two|2|other) weeks?", "fortnight(ly)?"], ["双周", "每两周", "隔周"]),
    ("weekly", ["weekly", "every week", "each week", "per week", "once a week"], ["周薪", "每周", "按周"]),
    ("monthly", ["monthly", "every month", "each month", "per month", "once a month", "a month",
                 "end of (the|each|every) month", "month-?end", "12 times a year"],
     ["月薪", "每月", "每个月", "按月", "月度", "月结", "一月一发"]),
    ("hourly", ["hourly", "by the hour", "per hour", "an hour", "paid for each hour", "hours they work"],
     ["小时工", "时薪", "按小时", "计时", "钟点工"]),
]

POPULATIONS: list[tuple[str, list[str], list[str]]] = [
    ("sales", ["sales", "salespeople", "salesperson", "sellers?", "sell(s|ing)?", "account managers?",
               "business development", "bd team", "reps"], ["销售", "业务员", "卖货", "推销", "商务拓展", "跑业务", "做业务", "卖东西"]),
    ("executive", ["executives?", "execs?", "c-?suite", "leadership( team)?", "senior management", "directors",
                   "vps?", "top management", "bosses"], ["高管", "高层", "管理层", "总监", "领导层"]),
    ("intern", ["interns?", "internships?", "trainees?", "students?", "summer hires?", "placements?"],
     ["实习生", "实习", "见习"]),
    ("shift", ["shift workers?", "shifts?", "factory( floor)?", "warehouse", "production line", "night shift",
               "line workers", "plant workers", "crews?", "round-the-clock"], ["倒班", "轮班", "工厂", "车间", "产线", "夜班", "三班"]),
    ("engineering", ["engineers?", "developers", "r&d", "engineering"], ["研发", "工程师", "技术人员"]),
    ("salaried", ["salaried", "office staff", "white-?collar", "full-?time staff"], ["白领", "正式员工", "坐班"]),
]
POPULATION_NAMES = {"sales": ("Sales", "销售"), "executive": ("Executives", "高管"), "intern": ("Interns", "实习生"),
                    "shift": ("Shift Workers", "倒班员工"), "engineering": ("Engineering", "研发"),
                    "salaried": ("Salaried Staff", "正式员工")}

# "central provident fund" first: it contains "provident fund", which in China means the
# housing fund; the matched span is blanked so that it is not read twice.
ITEMS: list[tuple[str, list[str], list[str]]] = [
    ("cpf", ["cpf", "central provident fund"], ["中央公积金"]),
    ("mpf", ["mpf", "mandatory provident fund"], ["强积金", "强制性公积金"]),
    ("commission", ["commissions?", "cut of (each|every|the) (deal|sale)s?", "a cut\\b", "percentage of (each |the )?(sales?|deals?|revenue)",
                    "share of (each |the )?(sales?|deals?|revenue)", "per deal", "for each deal", "on each sale",
                    "on every sale", "deal bonus(es)?", "kickers?"],
     ["提成", "佣金", "抽成", "分成", "按单"]),
    ("overtime", ["overtime", "ot pay", "extra hours", "after-?hours work", "time and a half", "beyond normal hours",
                  "longer hours"], ["加班"]),
    ("housing_fund", ["housing (provident )?fund", "provident fund"], ["公积金"]),
    ("annual_bonus", ["annual bonus(es)?", "year-?end bonus(es)?", "13th[- ]month", "thirteenth[- ]month",
                      "bonus at the end of the year", "christmas bonus", "year-?end payouts?"], ["年终奖", "年底奖金", "十三薪", "年终"]),
    ("social_insurance", ["social insurance", "social security"], ["社保", "五险", "社会保险"]),
    ("performance_bonus", ["performance bonus(es)?", "kpi bonus(es)?"], ["绩效奖", "绩效"]),
    ("allowance", ["allowances?", "stipends?", "per diem"], ["津贴", "补贴", "补助"]),
    ("tips", ["tips", "gratuit(y|ies)"], ["小费"]),
]


def text_normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text or "").lower()


def _find(text: str, english: list[str], chinese: list[str]) -> int | None:
    """Position of the first match, or None."""
    positions = []
    for pattern in english:
        match = re.search(rf"(?<![a-z0-9]){pattern}(?![a-z0-9])", text)
        if match:
            positions.append(match.start())
    for word in chinese:
        index = text.find(word)
        if index >= 0:
            positions.append(index)
    return min(positions) if positions else None


def _blank(text: str, english: list[str], chinese: list[str]) -> str:
    for pattern in english:
        text = re.sub(rf"(?<![a-z0-9]){pattern}(?![a-z0-9])", lambda m: " " * len(m.group()), text)
    for word in chinese:
        text = text.replace(word, " " * len(word))
    return text


def _first_of(text: str, table: list[tuple[str, list[str], list[str]]], *, earliest: bool) -> str | None:
    found = [(pos, order, code) for order, (code, en, zh) in enumerate(table)
             if (pos := _find(text, en, zh)) is not None]
    if not found:
        return None
    return min(found)[2] if earliest else min(found, key=lambda f: f[1])[2]


def _region(original: str, text: str) -> str | None:
    region = _first_of(text, REGIONS, earliest=True)
    # "US" is a region only in capitals: "pay us monthly" is a pronoun.
    if region is None and re.search(r"(?<![A-Za-z])US(?![A-Za-z])", unicodedata.normalize("NFKC", original)):
        region = "US"
    return region


def _named_group(original: str) -> str | None:
    text = unicodedata.normalize("NFKC", original)
    match = (re.search(r"\b(?:called|named)\s+[\"“'‘]([^\"”'’]{2,60})[\"”'’]", text, re.I)
             or re.search(r"\b(?:called|named)\s+([A-Z][\w&-]*(?:\s+[A-Z][\w&-]*){0,4})", text)
             or re.search(r"(?:叫做?|名为|命名为|名字是)\s*[“\"「『]?([^”\"」』，。,.！!？?\s]{2,30})", text))
    return match.group(1).strip() if match else None


def _is_chinese(text: str) -> bool:
    return bool(re.search(r"[\u4e00-\u9fff]", text))


def requirements_extract(text: str) -> dict[str, Any]:
    """The requirements a payroll-group request states, and which required ones it lacks."""
    lowered = text_normalize(text)
    region = _region(text, lowered)
    pay_frequency = _first_of(lowered, FREQUENCIES, earliest=False)
    population = _first_of(lowered, POPULATIONS, earliest=True)
    items: list[tuple[int, str]] = []
    rest = lowered
    for code, en, zh in ITEMS:
        pos = _find(rest, en, zh)
        if pos is not None:
            items.append((pos, code))
            rest = _blank(rest, en, zh)
    # A bonus with no kind named is still a bonus the request asks for.
    if not any(code.endswith("bonus") for _, code in items):
        pos = _find(rest, ["bonus(es)?"], ["奖金"])
        if pos is not None:
            items.append((pos, "bonus"))
    items_named = [code for _, code in sorted(items)]
    if region is None and "cpf" in items_named:
        region = "SG"  # CPF exists only in Singapore
    if region is None and "mpf" in items_named:
        region = "HK"  # and MPF only in Hong Kong
    group_name = _named_group(text)
    if group_name is None and (region or population):
        index = 1 if _is_chinese(text) else 0
        parts = [REGION_NAMES[region][index]] if region else []
        parts.append(POPULATION_NAMES[population][index] if population else ("薪资组" if index else "Payroll"))
        group_name = ("" if index else " ").join(parts)
    found = {"region": region, "pay_frequency": pay_frequency}
    return {
        "region": region,
        "pay_frequency": pay_frequency,
        "population": population,
        "items_named": items_named,
        "group_name": group_name,
        "missing": [key for key in REQUIRED if not found[key]],
    }


def requirements_answer(purpose: str, text: str) -> str:
    """The builtin model backend's answer for purpose "requirements": the rules' extraction as JSON."""
    return json.dumps(requirements_extract(text), ensure_ascii=False, sort_keys=True)
