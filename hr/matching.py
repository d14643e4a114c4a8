"""The candidate-matching skill's scoring: deterministic and explained. The same TAN and
candidates always give the same ranking, which is what makes a whole-skill retry safe
(seed 002). Features: skills overlap, location, seniority; each explained in words."""
from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

WEIGHTS = {"skills": Decimal("0.60"), "location": Decimal("0.25"), "seniority": Decimal("0.15")}
MIN_SCORE = Decimal("0.500")
REMOTE = {"remote", "远程"}
SENIORITY_WORDS = {1: ("junior", "初级"), 2: ("mid-level", "中级"), 3: ("senior", "高级"), 4: ("lead", "资深/负责人")}


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


def explain(tan: dict[str, Any], candidate: dict[str, Any], f: dict[str, Any]) -> tuple[str, str]:
    n, total = len(f["skills_matched"]), len(tan["skills"])
    where = ("in " + tan["location"] if f["location"] == "1" else
             "remote" if f["location"] == "0.5" else f"in {candidate['location']}, not {tan['location']}")
    level_en, level_zh = SENIORITY_WORDS.get(int(candidate["seniority"]), ("?", "?"))
    fit = {"1": "as asked", "0.5": "one level off", "0": "far off"}[f["seniority"]]
    en = (f"{n} of {total} skills ({', '.join(f['skills_matched']) or 'none'}); {where}; {level_en}, {fit}.")
    where_zh = ("同城" if f["location"] == "1" else "可远程" if f["location"] == "0.5" else f"在{candidate['location']}")
    fit_zh = {"1": "符合要求", "0.5": "差一级", "0": "差距较大"}[f["seniority"]]
    zh = f"技能匹配{n}/{total}（{'、'.join(f['skills_matched']) or '无'}）；{where_zh}；{level_zh}，{fit_zh}。"
    return en, zh


def rank(tan: dict[str, Any], candidates: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """The top `limit` candidates scoring at least MIN_SCORE, best first (ties by name)."""
    scored = []
    for candidate in candidates:
        f = features_of(tan, candidate)
        score = score_of(f)
        if score < MIN_SCORE:
            continue
        en, zh = explain(tan, candidate, f)
        scored.append({"candidate_id": str(candidate["candidate_id"]), "name": candidate["name"],
                       "score": str(score), "features": f, "explanation": en, "explanation_zh": zh})
    scored.sort(key=lambda m: (-Decimal(m["score"]), m["name"]))
    return scored[:limit]
