"""Writes of the policy app: the cached answer service and the demo corpus."""
from __future__ import annotations

import hashlib
import json
import os
from datetime import date
from decimal import Decimal
from typing import Any, Callable

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils.translation import gettext_noop

from llm import ModelError, backend_get
from config.words import localised, words
from llm.builtin import MODEL as BUILTIN_MODEL
from tenants.models import Tenant

from .models import (
    LineRole,
    PolicyAnswerCache,
    PolicyDocument,
    PolicyLine,
    PolicyVersion,
)
from .selectors import corpus_version
from .workflow import graph_load, policy_graph_walk

# Bump when retrieval, verification or composition change meaning; the graph's own
# digest and the caps are part of the processing version too.
PROCESSING_VERSION = "ka5-host-1"
CACHEABLE_STATES = {"ANSWERED", "ABSTAINED"}  # a STOPPED walk (timeout, cap) may go otherwise next time


def _model_identity() -> str:
    try:
        backend = backend_get().name
    except ModelError:
        return "invalid-backend"
    model = BUILTIN_MODEL if backend == "builtin" else os.environ.get("KEEL_LLM_MODEL", "")
    return f"{backend}/{model}"


def processing_version(*, max_transitions: int, max_model_calls: int) -> str:
    graph = graph_load()
    return (f"{PROCESSING_VERSION}:{graph.version}:{graph.digest[:12]}:t{max_transitions}:m{max_model_calls}:"
            f"{_model_identity()}")


def answer_cache_key(*, tenant: Tenant, question: str, on_date: date, topic: str, lang: str,
                     corpus: str, processing: str) -> str:
    normalized = " ".join(question.split()).casefold()
    parts = [tenant.id, normalized, on_date.isoformat(), topic, lang, corpus, processing]
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()


def policy_answer(*, tenant: Tenant, question: str, on_date: date, topic: str, lang: str,
                  max_transitions: int | None = None, max_model_calls: int | None = None,
                  use_cache: bool | None = None, model: Callable[..., Any] | None = None) -> dict[str, Any]:
    """Answer a policy question through the exact graph, reusing a cached terminal answer
    when question, date, topic, language, corpus version, processing version and tenant
    all match. The scripted backend skips the cache by default, so that a replay makes
    the same model calls as the recorded run. A cached result says `cached: true`; its
    path and model_calls describe the walk that produced it.

    `model` replaces llm.model_call for the walk's decision (a tool passes the engine's
    tool_model_call). No transaction wraps the walk: it may wait on a model, and must not
    hold a write lock."""
    graph = graph_load()
    max_transitions = graph.max_transitions if max_transitions is None else max_transitions
    max_model_calls = graph.max_model_calls if max_model_calls is None else max_model_calls
    corpus = corpus_version(tenant=tenant, topic=topic)
    processing = processing_version(max_transitions=max_transitions, max_model_calls=max_model_calls)
    if use_cache is None:
        use_cache = not processing.split(":")[-1].startswith("scripted/")
    key = answer_cache_key(tenant=tenant, question=question, on_date=on_date, topic=topic, lang=lang,
                           corpus=corpus, processing=processing)
    if use_cache:
        cached = PolicyAnswerCache.objects.filter(tenant=tenant, key=key).first()
        if cached is not None:
            PolicyAnswerCache.objects.filter(pk=cached.pk).update(hits=F("hits") + 1)
            return {**cached.result, "cached": True}
    result = policy_graph_walk(tenant=tenant, question=question, on_date=on_date, topic=topic, lang=lang,
                               max_transitions=max_transitions, max_model_calls=max_model_calls, graph=graph,
                               model=model)
    result.update({"corpus_version": corpus, "processing_version": processing, "cached": False})
    if use_cache and result["state"] in CACHEABLE_STATES:
        try:
            with transaction.atomic():
                PolicyAnswerCache.objects.create(
                    tenant=tenant, key=key, question=question, on_date=on_date, topic=topic, lang=lang,
                    corpus_version=corpus, processing_version=processing, result=result)
        except IntegrityError:
            pass  # a concurrent request cached the same answer first
    return result


# --- The demo corpus: the travel policy's versions travel-v1 and travel-v2 --------------------
_UNIT_EN, _UNIT_ZH = "yuan per room per night", "元/间/晚"
_BEIJING_LODGING = [["beijing", "北京", "peking"],
                    ["lodging", "hotel", "accommodation", "room", "住宿", "酒店", "宾馆", "客房"]]
