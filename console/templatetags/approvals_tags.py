from datetime import datetime
from decimal import Decimal, InvalidOperation

from django import template
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from approvals.selectors import duration_text, summary_described

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
def money(value) -> str:
    try:
        return f"{float(value):,.2f}"
    except (TypeError, ValueError):
        return ""


@register.filter
def percent(rate) -> str:
    """"0.080000" → "8%"; "0.002600" → "0.26%"."""
    try:
        value = (Decimal(str(rate)) * 100).normalize()
    except (InvalidOperation, TypeError):
        return ""
    return f"{value:f}%"


KIND_LABEL = {"earning": gettext_lazy("earning"), "deduction": gettext_lazy("deduction"),
              "employer_contribution": gettext_lazy("employer contribution"), "tax": gettext_lazy("tax")}


@register.filter
def kind_label(kind: str) -> str:
    return str(KIND_LABEL.get(kind, kind))


@register.filter
def tool_label(name: str) -> str:
    """"import_template" → "Import template"."""
    return (name or "").replace("_", " ").capitalize()
