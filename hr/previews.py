"""What the generic apps need to know about the matching tools: when persisting needs an
approver (more matches than the threshold), the card, and how many matches a key wrote."""
from __future__ import annotations

from typing import Any

from django.db.models import Count
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from config.words import localised, words, words_render
from workflows.tools import Preview

from .models import Candidate, Match, Tan, TanStatus
from .services import match_approval_threshold


def persist_needs_approval(tenant_id: int, arguments: dict[str, Any]) -> bool:
    return len((arguments.get("match_result") or {}).get("matches") or []) > match_approval_threshold()


def persist_summary_words(tenant_id: int, arguments: dict[str, Any]) -> dict[str, Any]:
    """The card's sentence as meaning: the TAN's title in the reader's language, every candidate named."""
    result = arguments.get("match_result") or {}
    matches = result.get("matches") or []
    tan = Tan.objects.filter(tenant_id=tenant_id, id=int(arguments["tan_id"])).first() if str(
        arguments.get("tan_id", "")).isdigit() else None
    title = localised(tan.title, tan.title_zh or tan.title) if tan else result.get("title", "")
    ids = [int(m["candidate_id"]) for m in matches if str(m.get("candidate_id", "")).isdigit()]
    chinese = dict(Candidate.objects.filter(tenant_id=tenant_id, id__in=ids).values_list("id", "name_zh"))
    names = [words(gettext_noop("%(name)s (%(score)s)"), score=m["score"], name=localised(
        m["name"], chinese.get(int(m["candidate_id"])) or m["name"]) if str(m.get("candidate_id", "")).isdigit()
        else m["name"]) for m in matches]
    return words(gettext_noop("Record %(n)s matches for the TAN “%(title)s” — more than %(threshold)s at once: "
                              "%(names)s."), n=len(matches), title=title, threshold=match_approval_threshold(),
                 names=names)


def persist_summary(tenant_id: int, arguments: dict[str, Any], diff: dict[str, Any] | None = None) -> str:
    """An approval stored before its summary was words: worded for the reader now."""
    return words_render(persist_summary_words(tenant_id, arguments))


def persist_preview(tenant_id: int, arguments: dict[str, Any], params: dict[str, Any]) -> Preview:
    matches = (arguments.get("match_result") or {}).get("matches") or []
    return Preview(summary=persist_summary_words(tenant_id, arguments),
                   measures={"matches": len(matches), "threshold": match_approval_threshold()})


def persist_argument(tenant_id: int, name: str, value: Any) -> tuple[str, str]:
    if name == "tan_id":
        tan = Tan.objects.filter(tenant_id=tenant_id, id=int(value)).first() if str(value).isdigit() else None
        return _("TAN"), (_("%(title)s in %(location)s (skills: %(skills)s)")
                          % {"title": tan.title, "location": tan.location, "skills": ", ".join(tan.skills)}
                          if tan else _("unknown TAN"))
    if name == "match_result" and isinstance(value, dict):
        return _("Matches"), "; ".join(f"{m['name']} {m['score']}: {m['explanation']}" for m in value.get("matches", []))
    return name.replace("_", " ").capitalize(), str(value)


def persist_preconditions(tenant_id: int, run_id: int, arguments: dict[str, Any]) -> str:
    tan = Tan.objects.filter(tenant_id=tenant_id, id=int(arguments["tan_id"])).first()
    if tan is None or tan.status != TanStatus.APPROVED:
        return "the TAN is no longer approved"
    return ""


def match_effects(tenant_id: int, keys: list[str]) -> dict[str, int]:
    """One approved persist step is one effect; every match it wrote beyond one per
    candidate would be a duplicate (the unique constraint makes that 0, and this shows it)."""
    runs = {}
    for key in keys:
        head = key.split(":", 1)[0]
        if head.startswith("run") and head[3:].isdigit():
            runs[int(head[3:])] = key
    rows = (Match.objects.filter(tenant_id=tenant_id, run_id__in=list(runs)).values("run_id")
            .annotate(n=Count("id"), distinct=Count("candidate_id", distinct=True)))
    return {runs[r["run_id"]]: 1 + r["n"] - r["distinct"] for r in rows if r["n"]}