TRAVEL_VERSIONS = [
    {"label": "travel-v1", "effective_from": date(2025, 1, 1), "effective_to": date(2025, 12, 31), "replaces": None,
     "amount": Decimal("600"),
     "lines": {
         "en": ["Lodging limits in this policy are stated in yuan per room per night.",
                "This version applies from 2025-01-01 to 2025-12-31.",
                "Beijing lodging: 600 yuan per room per night."],
         "zh": ["本制度的住宿标准以元/间/晚（人民币元，每间每晚）计。",
                "本版本适用于2025-01-01至2025-12-31。",
                "北京住宿：600元/间/晚。"]}},
    {"label": "travel-v2", "effective_from": date(2026, 1, 1), "effective_to": None, "replaces": "travel-v1",
     "amount": Decimal("750"),
     "lines": {
         "en": ["Lodging limits in this policy are stated in yuan per room per night.",
                "This version takes effect on 2026-01-01 and replaces travel-v1.",
                "Beijing lodging: 750 yuan per room per night."],
         "zh": ["本制度的住宿标准以元/间/晚（人民币元，每间每晚）计。",
                "本版本自2026-01-01起生效，取代travel-v1。",
                "北京住宿：750元/间/晚。"]}},
]


@transaction.atomic
def policy_travel_seed(*, tenant: Tenant) -> PolicyDocument:
    """Create or refresh the demo travel policy for one tenant. Idempotent."""
    document, _ = PolicyDocument.objects.update_or_create(
        tenant=tenant, topic="travel",
        defaults={"title": "Travel and lodging policy", "authority": "Finance Committee"})
    by_label: dict[str, PolicyVersion] = {}
    for spec in TRAVEL_VERSIONS:
        version, _ = PolicyVersion.objects.update_or_create(
            document=document, label=spec["label"],
            defaults={"effective_from": spec["effective_from"], "effective_to": spec["effective_to"],
                      "replaces": by_label.get(spec["replaces"]) if spec["replaces"] else None})
        by_label[spec["label"]] = version
        for lang, texts in spec["lines"].items():
            unit = _UNIT_ZH if lang == "zh" else _UNIT_EN
            roles = [(LineRole.UNIT, None, unit, []), (LineRole.EFFECTIVE, None, "", []),
                     (LineRole.AMOUNT, spec["amount"], unit, _BEIJING_LODGING)]
            for number, (text, (role, amount, line_unit, terms)) in enumerate(zip(texts, roles), start=1):
                PolicyLine.objects.update_or_create(
                    version=version, lang=lang, number=number,
                    defaults={"text": text, "role": role, "amount": amount, "unit": line_unit, "subject_terms": terms})
    return document


@transaction.atomic
def policy_corpus_copy(*, from_tenant_id: int, to_tenant_id: int) -> int:
    """Copy a tenant's policies (documents, versions, lines) into another tenant (a replay's
    sandbox), as they are; returns how many versions were copied. The answer cache is not."""
    copied: dict[int, PolicyVersion] = {}
    for document in PolicyDocument.objects.filter(tenant_id=from_tenant_id).prefetch_related("versions__lines"):
        twin = PolicyDocument.objects.create(tenant_id=to_tenant_id, topic=document.topic, title=document.title,
                                             authority=document.authority)
        # Oldest first, so that what a version replaces is copied before it.
        for version in sorted(document.versions.all(), key=lambda v: (v.effective_from, v.id)):
            copied[version.id] = PolicyVersion.objects.create(
                document=twin, label=version.label, effective_from=version.effective_from,
                effective_to=version.effective_to, replaces=copied.get(version.replaces_id))
            PolicyLine.objects.bulk_create([
                PolicyLine(version=copied[version.id], lang=line.lang, number=line.number, text=line.text,
                           role=line.role, amount=line.amount, unit=line.unit, subject_terms=line.subject_terms)
                for line in version.lines.all()])
    return len(copied)


# --- The expense claim check: the exact graph on a claim's date, city and category ------------

CATEGORY_WORDS = {"lodging": ("lodging", "住宿")}
# A claim's category as a word of the reader's language (the same words the expense app shows).
CATEGORY_NAMES = {"lodging": gettext_noop("lodging"), "meals": gettext_noop("meals"),
                  "transport": gettext_noop("transport"), "other": gettext_noop("other")}


def _category(category: str) -> Any:
    return words(CATEGORY_NAMES[category]) if category in CATEGORY_NAMES else category


