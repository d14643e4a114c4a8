"""Requirement extraction for a payroll-group request, by rules, in English and Chinese.

`requirements_extract(text)` returns {region, city, pay_frequency, population, items_named,
group_name, name_stated, headcount, lang, missing}. Each lexicon lists the template words
*and* the everyday ways people say the same thing ("the Pudong office", "get a cut of each
deal"), because customers describe their staff, not our catalog. Three things make it
forgiving:

- misspelt Latin words are corrected first against the lexicons' own vocabulary and the
  gazetteer's pinyin names (rapidfuzz; "Shenzen" → shenzhen, "comission" → commission);
- any mainland Chinese city is a region, by Chinese name or pinyin, from the gazetteer
  `payroll/data/cn_cities.json` (generated once by scripts/gazetteer_build.py), so
  "Hangzhou"/"杭州" is understood though no template is for it; "nationwide"/"全国" is CN;
- a stated name ("call it …", "named …", "name it …", "叫…") is always the group's name.

The rules only find what is said: an unsaid region or frequency is reported `missing`,
never guessed (the inferences are CPF, which exists only in Singapore, and MPF, only in
Hong Kong).
"""
from __future__ import annotations

import copy
import json
import re
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
from rapidfuzz import fuzz, process

from workflows.conversation import text_normalize

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
    ("HK", ["hong kong", "hongkong", "kowloon", "hk"], ["香港", "九龙", "港澳"]),
    ("SG", ["singapore", "singaporean", "jurong", "marina bay", "changi"], ["新加坡", "狮城"]),
    ("US", ["united states", "u\\.s\\.a?\\.?", "usa", "america", "american", "new york", "california",
            "san francisco", "seattle", "texas", "chicago", "boston"], ["美国", "纽约", "加州", "旧金山"]),
    ("CN", ["nationwide", "national", "all of china", "across china", "china-?wide", "mainland china"],
     ["全国", "全中国"]),
]
REGION_NAMES = {"CN-SH": ("Shanghai", "上海"), "CN-BJ": ("Beijing", "北京"), "CN-SZ": ("Shenzhen", "深圳"),
                "CN-GZ": ("Guangzhou", "广州"), "HK": ("Hong Kong", "香港"),
                "SG": ("Singapore", "新加坡"), "US": ("US", "美国"), "CN": ("China", "全国")}

# Checked in this order: "semi-monthly" contains "monthly", "biweekly" contains "weekly",
# and an explicit period beats "hourly", which often names the pay basis of people who
# are still paid monthly.
FREQUENCIES: list[tuple[str, list[str], list[str]]] = [
    ("semi_monthly", ["semi[- ]?monthly", "twice (a|per|each) month", "twice monthly", "1st and (the )?15th",
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
               "business development", "bd team", "reps", "closers"], ["销售", "业务员", "卖货", "推销", "商务拓展", "跑业务", "做业务", "卖东西"]),
    ("executive", ["executives?", "execs?", "c-?suite", "leadership( team)?", "senior management", "directors",
                   "vps?", "top management", "bosses"], ["高管", "高层", "管理层", "总监", "领导层"]),
    ("intern", ["interns?", "internships?", "trainees?", "students?", "summer hires?", "placements?"],
     ["实习生", "实习", "见习"]),
    ("shift", ["shift workers?", "shift staff", "shifts?", "factory( floor)?", "factory workers?", "warehouse", "production line", "night shift",
               "line workers", "plant workers", "crews?", "round-the-clock"], ["倒班", "轮班", "工厂", "车间", "产线", "夜班", "三班"]),
    ("engineering", ["engineers?", "developers", "r&d", "engineering"], ["研发", "工程师", "技术人员"]),
    ("customer_service", ["customer service", "customer support", "support team", "call cent(er|re)"],
     ["客服", "客户服务"]),
    ("operations", ["operations", "ops"], ["运营"]),
    ("finance", ["finance", "accounting"], ["财务", "会计"]),
    ("marketing", ["marketing"], ["市场部", "市场营销", "营销", "市场"]),
    ("salaried", ["salaried", "office staff", "white-?collar", "full-?time staff"], ["白领", "正式员工", "坐班"]),
]
POPULATION_NAMES = {"sales": ("Sales", "销售"), "executive": ("Executives", "高管"), "intern": ("Interns", "实习生"),
                    "shift": ("Shift Workers", "倒班员工"), "engineering": ("Engineering", "研发"),
                    "salaried": ("Salaried Staff", "正式员工"),
                    "customer_service": ("Customer Service", "客服"), "operations": ("Operations", "运营"),
                    "finance": ("Finance", "财务"), "marketing": ("Marketing", "市场")}

