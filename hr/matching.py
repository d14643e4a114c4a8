"""The candidate-matching skill's scoring: deterministic and explained. The same TAN and
candidates always give the same ranking, which is what makes a whole-skill retry safe
(workflow state vs agent run state, DESIGN.md §2). Features: skills overlap, location, seniority; each explained in words."""
from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.utils.translation import gettext_noop

from config.words import localised, words, words_english, words_render

WEIGHTS = {"skills": Decimal("0.60"), "location": Decimal("0.25"), "seniority": Decimal("0.15")}
MIN_SCORE = Decimal("0.500")
REMOTE = {"remote", "远程"}


def features_of(tan: dict[str, Any], candidate: dict[str, Any]) -> dict[str, Any]:
    wanted, has = set(tan["skills"]), {s.lower() for s in candidate["skills"]}
    matched = sorted(wanted & has)
    skills = Decimal(len(matched)) / Decimal(len(wanted)) if wanted else Decimal(0)
    place = candidate["location"].strip().lower()
    location = Decimal(1) if place == tan["location"].strip().lower() else (
        Decimal("0.5") if place in REMOTE else Decimal(0))
    gap = abs(int(candidate["seniority"]) - int(tan["seniority"]))
    seniority = Decimal(1) if gap == 0 else (Decimal("0.5") if gap == 1 else Decimal(0))
    return {"skills": str(skills.quantize(Decimal("0.001"))), "skills_matched": matched,
            "skills_missing": sorted(wanted - has), "location": str(location), "seniority": str(seniority)}


def score_of(features: dict[str, Any]) -> Decimal:
    total = sum(WEIGHTS[k] * Decimal(features[k]) for k in WEIGHTS)
    return total.quantize(Decimal("0.001"), rounding=ROUND_HALF_UP)


# The cities the CV bank and TANs name, in the reader's language; another place shows as typed.
CITY_NAMES = {"beijing": "北京", "shanghai": "上海", "shenzhen": "深圳", "guangzhou": "广州", "hangzhou": "杭州",
              "chengdu": "成都", "nanjing": "南京", "wuhan": "武汉", "suzhou": "苏州", "tianjin": "天津",
              "chongqing": "重庆", "xian": "西安", "hong kong": "香港", "singapore": "新加坡", "remote": "远程"}
LEVEL_WORDS = {1: gettext_noop("junior"), 2: gettext_noop("mid-level"), 3: gettext_noop("senior"),
               4: gettext_noop("lead")}
FIT_WORDS = {"1": gettext_noop("as asked"), "0.5": gettext_noop("one level off"), "0": gettext_noop("far off")}


def place(location: str) -> Any:
    """A place as typed ("Hangzhou"), as a name in both languages when it is a known city."""
    zh = CITY_NAMES.get(location.strip().lower().replace("'", ""))
    return localised(location.strip(), zh) if zh else location


def explain(tan: dict[str, Any], candidate: dict[str, Any], f: dict[str, Any]) -> dict[str, Any]:
    """Why this candidate scored so, as words: each reader reads it in their language, the
    cities too ("in Hangzhou, not Beijing" / "在杭州，不在北京")."""
    if f["location"] == "1":
        where = words(gettext_noop("in %(city)s"), city=place(tan["location"]))
    elif f["location"] == "0.5":
        where = words(gettext_noop("remote"))
    else:
        where = words(gettext_noop("in %(city)s, not %(wanted)s"), city=place(candidate["location"]),
                      wanted=place(tan["location"]))
    level = int(candidate["seniority"])
    return words(gettext_noop("%(n)s of %(total)s skills (%(skills)s); %(where)s; %(level)s, %(fit)s."),
                 n=len(f["skills_matched"]), total=len(tan["skills"]),
                 skills=list(f["skills_matched"]) or words(gettext_noop("none")), where=where,
                 level=words(LEVEL_WORDS[level]) if level in LEVEL_WORDS else "?", fit=words(FIT_WORDS[f["seniority"]]))


def rank(tan: dict[str, Any], candidates: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """The top `limit` candidates scoring at least MIN_SCORE, best first (ties by name)."""
    scored = []
    for candidate in candidates:
        f = features_of(tan, candidate)
        score = score_of(f)
        if score < MIN_SCORE:
            continue
        explanation = explain(tan, candidate, f)
        # The words, and their two renderings the HR system of record keeps (Match.explanation/_zh).
        scored.append({"candidate_id": str(candidate["candidate_id"]), "name": candidate["name"],
                       "score": str(score), "features": f, "explanation": words_english(explanation),
                       "explanation_zh": words_render(explanation, "zh-hans"), "explanation_words": explanation})
    scored.sort(key=lambda m: (-Decimal(m["score"]), m["name"]))
    return scored[:limit]
