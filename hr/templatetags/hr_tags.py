"""The hiring pages' own template filters (the generic apps never load them).

HR records keep a name in both languages side by side (`title`/`title_zh`, `headline`/
`headline_zh`, `name`/`name_zh`, `explanation`/`explanation_zh`): a page shows the reader's
language, and the other one only marked with its own `lang`, as a second name."""
from django import template
from django.utils import translation

from config.words import words_render
from hr.matching import place

register = template.Library()


def _chinese() -> bool:
    return (translation.get_language() or "").lower().startswith("zh")


@register.filter
def shown(record, field: str) -> str:
    """`record.<field>` in the reader's language: `<field>_zh` for a Chinese reader, when it has one."""
    english = getattr(record, field, "") or ""
    return (getattr(record, f"{field}_zh", "") or english) if _chinese() else english


@register.filter
def unshown(record, field: str) -> str:
    """The name `shown` left out (a person's name in the other script), or "" when it is the same."""
    english, chinese = getattr(record, field, "") or "", getattr(record, f"{field}_zh", "") or ""
    other = english if _chinese() else chinese
    return other if other and other != shown(record, field) else ""


@register.simple_tag
def other_language() -> str:
    """The `lang` of the name `unshown` returns."""
    return "en" if _chinese() else "zh-Hans"


@register.filter
def city(location: str) -> str:
    """A place as typed ("Beijing"), in the reader's language when it is a city HR knows."""
    return words_render(place(location or ""))