# "central provident fund" first: it contains "provident fund", which in China means the
# housing fund; the matched span is blanked so that it is not read twice.
ITEMS: list[tuple[str, list[str], list[str]]] = [
    ("cpf", ["cpf", "central provident fund"], ["中央公积金"]),
    ("mpf", ["mpf", "mandatory provident fund"], ["强积金", "强制性公积金"]),
    ("commission", ["commissions?", "cut of (each|every|the) (deal|sale)s?", "a cut\\b", "percentage of (each |the )?(sales?|deals?|revenue)",
                    "share of (each |the )?(sales?|deals?|revenue)", "per deal", "for each deal", "on each sale",
                    "on every sale", "deal bonus(es)?", "kickers?"],
     ["提成", "佣金", "抽成", "分成", "按单"]),
    ("overtime", ["overtime", "ot pay", "ot", "with ot", "extra hours", "after-?hours work", "time and a half", "beyond normal hours",
                  "longer hours"], ["加班"]),
    ("housing_fund", ["housing (provident )?fund", "provident fund"], ["公积金"]),
    ("annual_bonus", ["annual bonus(es)?", "year-?end bonus(es)?", "13th[- ]month( bonus)?", "thirteenth[- ]month",
                      "bonus at the end of the year", "christmas bonus", "year-?end payouts?"], ["年终奖", "年底奖金", "十三薪", "年终"]),
    ("social_insurance", ["social insurance", "social security"], ["社保", "五险", "社会保险"]),
    ("performance_bonus", ["performance (bonus(es)?|pay)", "kpi bonus(es)?", "performance-based pay"], ["绩效奖", "绩效"]),
    ("allowance", ["allowances?", "stipends?", "per diem"], ["津贴", "补贴", "补助", "餐补", "交通补", "房补"]),
    ("tips", ["tips", "gratuit(y|ies)"], ["小费"]),
]


# Words people use for a payroll request, for correcting typos: a misspelt token is
# replaced by the nearest of these (or of the gazetteer's pinyin) when it is close enough.
VOCABULARY = ("payroll", "salary", "salaried", "monthly", "weekly", "biweekly", "semi-monthly", "hourly",
              "commission", "commissions", "overtime", "bonus", "annual", "executives", "executive", "interns",
              "intern", "engineers", "engineering", "engineer", "developers", "customer", "service", "support",
              "sales", "salespeople", "factory", "warehouse", "workers", "shifts", "staff", "employees", "office",
              "group", "create", "setup", "set", "configure", "import", "please", "singapore", "hongkong",
              "kowloon", "america", "american", "nationwide", "trainees", "housing", "provident", "insurance",
              "allowance", "template", "templates", "called", "named", "status", "approve", "approver",
              "approved", "rejected", "failed", "finance", "people", "team", "staff", "every", "month", "weeks",
              "twice", "legacy", "grade", "shanghai", "beijing", "shenzhen", "guangzhou", "seattle", "texas",
              "managers", "admin", "quality", "logistics", "operations", "pension", "medical", "unemployment")
# Common words that are never corrected (they would otherwise drift to a near lexicon word).
PLAIN = {"please", "there", "their", "those", "these", "where", "which", "would", "could", "should", "about",
         "their", "other", "after", "before", "every", "first", "second", "third", "thanks", "hello", "today",
         "paid", "pays", "just", "make", "need", "want", "with", "from", "into", "sure", "fine", "have", "they",
         "what", "when", "whats", "that", "this", "them", "then", "than", "some", "team", "name", "call",
         "people", "person", "folks", "guys", "crew", "group", "groups", "still", "again", "really", "actually",
         "whole", "monday", "friday", "music", "lunch", "order", "flight", "weather", "joke", "cats", "tokyo",
         "amet", "lorem", "ipsum", "dolor", "status", "approve", "approved", "ready", "done", "happened",
         "mate", "cheers", "great", "morning", "afternoon", "evening", "managers", "manager", "included",
         "included", "contributions", "regional", "employer", "employee", "rate", "rates", "limit", "hotel",
         "night", "claim", "trip", "travel", "business", "lodging", "current", "currently", "setup", "instead"}
FUZZY_CUTOFF = 84


