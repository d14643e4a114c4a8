import re
from datetime import datetime

from django import template
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop

from console.blueprint_words import (
    activity_title_shown,
    blueprint_title,
    criterion_shown,
    goal_shown,
    run_title_now,
)
from config.words import is_words, words_render
from config.words import words as words_of
from console.status import status_label as _status_label
from console.status import status_labels_json as _status_labels_json
from console.status import ui_words_json as _ui_words_json
from timeline.shown import frame_name_shown
from workflows.blueprints import step_title
from workflows.tools import question_words

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


# The reasons the engine writes as fixed text (a step's or a plan's): read in the page's language.
PLAN_REASONS = {"initial plan": gettext_lazy("initial plan"), "accepted": gettext_lazy("accepted"),
                "claimed": gettext_lazy("claimed"), "dependencies met": gettext_lazy("dependencies met"),
                "waiting for an approver": gettext_lazy("waiting for an approver"),
                "the user answered": gettext_lazy("the user answered"),
                "transition cap reached": gettext_lazy("transition cap reached")}


@register.filter
def plan_reason(reason: str) -> str:
    """A plan version's or a step's stored reason; the ones Keel itself writes read in the page's language."""
    return str(PLAN_REASONS.get(reason, reason))


@register.filter
def step_reason(node) -> str:
    """A step's reason on the run page: a step waiting for an answer shows its question in the
    page's language (its words); any other, its stored reason (plan_reason)."""
    if node.status == "awaiting_input" and node.question:
        return words_render(question_words(node.question))
    return plan_reason(node.status_reason)


@register.filter
def plan_why(plan) -> str:
    """Why a plan version was made: its diff's words (in the page's language) when it holds
    them; else its stored reason (a plan written before words, and plan v1)."""
    why = (plan.diff or {}).get("why") if isinstance(plan.diff, dict) else None
    return words_render(why) if is_words(why) else plan_reason(plan.reason)


@register.filter
def words(value) -> str:
    """Stored words (config.words) in the page's language; prose as it is."""
    return words_render(value)


# The shapes a check's detail written as prose takes (stored before details were words, or by a tool
# that still writes prose): a count of a total, a count of things, one state or status code.
_COUNT_OF = re.compile(r"(\d+) of (\d+)")
_COUNT = re.compile(r"(\d+) ([a-z]+)")
_CODE = re.compile(r"[A-Za-z]+(?:_[A-Za-z]+)*")


def _catalog_word(text: str) -> str | None:
    """`text`'s word in the page's language when the catalog has one ("answered", "Submitted"), else None."""
    for msgid in (text, text.lower().replace("_", " "), text.replace("_", " ").capitalize()):
        shown = _(msgid)
        if shown != msgid:
            return shown
    return None


@register.filter
def detail_shown(value) -> str:
    """What an acceptance check found, in the page's language: stored words rendered; prose as
    it is, except the shapes a detail written as prose takes — "3 of 3", "10 <things>", one state
    or status code ("ANSWERED", "submitted") — which read in the page's language where the catalog
    knows their words (an English reader reads them exactly as stored)."""
    if not isinstance(value, str):
        return words_render(value)
    text = value.strip()
    if match := _COUNT_OF.fullmatch(text):
        return words_render(words_of(gettext_noop("%(done)s of %(total)s"), done=match[1], total=match[2]))
    if (match := _COUNT.fullmatch(text)) and (thing := _catalog_word(match[2])):
        return words_render(words_of(gettext_noop("%(count)s %(things)s"), count=match[1], things=thing))
    if _CODE.fullmatch(text) and (word := _catalog_word(text)):
        return word
    return value


@register.filter
def step_label(key: str, blueprint: str) -> str:
    """A step's short name in the page's language (the blueprint's "title"/"title_zh"), else its key."""
    return words_render(step_title(blueprint or "", key))


@register.filter
def step_goal(node) -> str:
    """A step's goal in the page's language: its stored words, else the goal as written
    (translated by the blueprint's "goal_zh" when one knows it)."""
    if getattr(node, "goal_words", None):
        return words_render(node.goal_words)
    return goal_shown(node.goal)


# What made a plan version (the diff's trigger.kind), as a reader reads it.
REPLAN_TRIGGERS = {"failure": gettext_lazy("a step failed"),
                   "failure_after_undo": gettext_lazy("a step failed and was undone"),
                   "rejection": gettext_lazy("an approver rejected"), "stale": gettext_lazy("the approved data changed"),
                   "replan": gettext_lazy("replanned")}


@register.filter
def replan_trigger(kind: str) -> str:
    return str(REPLAN_TRIGGERS.get(kind, kind))


ACTIVITY_KINDS = {"run": gettext_lazy("run"), "node": gettext_lazy("step"), "message": gettext_lazy("message")}


@register.filter
def activity_kind(kind: str) -> str:
    return str(ACTIVITY_KINDS.get(kind, kind))


@register.filter
def activity_title(activity) -> str:
    """An Activity's title as the reader reads it (console.blueprint_words.activity_title_shown)."""
    return activity_title_shown(activity)


@register.filter
def run_title(run) -> str:
    """A run's title as the reader reads it, as it is now (the name its params hold), the
    blueprint's part translated; else its Activity's title."""
    activity = getattr(run, "activity", None)
    return run_title_now(run, activity.title if activity else "") or blueprint_title(run.blueprint)


@register.filter
def blueprint_label(name: str) -> str:
    return blueprint_title(name)


@register.filter
def frame_name(name: str):
    """A frame's name in the page's language, its codes marked as <code> (timeline.shown)."""
    return frame_name_shown(name)
