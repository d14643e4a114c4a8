"""How the timeline's records read, in the reader's language, wherever they are shown (the
console's developer view, the admin timeline).

A frame's name is its span's name (OpenTelemetry), written by whichever layer recorded it:
"route → plan", "model: intent", "plan v2", a tool's name. The sentence around a code is read
in the reader's language and the code is marked as code ("路由 → <code>plan</code>"); a name no
shape knows is a code as a whole (a tool's name, a domain's own span name).

An Activity's title and a status are named by the layers above (a step by its blueprint's
title, a status by the console's one vocabulary), which the timeline never imports: the
console registers them from its AppConfig.ready() (CONVENTIONS 11). Until it does, they read
as stored."""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop

# Names recorded whole, by the engine and the chat's front: read as words.
NAMES = {
    "acceptance": gettext_lazy("acceptance"),
    "approval requested": gettext_lazy("approval requested"),
    "attachment": gettext_lazy("attachment"),
    "turn stopped": gettext_lazy("turn stopped"),
    "memory: L3 experience": gettext_lazy("memory: L3 experience"),
    "memory: the conversation": gettext_lazy("memory: the conversation"),
    "memory: planning": gettext_lazy("memory: planning"),
    "memory: first ReAct step": gettext_lazy("memory: first ReAct step"),
}

# Names with a code in them: (shape, sentence with the code's place). The sentence is a msgid
# whose %(code)s stands for the code, shown as <code>; %(n)s, %(of)s are numbers.
SHAPES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"model: (?P<code>.+)"), gettext_noop("model call: %(code)s")),
    (re.compile(r"route → (?P<code>.+)"), gettext_noop("route → %(code)s")),
    (re.compile(r"intent (?P<code>\S+)"), gettext_noop("intent %(code)s")),
    (re.compile(r"plan v(?P<n>\d+)"), gettext_noop("plan v%(n)s")),
    (re.compile(r"thought (?P<n>\d+)"), gettext_noop("thought %(n)s")),
    (re.compile(r"action: (?P<code>.+)"), gettext_noop("action: %(code)s")),
    (re.compile(r"observation: (?P<code>.+)"), gettext_noop("observation: %(code)s")),
    (re.compile(r"trigger: (?P<code>.+)"), gettext_noop("trigger: %(code)s")),
    (re.compile(r"retry (?P<n>\d+) of (?P<of>\d+)"), gettext_noop("retry %(n)s of %(of)s")),
    (re.compile(r"provenance block: (?P<code>.+)"), gettext_noop("provenance block: %(code)s")),
    (re.compile(r"(?P<code>.+): fallback to rules"), gettext_noop("%(code)s: fallback to rules")),
    (re.compile(r"(?P<code>.+): repaired"), gettext_noop("%(code)s: repaired")),
]


def frame_name_shown(name: str) -> SafeString:
    """A frame's name as the reader reads it, its codes marked as <code> (escaped HTML)."""
    name = name or ""
    if name in NAMES:
        return format_html("{}", NAMES[name])
    for shape, sentence in SHAPES:
        if match := shape.fullmatch(name):
            parts = match.groupdict()
            numbers = {k: v for k, v in parts.items() if k != "code"}
            # The sentence is translated, then split where the code goes: a code is never a word.
            pieces = [format_html("{}", piece % numbers) for piece in _(sentence).split("%(code)s")]
            return mark_safe(format_html("<code>{}</code>", parts.get("code", "")).join(pieces))
    return format_html("<code>{}</code>", name)


_activity_title: Callable[[Any], str] | None = None
_status_label: Callable[[str], str] | None = None


def shown_register(*, activity_title: Callable[[Any], str], status_label: Callable[[str], str]) -> None:
    """Called from the console's AppConfig.ready(): how an Activity's title and a status read."""
    global _activity_title, _status_label
    _activity_title, _status_label = activity_title, status_label


def activity_title_shown(activity: Any) -> str:
    """An Activity's title in the reader's language (a step's by its blueprint's title)."""
    return _activity_title(activity) if _activity_title is not None else activity.title


def status_shown(status: str) -> str:
    """A run's, a step's or an Activity's status in the reader's language."""
    return _status_label(status) if _status_label is not None else status