@lru_cache(maxsize=1)
def gazetteer() -> dict[str, Any]:
    """The mainland cities: by Chinese short name and by lower-case pinyin (apostrophes dropped)."""
    path = Path(__file__).parent.parent / "data" / "cn_cities.json"
    cities = json.loads(path.read_text(encoding="utf-8"))["cities"]
    by_zh: dict[str, dict] = {}
    by_pinyin: dict[str, dict] = {}
    rank = {"municipality": 0, "prefecture": 1, "county_city": 2}
    for city in sorted(cities, key=lambda c: rank[c["kind"]]):
        by_zh.setdefault(city["zh"], city)
        key = city["pinyin"].lower().replace("'", "")
        # Short pinyin of a county town collides with English words and names ("ali", "anda").
        if len(key) >= 4 and (city["kind"] != "county_city" or len(key) >= 6):
            by_pinyin.setdefault(key, city)
    # Longest first: "乌鲁木齐" before any two-character name inside another word.
    zh_names = sorted(by_zh, key=len, reverse=True)
    # The lexicons' own single words (districts such as "nanshan", "haidian") are known too:
    # corrected towards a gazetteer city they would change place.
    lexicon = {w for table in (REGIONS, FREQUENCIES, POPULATIONS, ITEMS) for _, en, _ in table for p in en
               for w in re.findall(r"[a-z]{4,}", p)}
    return {"by_zh": by_zh, "by_pinyin": by_pinyin, "zh_names": zh_names,
            "words": tuple(sorted(set(VOCABULARY) | set(by_pinyin) | lexicon))}


def _corrected(lowered: str) -> str:
    """Misspelt Latin words replaced by the nearest known word ("shenzen" → "shenzhen")."""
    words = gazetteer()["words"]
    known = set(words)

    def fix(match: re.Match) -> str:
        token = match.group()
        if len(token) < 5 or token in known or token in PLAIN:
            return token
        best = process.extractOne(token, words, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF)
        return best[0] if best else token
    return re.sub(r"[a-z]+", fix, lowered)


def text_corrected(text: str) -> str:
    """Normalised, lower-cased, with misspelt words corrected: what the intent rules read."""
    return _corrected(text_normalize(text))


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


KNOWN_CITIES = {"CN-SH": "上海", "CN-BJ": "北京", "CN-SZ": "深圳", "CN-GZ": "广州"}


def _gazetteer_city(text: str) -> tuple[int, dict] | None:
    """The first mainland city named, by Chinese name or pinyin."""
    g = gazetteer()
    found = []
    for name in g["zh_names"]:
        index = text.find(name)
        if index >= 0:
            found.append((index, g["by_zh"][name]))
            text = text.replace(name, " " * len(name))  # "苏州" inside nothing else is read twice
    for match in re.finditer(r"[a-z']+", text):
        city = g["by_pinyin"].get(match.group().replace("'", ""))
        if city:
            found.append((match.start(), city))
    return min(found, key=lambda f: f[0]) if found else None


def _region(original: str, text: str) -> tuple[str | None, dict | None]:
    """(region code, city) — a known region's code, or CN-<City> for any other mainland city."""
    region = _first_of(text, REGIONS, earliest=True)
    position = _find(text, *next((en, zh) for code, en, zh in REGIONS if code == region)) if region else None
    city = _gazetteer_city(text)
    if city and (position is None or city[0] < position or region == "CN"):
        info = city[1]
        code = next((c for c, zh in KNOWN_CITIES.items() if zh == info["zh"]), None)
        region = code or "CN-" + info["pinyin"].replace("'", "")
        return region, {"en": info["pinyin"], "zh": info["zh"], "province": info["province"]}
    # "US" is a region only in capitals: "pay us monthly" is a pronoun.
    if region is None and re.search(r"(?<![A-Za-z])US(?![A-Za-z])", unicodedata.normalize("NFKC", original)):
        region = "US"
    if region in REGION_NAMES:
        en, zh = REGION_NAMES[region]
        return region, {"en": en, "zh": zh, "province": ""}
    return region, None


# A stated name: quoted, or the words after "call it", "named", "name it", "叫"… up to a
# comma, a full stop or a word that starts the next clause.
NAME_EN = (r"(?:(?:call|name) (?:the|this|our) (?:new )?(?:payroll )?group|the group should be (?:called|named)|"
           r"call(?:ed)?(?: it)?|name(?:d| it)?(?: it)?|name:|titled?|label(?:led)? it)")
NAME_STOP = r"(?=\s*(?:[,.;!?，。；！？\n]|$|\s(?:for|with|paid|in|on|that|which|who|and|please|pls)\b))"


