from datetime import datetime

from django import template
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from approvals.selectors import duration_text, summary_described
from config.words import words_render
from workflows.cards import rows_html

register = template.Library()


@register.filter
def waited(since: datetime) -> str:
    """"4 min" since a moment."""
    return duration_text((timezone.now() - since).total_seconds()) if since else ""


@register.filter
def due(deadline: datetime) -> str:
    """"in 2 h" or "overdue"."""
    if not deadline:
        return ""
    left = (deadline - timezone.now()).total_seconds()
    return _("in %(duration)s") % {"duration": duration_text(left)} if left > 0 else _("overdue")


@register.filter
def local_name(record) -> str:
    """A record's (or a diff row's) name in the reader's language: name_zh for a Chinese reader, if any."""
    get = record.get if isinstance(record, dict) else lambda key, default="": getattr(record, key, default)
    chinese = (translation.get_language() or "").lower().startswith("zh")
    return (get("name_zh", "") or get("name", "")) if chinese else get("name", "")


@register.filter
def other_name(record) -> str:
    """The name local_name did not show (the English one for a Chinese reader), for a muted second line."""
    get = record.get if isinstance(record, dict) else lambda key, default="": getattr(record, key, default)
    shown, name, name_zh = local_name(record), get("name", ""), get("name_zh", "")
    return name_zh if shown == name and name_zh != name else (name if shown != name else "")


@register.filter
def approval_summary(approval) -> str:
    """What an approval does, in the reader's language (approvals.selectors.summary_described)."""
    return summary_described(approval)


@register.filter
def is_overdue(deadline: datetime) -> bool:
    return bool(deadline) and deadline <= timezone.now()


@register.filter
def seconds_text(seconds) -> str:
    return duration_text(float(seconds or 0))


@register.filter
def card_html(rows) -> str:
    """An approval card's typed rows (workflows.cards) as HTML, in the reader's language."""
    return rows_html(rows)


@register.filter
def words_shown(value) -> str:
    """Stored words (or plain prose) in the reader's language (config.words)."""
    return words_render(value)


@register.filter
def tool_label(name: str) -> str:
    """"import_template" → "Import template"."""
    return (name or "").replace("_", " ").capitalize()
