from datetime import datetime

from django import template
from django.utils import timezone

from console.status import status_label as _status_label
from console.status import status_labels_json as _status_labels_json

register = template.Library()


@register.filter
def status_label(status: str) -> str:
    """"awaiting_approval" → "Awaiting Approval": the one vocabulary (console/status.py)."""
    return _status_label(status)


@register.simple_tag
def status_labels_json() -> str:
    return _status_labels_json()


@register.filter
def waited(since: datetime | None) -> str:
    """A short duration for "Waiting on: … · 4 min"."""
    if since is None:
        return ""
    seconds = (timezone.now() - since).total_seconds()
    if seconds < 60:
        return "under a minute"
    if seconds < 3600:
        return f"{int(seconds // 60)} min"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60)} min"
    return f"{int(seconds // 86400)} d"
