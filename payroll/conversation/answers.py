"""A message read as an answer to a question the conversation or its run asked: which option
it picks, whether it says to stop, leaves the choice to Keel or is unsure, and what else it
carries (a stated name, a changed city, pay cycle, population or items)."""
from __future__ import annotations

import re
from typing import Any

from workflows.conversation import text_normalize

from payroll.reading.matching import option_choose
from payroll.reading.requirements import requirements_extract

from .understanding import is_continue


STOP_EN = (r"^(oh,? )?(never ?mind|forget (it|about it|that)|cancel( it| that| this)?|stop( it)?|no,? thanks|"
           r"don'?t bother|scrap (it|that)|not needed|drop it)\b")
STOP_ZH = ("算了", "不用了", "取消", "不要了", "别弄了", "不弄了", "先不用")
DELEGATE_EN = (r"\b(whatever you think|you (decide|choose|pick)|up to you|your call|any( one)? (is|will do)|"
               r"doesn'?t matter|recommend(ed)?|your suggestion|the default)\b")
DELEGATE_ZH = ("你定", "随便", "你看着办", "都行", "都可以", "你决定", "推荐的", "默认")
UNSURE_EN = r"^(hmm+|hm+|not sure|dunno|i don'?t know|no idea|idk|unsure|maybe|no clue)\b"
UNSURE_ZH = ("不知道", "不确定", "没想好", "嗯", "不清楚", "说不好")
# The words that introduce a stated name, removed with it before the rest is read as an answer.
NAME_LEAD = (r"(?:,?\s*(?:and\s+)?(?:please\s+)?(?:call(?:ed)?(?: it)?|name(?:d| it)?(?: it)?|the group should be "
             r"(?:called|named))\s*$|[，,]?\s*(?:叫做|名字是|名字叫|名称叫|取名|起名叫?|就叫|叫)\s*$)")
TEMPLATE_KEYS = ("region", "pay_frequency", "population")


def _lowered(text: str) -> str:
    return text_normalize(text).strip().strip(".!。！?？~～")


def _said(text: str, en: str, zh: tuple[str, ...]) -> bool:
    return bool(re.search(en, _lowered(text))) or any(w in text for w in zh)


def is_stop(text: str) -> bool:
    return _said(text, STOP_EN, STOP_ZH)


def _is_delegate(text: str) -> bool:
    return _said(text, DELEGATE_EN, DELEGATE_ZH) or is_continue(text)


def _is_unsure(text: str) -> bool:
    return _said(text, UNSURE_EN, UNSURE_ZH)


def answer_read(text: str, options: list[dict[str, Any]], before: dict[str, Any]) -> dict[str, Any]:
    """A whole message read as an answer: which option it picks (label, number, ordinal, words),
    and what else it carries — a stated name, a changed city, pay cycle, population or items."""
    said = requirements_extract(text)
    name = said["group_name"] if said["name_stated"] else None
    rest = text
    if name:
        head, _, tail = text.partition(name)
        rest = re.sub(NAME_LEAD, "", head, flags=re.I) + " " + tail.strip(" \"'“”「」")
    rest = re.sub(r"\s+one\b", "", rest.strip(" ,，.。"), flags=re.I)  # "the second one" → "the second"
    index = option_choose(rest, options) if rest.strip(" ,，.。") else None
    changes: dict[str, Any] = {}
    for key in TEMPLATE_KEYS:
        if said.get(key) and said[key] != before.get(key):
            changes[key] = said[key]
            if key == "region":
                changes["city"] = said.get("city")
    new_items = [i for i in said["items_named"] if i not in (before.get("items_named") or [])]
    if new_items:
        changes["items_named"] = list(before.get("items_named") or []) + new_items
    if index is not None and "region" in changes:
        # "use the Shanghai template" names the template's city, not a new place for the group.
        label = " ".join(str(options[index].get(k) or "") for k in ("label", "label_en", "label_zh")).lower()
        city = said.get("city") or {}
        if any(w and w.lower() in label for w in (city.get("en"), city.get("zh"))):
            changes.pop("region"), changes.pop("city", None)
    if index is not None and "population" in changes:
        changes.pop("population")
    return {"index": index, "name": name, "changes": changes, "stop": is_stop(text),
            "delegate": _is_delegate(text) and index is None, "unsure": _is_unsure(text)}


def answer_carries(text: str, options: list[dict[str, Any]], before: dict[str, Any]) -> bool:
    read = answer_read(text, options, before)
    return bool(read["index"] is not None or read["name"] or read["changes"] or read["stop"] or read["delegate"]
                or read["unsure"])
