from datetime import datetime

from django import template
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from console.blueprint_words import (
    blueprint_title,
    criterion_shown,
    goal_shown,
    run_title_shown,
)
from console.status import status_label as _status_label
from console.status import status_labels_json as _status_labels_json
from console.status import ui_words_json as _ui_words_json

register = template.Library()


@register.filter
def status_label(status: str) -> str:
    """"awaiting_approval" → "Awaiting Approval": the one vocabulary (console/status.py)."""
    return _status_label(status)


@register.simple_tag
def status_labels_json() -> str:
    return _status_labels_json()


@register.simple_tag
def ui_words_json() -> str:
    return _ui_words_json()


@register.filter
def waited(since: datetime | None) -> str:
    """A short duration for "Waiting on: … · 4 min"."""
    if since is None:
        return ""
    seconds = (timezone.now() - since).total_seconds()
    if seconds < 60:
        return _("under a minute")
    if seconds < 3600:
        return _("%(m)d min") % {"m": int(seconds // 60)}
    if seconds < 86400:
        return _("%(h)d h %(m)d min") % {"h": int(seconds // 3600), "m": int(seconds % 3600 // 60)}
    return _("%(d)d d") % {"d": int(seconds // 86400)}


@register.filter
def goal_label(goal: str) -> str:
    """A step's goal in the page's language (console/blueprint_words.py)."""
    return goal_shown(goal)


@register.filter
def criterion_label(criterion: str) -> str:
    return criterion_shown(criterion)


PLAN_REASONS = {"initial plan": gettext_lazy("initial plan")}


@register.filter
def plan_reason(reason: str) -> str:
    """A plan version's stored reason; the ones Keel itself writes read in the page's language."""
    return str(PLAN_REASONS.get(reason, reason))


@register.filter
def run_title(run) -> str:
    """A run's title as the reader reads it: its Activity's title (the blueprint's part translated)."""
    activity = getattr(run, "activity", None)
    return run_title_shown(activity.title if activity else "", run.blueprint) or blueprint_title(run.blueprint)


@register.filter
def blueprint_label(name: str) -> str:
    return blueprint_title(name)
