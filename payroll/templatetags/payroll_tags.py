"""Payroll's own template filters (its pages load them; the generic apps never do)."""
from django import template
from django.utils import translation

from payroll.agent.previews import snapshot_label as _snapshot_label
from payroll.reading.requirements import gazetteer

register = template.Library()


@register.filter
def snapshot_label(label: str) -> str:
    """A snapshot's label; those Keel writes itself ("before run …") in the reader's language."""
    return _snapshot_label(label)


@register.filter
def language_part(text: str) -> str:
    """The reader's half of a catalog text written in both languages, English first ("Monthly
    salaried staff in Shanghai: …. 上海月薪员工：…"): the Chinese half from its first Chinese
    character on, or the English half before it. A text in one language reads as it is."""
    text = text or ""
    first = next((i for i, ch in enumerate(text) if _is_chinese(ch)), None)
    if first is None or first == 0:
        return text
    chinese = (translation.get_language() or "").lower().startswith("zh")
    return text[first:].strip() if chinese else text[:first].strip()


@register.filter
def city(location: str) -> str:
    """An employee's location as the HR export gave it ("Shanghai"), in the reader's language
    when the gazetteer knows the city (payroll/data/cn_cities.json)."""
    if not (translation.get_language() or "").lower().startswith("zh"):
        return location
    found = gazetteer()["by_pinyin"].get((location or "").strip().lower().replace("'", "").replace(" ", ""))
    return found["zh"] if found else location


def _is_chinese(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf"