def _named_group(original: str) -> str | None:
    text = unicodedata.normalize("NFKC", original).strip()
    match = (re.search(rf"\b{NAME_EN}\s*[\"“'‘「]([^\"”'’」]{{1,60}})[\"”'’」]", text, re.I)
             or re.search(rf"\b{NAME_EN}\s+(?!it\b)([^\s,.;!?，。；！？].{{0,59}}?){NAME_STOP}", text, re.I)
             or re.search(r"(?:叫做|名为|命名为|名字是|名字叫|取名|起名叫?|就叫|叫)\s*[“\"「『]?([^”\"」』，。,.！!？?\s]{1,30})", text))
    if not match:
        return None
    name = match.group(1).strip().strip("\"'“”‘’")
    return name or None


def asked_in_chinese(params: dict[str, Any]) -> bool:
    """Whether a run was asked for in Chinese: its requirements' language, else the request's
    characters (what a step says to the person is in that language)."""
    requirements = params.get("requirements") or {}
    if requirements.get("lang"):
        return requirements.get("lang") == "zh"
    return _is_chinese(params.get("request") or "")


def _is_chinese(text: str) -> bool:
    return bool(re.search(r"[\u4e00-\u9fff]", text))


def _headcount(text: str) -> int | None:
    match = (re.search(r"(?<![\d.])(\d{1,5})\s*(?:people|persons|employees|staff|workers|engineers|interns|reps|"
                       r"execs?|executives|heads|folks|members)\b", text)
             or re.search(r"(\d{1,5})\s*(?:个人|人|名|位)", text))
    return int(match.group(1)) if match else None


def requirements_extract(text: str) -> dict[str, Any]:
    """The requirements a payroll-group request states, and which required ones it lacks.
    A function of the text alone: a chat turn asks several times (intent, reply, plan), so
    the answer is kept for recent texts and each caller gets its own copy to change."""
    return copy.deepcopy(_requirements_of(text))


@lru_cache(maxsize=512)
def _requirements_of(text: str) -> dict[str, Any]:
    stated_name = _named_group(text)
    # A name is not a requirement: its stated occurrence (the last) is left out, not a place it
    # repeats ("杭州办公室…，叫杭州办").
    unnamed = (lambda head, _, tail: head + " " + tail)(*text.rpartition(stated_name)) if stated_name else text
    lowered = _corrected(text_normalize(unnamed))
    region, city = _region(unnamed, lowered)
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
        region, city = "SG", {"en": "Singapore", "zh": "新加坡", "province": ""}  # CPF exists only in Singapore
    if region is None and "mpf" in items_named:
        region, city = "HK", {"en": "Hong Kong", "zh": "香港", "province": ""}  # and MPF only in Hong Kong
    zh = _is_chinese(text)
    group_name = stated_name
    if group_name is None and (region or population):
        group_name = _default_name(region, city, population, zh)
    found = {"region": region, "pay_frequency": pay_frequency}
    return {
        "region": region,
        "city": city,
        "pay_frequency": pay_frequency,
        "population": population,
        "items_named": items_named,
        "group_name": group_name,
        "name_stated": stated_name is not None,
        "headcount": _headcount(lowered),
        # The legacy template is offered only to whoever asks for it by name.
        "legacy": bool(re.search(r"\b(legacy|grade-?based|2015)\b", lowered) or "旧版" in text or "职级" in text),
        "lang": "zh" if zh else "en",
        "missing": [key for key in REQUIRED if not found[key]],
    }


def _default_name(region: str | None, city: dict | None, population: str | None, zh: bool) -> str:
    """The group's name when none was stated: the place and the population ("Shanghai Sales")."""
    index = 1 if zh else 0
    place = (city["zh"] if zh else city["en"]) if city else (REGION_NAMES[region][index] if region in REGION_NAMES else "")
    if region == "CN":  # everyone nationwide: "China Payroll", "全国薪资组"
        place = "全国" if zh else "China"
    parts = [place] if place else []
    parts.append(POPULATION_NAMES[population][index] if population else ("薪资组" if index else "Payroll"))
    return ("" if index else " ").join(parts)