def _unit(version: PolicyVersion | None, unit: str) -> Any:
    """The limit's unit in the reader's language: the policy states it in each of its
    languages (its amount lines), so the English reader reads "yuan per room per night"
    for a claim that was checked in Chinese ("元/间/晚"), and the other way round."""
    if version is None or not unit:
        return unit
    stated = dict(PolicyLine.objects.filter(version=version, role=LineRole.AMOUNT).exclude(unit="")
                  .values_list("lang", "unit"))
    return localised(stated.get("en") or unit, stated.get("zh") or unit)


def policy_claim_check(*, tenant: Tenant, on_date: date, city: str, category: str, amount: Decimal,
                       nights: int, currency: str, lang: str = "en",
                       model: Callable[..., Any] | None = None) -> dict[str, Any]:
    """Judge one claim against the travel policy in force on its date: walk the policy's exact
    graph for "<city> <category>" and compare the claim's amount per night with the cited
    limit. → {verdict: within_limit | over_limit | no_policy, limit, unit, per_night, source,
    effective_from, citation, state, path, reason, model_calls, summary, summary_words}.

    `summary` is the finding in English (what the check's own tool frame and logs say);
    `summary_words` is the same finding as words (config.words), which the expense system
    records on the claim's history for each reader to read in their language.

    No answer (the walk abstained or stopped), a category the policy does not limit, or a
    currency other than yuan is `no_policy`: the program cannot say the claim is within
    the policy, so an approver decides."""
    words_of = CATEGORY_WORDS.get(category)
    per_night = (Decimal(amount) / nights).quantize(Decimal("0.01")) if nights else Decimal(amount)
    base = {"per_night": str(per_night), "amount": str(amount), "currency": currency, "nights": nights,
            "city": city, "category": category, "on_date": on_date.isoformat()}
    if words_of is None:
        return {**base, "verdict": "no_policy", "limit": None, "unit": "", "source": "", "effective_from": None,
                "citation": [], "state": "NOT_ASKED", "path": [], "reason": "no_limit_for_category",
                "model_calls": 0, "summary": f"The travel policy sets no limit for {category} claims.",
                "summary_words": words(gettext_noop("The travel policy sets no limit for %(category)s claims."),
                                       category=_category(category))}
    question = f"{city} {words_of[1] if lang == 'zh' else words_of[0]}"
    walk = policy_answer(tenant=tenant, question=question, on_date=on_date, topic="travel", lang=lang, model=model)
    answer = walk.get("answer") or {}
    result = {**base, "state": walk["state"], "path": walk["path"], "reason": walk["reason"],
              "model_calls": walk["model_calls"], "unit": answer.get("unit") or "",
              "citation": answer.get("citation") or [], "source": "", "effective_from": None, "limit": None}
    if walk["state"] != "ANSWERED" or answer.get("amount") is None:
        return {**result, "verdict": "no_policy",
                "summary": f"No {category} limit for {city} on {on_date} was found ({walk['reason']}).",
                "summary_words": words(gettext_noop("No %(category)s limit for %(city)s on %(date)s was found "
                                                    "(%(reason)s)."),
                                       category=_category(category), city=city, date=on_date.isoformat(),
                                       reason=walk["reason"])}
    source = answer["citation"][0]["source"]
    version = PolicyVersion.objects.filter(document__tenant=tenant, document__topic="travel", label=source).first()
    limit = Decimal(answer["amount"])
    verdict = "within_limit" if currency == "CNY" and per_night <= limit else "over_limit"
    if currency != "CNY":
        verdict = "no_policy"
    effective = version.effective_from.isoformat() if version else None
    words_en = "within" if verdict == "within_limit" else "over"
    finding = (gettext_noop("%(per_night)s %(currency)s a night is within the limit of %(limit)s %(unit)s "
                            "(%(source)s, in force from %(effective_from)s).") if verdict == "within_limit" else
               gettext_noop("%(per_night)s %(currency)s a night is over the limit of %(limit)s %(unit)s "
                            "(%(source)s, in force from %(effective_from)s)."))
    return {**result, "verdict": verdict, "limit": answer["amount"], "source": source, "effective_from": effective,
            "summary": (f"{per_night} {currency} a night is {words_en} the limit of {answer['amount']} "
                        f"{answer['unit']} ({source}, in force from {effective})."),
            "summary_words": words(finding, per_night=str(per_night), currency=currency, limit=answer["amount"],
                                   unit=_unit(version, answer["unit"]), source=source, effective_from=effective)}
