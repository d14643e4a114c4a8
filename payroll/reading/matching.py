"""Choosing a catalog template for the extracted requirements, with explicit weights.

A template *fits* a request when nothing it says contradicts it:
- its region is the request's (a mainland city) or nationwide (CN); a city with no template
  of its own fits only nationwide templates;
- its pay cycle is the one asked for (an unsaid cycle contradicts nothing; "hourly" is a pay
  basis, not a cycle);
- it has every component the request needs and a general template cannot add by itself
  (HARD_ITEMS: commission, overtime, annual bonus, CPF, MPF);
- it is general, or its specialisation (sales, executives, interns, shift work, legacy) is
  named: a general template is chosen over a specialised one when the request names none.

Among the fitting templates the score (WEIGHTS) ranks them; the clearly best wins, a tie at
the top is a genuine question (at most three options). When the request says nothing about
where and nothing specific, the question is "which region?". When nothing fits, the answer
says so plainly and offers the nearest templates, ranked by NEAREST_WEIGHTS, which count a
contradiction as a cost instead of ruling the template out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext_noop

from config.words import Stored, localised, sentences, words
from workflows.conversation import option_choose as generic_option_choose

from .requirements import REGION_NAMES, requirements_extract

WEIGHTS = {
    "region": 6,             # the template is for the request's city or country
    "nationwide": 2,         # a nationwide (CN) template for a mainland city
    "pay_frequency": 2,      # the pay cycle asked for
    "specialisation": 5,     # the population the template is made for (sales, interns…): beats a city match
    "pay_basis": 3,          # hourly pay asked for and the template pays by the hour
    "item": 2,               # each component asked for that the template has
}
NEAREST_WEIGHTS = {**WEIGHTS, "wrong_region": -3, "wrong_frequency": -2, "missing_item": -2,
                   "unnamed_specialisation": -6}
HARD_ITEMS = ("commission", "overtime", "annual_bonus", "cpf", "mpf")
MAX_OPTIONS = 3

# What a template specialises in, read from its name and description; and what names it.
SPECIALISATIONS = {
    # Sales pay from the month's attendance (commission, overtime, absence): for a sales request
    # that names overtime, never a plain "sales with commission" one nor a shift-work one (first:
    # a dict's order is the matching order; `_named` wants both).
    "attendance": (r"\babsence\b", {"sales"}, {"overtime"}),
    "sales": (r"\bsales\b|commission", {"sales"}, {"commission"}),
    "executive": (r"executive", {"executive"}, {"annual_bonus"}),
    "intern": (r"\bintern", {"intern"}, set()),
    "shift": (r"\bshift\b|factory", {"shift"}, set()),
    "legacy": (r"legacy", set(), set()),
}
ITEM_CODES = {"commission": ("commission",), "overtime": ("ot_", "overtime"), "annual_bonus": ("annual_bonus",),
              "cpf": ("cpf",), "mpf": ("mpf",)}
REGION_CITY = {"CN-SH": "shanghai", "CN-BJ": "beijing", "CN-SZ": "shenzhen", "CN-GZ": "guangzhou",
               "SG": "sg", "US": "us", "HK": "hk", "CN": "cn"}


@dataclass
class Fit:
    template: Any
    score: int
    reasons: list[str]
    conflicts: list[str]            # why it does not fit; empty when it fits
    nearest: int = 0                # the score that ranks it as a nearest alternative


@dataclass
class Decision:
    kind: str                       # "clear", "choice" (a tie), "none" (nothing fits), "ask_region"
    chosen: Any = None
    options: list[Any] = field(default_factory=list)
    reason: str = ""
    fits: list[Fit] = field(default_factory=list)


def _specialisation(template) -> str | None:
    text = f"{template.name} {template.description or ''}".lower()
    for spec, (pattern, _, _) in SPECIALISATIONS.items():
        if re.search(pattern, text):
            return spec
    return None


def _named(spec: str | None, requirements: dict[str, Any]) -> bool:
    if spec is None:
        return True
    if spec == "legacy":
        return bool(requirements.get("legacy"))
    named_items = set(requirements.get("items_named") or [])
    if spec == "attendance":
        return "overtime" in named_items and (requirements.get("population") == "sales" or "commission" in named_items)
    _, populations, items = SPECIALISATIONS[spec]
    if requirements.get("population") in populations or set(requirements.get("items_named") or []) & items:
        return True
    return spec == "shift" and requirements.get("pay_frequency") == "hourly"


def template_fit(template, requirements: dict[str, Any]) -> Fit:
    """Score one template against the requirements; `conflicts` says why it does not fit."""
    score, nearest, reasons, conflicts = 0, 0, [], []
    region = requirements.get("region")
    template_region = template.region.lower().replace("cn-", "")
    if region:
        city = REGION_CITY.get(region, region.lower().replace("cn-", ""))
        if city == template_region:
            score, nearest, reasons = score + WEIGHTS["region"], nearest + WEIGHTS["region"], reasons + ["region"]
        elif region.startswith("CN") and template.region == "CN":
            score, nearest = score + WEIGHTS["nationwide"], nearest + WEIGHTS["nationwide"]
            reasons.append("nationwide template")
        else:
            conflicts.append("region")
            nearest += NEAREST_WEIGHTS["wrong_region"]
    frequency = requirements.get("pay_frequency")
    if frequency and frequency != "hourly":
        if frequency == template.pay_frequency:
            score, nearest, reasons = score + WEIGHTS["pay_frequency"], nearest + 2, reasons + ["pay frequency"]
        else:
            conflicts.append("pay_frequency")
            nearest += NEAREST_WEIGHTS["wrong_frequency"]
    text = f"{template.code} {template.name} {template.description or ''}".lower()
    if frequency == "hourly" and "hourly" in text:
        score, nearest, reasons = score + WEIGHTS["pay_basis"], nearest + WEIGHTS["pay_basis"], reasons + ["hourly"]
    spec = _specialisation(template)
    if spec and _named(spec, requirements) and (spec == "legacy" or set(requirements.get("items_named") or [])
                                                & SPECIALISATIONS[spec][2]
                                                or requirements.get("population") in SPECIALISATIONS[spec][1]
                                                or frequency == "hourly"):
        score, nearest = score + WEIGHTS["specialisation"], nearest + WEIGHTS["specialisation"]
        reasons.append("population")
    elif requirements.get("population") == "salaried" and "salaried" in text:
        score, nearest, reasons = score + WEIGHTS["specialisation"], nearest + 3, reasons + ["population"]
    if not _named(spec, requirements):
        conflicts.append("specialisation")
        nearest += NEAREST_WEIGHTS["unnamed_specialisation"]
    codes = [i.code for i in template.items.all()]
    for item in requirements.get("items_named") or []:
        if item in HARD_ITEMS:
            if any(part in code for code in codes for part in ITEM_CODES[item]):
                score, nearest, reasons = score + WEIGHTS["item"], nearest + WEIGHTS["item"], reasons + [item]
            else:
                conflicts.append(item)
                nearest += NEAREST_WEIGHTS["missing_item"]
    return Fit(template, score, reasons, conflicts, nearest)


def requirement_specific(requirements: dict[str, Any]) -> bool:
    """Whether the request says anything that can pick a template without a region."""
    return bool(requirements.get("population") in {"sales", "executive", "intern", "shift"}
                or set(requirements.get("items_named") or []) & set(HARD_ITEMS)
                or requirements.get("pay_frequency") in ("hourly", "semi_monthly", "biweekly", "weekly")
                or requirements.get("legacy"))


def template_decide(requirements: dict[str, Any], templates) -> Decision:
    """The one decision every caller uses (conversation, match tool, evaluation)."""
    latest: dict[str, Any] = {}
    for t in templates:
        if t.code not in latest or t.version > latest[t.code].version:
            latest[t.code] = t
    fits = sorted((template_fit(t, requirements) for t in latest.values()),
                  key=lambda f: (-f.score, f.template.code))
    fitting = [f for f in fits if not f.conflicts]
    if not requirements.get("region") and not requirement_specific(requirements):
        return Decision("ask_region", reason="the request names no place and nothing specific", fits=fits)
    if not fitting:
        # General templates before special-purpose ones the request does not name (interns,
        # shift work…): a request for everyone nationwide is not served an intern template first.
        nearest = sorted(fits, key=lambda f: ("specialisation" in f.conflicts, -f.nearest, -f.score,
                                              _general_rank(f.template), f.template.code))
        general = [f for f in nearest if "specialisation" not in f.conflicts]
        nearest = [f for f in nearest if "specialisation" not in f.conflicts or (f.nearest > 0 and len(general) < 2)]
        nearest = nearest[:MAX_OPTIONS]
        return Decision("none", options=[f.template for f in nearest], fits=fits,
                        reason="no template fits: " + ", ".join(sorted({c for f in fits for c in f.conflicts})))
    top = [f for f in fitting if f.score == fitting[0].score]
    if len(top) == 1:
        return Decision("clear", chosen=top[0].template, fits=fits,
                        reason="the best fit: " + ", ".join(top[0].reasons or ["general template"]))
    return Decision("choice", options=[f.template for f in top[:MAX_OPTIONS]], fits=fits,
                    reason=f"{len(top)} templates fit equally well")


# Among general templates that fit equally (near), the catalog's reference cities in this order.
GENERAL_ORDER = ("cn-sh-monthly-salaried", "cn-bj-monthly-salaried", "cn-sz-monthly-salaried", "cn-gz-monthly-salaried")


def _general_rank(template) -> int:
    return GENERAL_ORDER.index(template.code) if template.code in GENERAL_ORDER else len(GENERAL_ORDER)


# --- What the request asks for that the template has -------------------------------------------

# A requested item is met when the template has an item whose code contains one of these.
ITEM_MATCH = {"commission": ("commission",), "overtime": ("ot_", "overtime"), "annual_bonus": ("annual_bonus",),
              "performance_bonus": ("performance", "kpi"), "bonus": ("bonus",), "allowance": ("allowance",),
              "housing_fund": ("housing",), "social_insurance": ("pension", "medical", "social_security", "cpf", "mpf"),
              "cpf": ("cpf",), "mpf": ("mpf",), "tips": ("tip",)}
ITEM_NAMES = {"commission": ("commission", "提成"), "overtime": ("overtime pay", "加班费"),
              "annual_bonus": ("an annual (13th-month) bonus", "年终奖/十三薪"),
              "performance_bonus": ("performance pay", "绩效"), "bonus": ("a bonus", "奖金"),
              "allowance": ("an allowance", "津贴/补贴"), "housing_fund": ("the housing fund", "公积金"),
              "social_insurance": ("social insurance", "社保"), "cpf": ("CPF", "中央公积金"), "mpf": ("MPF", "强积金"),
              "tips": ("tips", "小费")}


def item_words(item: str, zh: bool) -> str:
    return ITEM_NAMES.get(item, (item.replace("_", " "), item))[1 if zh else 0]


def template_label(template, zh: bool) -> str:
    return (template.name_zh or template.name) if zh else template.name


def template_name_words(template) -> dict[str, str]:
    """A template's name in each reader's language (config.words.localised)."""
    return localised(template.name, template.name_zh or template.name)


def item_name_words(item: str) -> dict[str, str]:
    en, zh = ITEM_NAMES.get(item, (item.replace("_", " "), item))
    return localised(en, zh)


def items_met(requirements: dict[str, Any], template) -> tuple[list[str], list[dict[str, str]]]:
    """Each requested item is met (the template has it) or not met, with the reason in words
    (English; `not_met_words` says it in the user's language)."""
    codes = [i.code for i in template.items.all()]
    met, not_met = [], []
    for item in dict.fromkeys(requirements.get("items_named") or []):
        if any(part in code for code in codes for part in ITEM_MATCH.get(item, (item,))):
            met.append(item)
        else:
            not_met.append({"item": item, "reason": f"no {item_words(item, False)} item in the template "
                                                    f"“{template.name}”; add it after setup or choose another "
                                                    "template"})
    return met, not_met


def not_met_words(not_met: list[dict[str, str]], template) -> Stored:
    """The chat's sentence for what the template does not cover ("" when it covers everything), as words."""
    if not not_met:
        return ""
    items = words(gettext_noop("%(names)s: no such item in the template “%(template)s”"),
                  names=[item_name_words(n["item"]) for n in not_met], template=template_name_words(template))
    return words(gettext_noop("Not met — %(items)s. Add it after setup, or choose another template."), items=items)


def template_city(template) -> tuple[str, str] | None:
    """The city a city template is made for, in (English, Chinese); None for a nationwide or foreign one."""
    region = (template.region or "")
    if not region.startswith("CN-"):
        return None
    en = region[3:]
    # The city's Chinese name from the regions Keel knows; a template's Chinese name begins
    # with its city only when it is named for one ("深圳月薪员工", not "销售人员（含提成）").
    known = {name: zh for name, zh in REGION_NAMES.values()}
    zh = known.get(en) or en
    return en, zh


def other_city_words(requirements: dict[str, Any], template, catalog=()) -> Stored:
    """Said plainly when the template is made for another city than the request's (words).
    `catalog`: the templates there are; when one is made for the request's city, that it did
    not fit is said, never that there is none."""
    region = requirements.get("region") or ""
    city = template_city(template)
    if not region.startswith("CN") or city is None:
        return ""
    wanted = REGION_CITY.get(region, region.lower().replace("cn-", ""))
    if wanted == city[0].lower():
        return ""
    name, its = template_name_words(template), localised(city[0], city[1])
    if region == "CN":
        return words(gettext_noop("There is no nationwide template; I'll use “%(template)s” — its social insurance "
                                  "and housing fund rates are %(city)s's, not set nationwide."), template=name, city=its)
    place = localised(_place(requirements, False), _place(requirements, True))
    local = [t for t in catalog if (template_city(t) or ("",))[0].lower() == wanted]
    if local:
        return words(gettext_noop("%(place)s's own templates (%(local)s) do not fit this request; I'll use "
                                  "“%(template)s” — its social insurance and housing fund rates are %(city)s's, not "
                                  "%(place)s's."), place=place, template=name, city=its,
                     local=[words(gettext_noop("“%(label)s”"), label=template_name_words(t)) for t in local])
    return words(gettext_noop("There is no %(place)s template; I'll use “%(template)s” — its social insurance and "
                              "housing fund rates are %(city)s's, not %(place)s's."), place=place, template=name,
                 city=its)


def template_next_best(requirements: dict[str, Any], templates):
    """The template to try when the best one could not be used (its import failed its
    verification and was undone): what the match would choose among `templates` (the
    tried ones left out) — the clear winner, else the nearest option that still fits the
    place and pay cycle — or None when nothing is left."""
    decision = template_decide(requirements, templates)
    if decision.kind == "clear":
        return decision.chosen
    for template in decision.options:
        if not {"region", "pay_frequency"} & set(template_fit(template, requirements).conflicts):
            return template
    return None


def _place(requirements: dict[str, Any], zh: bool) -> str:
    city = requirements.get("city") or {}
    return (city.get("zh") if zh else city.get("en")) or requirements.get("region") or ""


def decision_question(decision: Decision, requirements: dict[str, Any]) -> Stored:
    """What to tell and ask the user, as words (rendered in each reader's language)."""
    listed = [words(gettext_noop("“%(label)s”"), label=template_name_words(t)) for t in decision.options]
    if decision.kind == "choice":
        return words(gettext_noop("Several templates fit equally well: %(templates)s. Which one should I use?"),
                     templates=listed)
    if decision.kind == "none":
        return sentences(_no_fit(decision, requirements), words(gettext_noop(
            "The nearest are %(templates)s. Pick one, or tell me what to change."), templates=listed))
    return words(gettext_noop("Which city or region is the group for?"))


ITEM_WORDS = {"commission": ("commission", "提成"), "overtime": ("overtime", "加班费"),
              "annual_bonus": ("an annual bonus", "年终奖"), "cpf": ("CPF", "中央公积金"), "mpf": ("MPF", "强积金")}
FREQ_WORDS = {"monthly": ("monthly", "按月"), "semi_monthly": ("twice a month", "半月"), "biweekly": ("every two weeks", "双周"),
              "weekly": ("weekly", "按周")}


def _both(parts: list[Stored]) -> Stored:
    """"a and b" / "甲和乙", as words."""
    said = parts[-1]
    for part in reversed(parts[:-1]):
        said = words(gettext_noop("%(item)s and %(other)s"), item=part, other=said)
    return said


def _no_fit(decision: Decision, requirements: dict[str, Any]) -> Stored:
    """Why no template fits, as words."""
    place = localised(_place(requirements, False), _place(requirements, True))
    regional = [f for f in decision.fits if "region" in f.reasons]  # made for this very place
    if requirements.get("region") and not regional:
        if requirements.get("region") == "CN":
            return words(gettext_noop("There is no nationwide template for this yet."))
        return words(gettext_noop("There is no template for %(place)s yet."), place=place)
    missing = [i for i in requirements.get("items_named") or [] if i in HARD_ITEMS
               and all(i in f.conflicts for f in regional)]
    if missing:
        items = _both([localised(*ITEM_WORDS[i]) for i in missing])
        if not place["en"]:
            return words(gettext_noop("No template has %(items)s."), items=items)
        return words(gettext_noop("No %(place)s template has %(items)s."), place=place, items=items)
    frequency = requirements.get("pay_frequency")
    if frequency in FREQ_WORDS and all("pay_frequency" in f.conflicts for f in regional):
        return words(gettext_noop("No %(place)s template pays %(frequency)s."), place=place,
                     frequency=localised(*FREQ_WORDS[frequency]))
    return words(gettext_noop("No template fits this exactly."))


def option_choose(text: str, options: list[dict[str, Any]]) -> int | None:
    """Which offered option a reply picks: the generic reading (workflows.conversation:
    a click, "the first one", the label in either language, a close variant), then a
    place or population that only one option has ("the shenzhen one", "深圳那个")."""
    return generic_option_choose(text, options, also=_only_option_naming)


def _only_option_naming(text: str, labels: list[list[str]]) -> int | None:
    wanted = requirements_extract(text)
    keys = [w for w in ((wanted.get("city") or {}).get("en"), (wanted.get("city") or {}).get("zh")) if w]
    if wanted.get("population"):
        keys.append(wanted["population"])
    matching = [i for i, names in enumerate(labels) if keys and any(k.lower() in " ".join(names) for k in keys)]
    return matching[0] if len(matching) == 1 else None