# What a model is asked for (structured output, llm.structured): the same requirements,
# with the city as a name the program resolves through the gazetteer. Strict: every key
# present, nothing else; null where the request does not say.
ITEM_CODES = [code for code, _, _ in ITEMS] + ["bonus"]
MODEL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["region", "city", "pay_frequency", "population", "items_named", "group_name", "name_stated",
                 "headcount", "legacy"],
    "properties": {
        "region": {"type": ["string", "null"], "pattern": "^(CN|CN-[A-Za-z]+|HK|SG|US)$",
                   "description": "CN-SH, CN-BJ, CN-SZ, CN-GZ, CN-<pinyin> for another mainland city, HK, SG, "
                                  "US, CN for nationwide; null when no place is said"},
        "city": {"type": ["string", "null"], "description": "the city as said (English, pinyin or Chinese)"},
        "pay_frequency": {"enum": [code for code, _, _ in FREQUENCIES] + [None]},
        "population": {"enum": [code for code, _, _ in POPULATIONS] + [None]},
        "items_named": {"type": "array", "items": {"enum": ITEM_CODES}},
        "group_name": {"type": ["string", "null"], "maxLength": 120,
                       "description": "the name the user stated for the group, else null"},
        "name_stated": {"type": "boolean"},
        "headcount": {"type": ["integer", "null"], "minimum": 0},
        "legacy": {"type": "boolean"},
    },
}


def requirements_from_model(data: dict[str, Any], text: str) -> dict[str, Any]:
    """A model's structured answer (valid against MODEL_SCHEMA) in the shape requirements_extract
    returns, so that one decision function (payroll.reading.matching, agents.react) consumes either."""
    region, city = None, None
    if data.get("city"):
        region, city = _region(data["city"], text_corrected(data["city"]))
    if region is None and data.get("region"):
        region = data["region"] if not data["region"].startswith("cn-") else data["region"].upper()
        if region in REGION_NAMES:
            en, zh_name = REGION_NAMES[region]
            city = {"en": en, "zh": zh_name, "province": ""}
    zh = _is_chinese(text)
    population = data.get("population")
    stated = (data.get("group_name") or "").strip() or None
    group_name = stated or (_default_name(region, city, population, zh) if region or population else None)
    pay_frequency = data.get("pay_frequency")
    found = {"region": region, "pay_frequency": pay_frequency}
    return {"region": region, "city": city, "pay_frequency": pay_frequency, "population": population,
            "items_named": list(dict.fromkeys(data.get("items_named") or [])), "group_name": group_name,
            "name_stated": bool(stated and data.get("name_stated", True)), "headcount": data.get("headcount"),
            "legacy": bool(data.get("legacy")), "lang": "zh" if zh else "en",
            "missing": [key for key in REQUIRED if not found[key]]}


def requirements_messages(text: str) -> list[dict[str, Any]]:
    """The extraction prompt for a model that answers in MODEL_SCHEMA."""
    return [{"role": "system", "content": (
        "Extract the payroll-group requirements the user states. Say only what is said: null for an unsaid "
        "region or pay cycle, never a guess. group_name only when the user names the group (\"call it ...\").")},
        {"role": "user", "content": text}]


def requirements_answer(purpose: str, text: str) -> str:
    """The builtin model backend's answer for purpose "requirements": the rules' extraction as JSON."""
    return json.dumps(requirements_extract(text), ensure_ascii=False, sort_keys=True)


# What interpret_request's requirements must look like, whoever proposed them (the model
# or the rules): the acceptance of the step validates the proposal against it.
REQUIREMENTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["region", "pay_frequency", "items_named", "missing"],
    "properties": {
        "region": {"type": ["string", "null"], "pattern": "^[A-Z]{2}(-[A-Za-z0-9]{1,40})?$"},
        "pay_frequency": {"type": ["string", "null"], "enum": [code for code, _, _ in FREQUENCIES] + [None]},
        "population": {"type": ["string", "null"]},
        "items_named": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "group_name": {"type": ["string", "null"], "maxLength": 120},
        "headcount": {"type": ["integer", "null"], "minimum": 0},
        "missing": {"type": "array", "items": {"enum": list(REQUIRED)}, "uniqueItems": True},
    },
}


def requirements_problems(requirements: Any) -> list[str]:
    """Why a proposal of requirements is not acceptable: its schema, then its consistency
    (a required requirement is either found or listed as missing, never both or neither)."""
    validator = jsonschema.Draft202012Validator(REQUIREMENTS_SCHEMA)
    problems = [f"{'.'.join(str(p) for p in e.absolute_path) or 'requirements'}: {e.message}"
                for e in sorted(validator.iter_errors(requirements), key=lambda e: list(e.absolute_path))]
    if problems:
        return problems
    for key in REQUIRED:
        if bool(requirements.get(key)) == (key in requirements["missing"]):
            problems.append(f"{key} is {'both found and listed' if requirements.get(key) else 'neither found nor listed'}"
                            " as missing")
    return problems
