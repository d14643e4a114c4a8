"""One status vocabulary for every page: the words a person reads for a run's, a step's or an
Activity's status, the same in the console, the run page, the timeline, the runs grid and the
live task graph (console.js reads them from the graph's data-labels)."""
from __future__ import annotations

import json

from django.utils.translation import gettext_lazy as _

STATUS_LABELS = {
    "pending": _("Pending"),
    "ready": _("Ready"),
    "running": _("Running"),
    "in_progress": _("In Progress"),
    "awaiting_approval": _("Awaiting Approval"),
    "awaiting_input": _("Awaiting Input"),
    "completed": _("Completed"),
    "ok": _("Completed"),
    "failed": _("Failed"),
    "blocked": _("Blocked"),
    "rolled_back": _("Rolled Back"),
    "stopped": _("Stopped"),
    "cancelled": _("Cancelled"),
    "skipped": _("Skipped"),
}


def status_label(status: str | None) -> str:
    """"awaiting_input" → "Awaiting Input" (translated); an unknown status reads as itself."""
    status = status or ""
    label = STATUS_LABELS.get(status)
    return str(label) if label is not None else status.replace("_", " ").capitalize()


def status_labels_json() -> str:
    return json.dumps({k: str(v) for k, v in STATUS_LABELS.items()}, ensure_ascii=False)


def ui_words() -> dict[str, str]:
    """The words the page scripts write themselves (static/keel/*.js), translated for the reader:
    base.html renders them into <body data-words>, and keel.js's `keelWord(key, values)` reads them.
    A script keeps no English of its own, so every message it shows reads in the page's language."""
    return {k: str(v) for k, v in {
        # console.js: the live indicator and the chat
        "connecting": _("connecting…"), "live": _("● live"), "reconnecting": _("reconnecting…"),
        "refused": _("not available"), "attach": _("Attach a file"),
        "you": _("You"),
        "working": _("Keel is working on it…"),
        "no_service": _("Messages cannot be sent yet: this server has no conversation service. Nothing was sent."),
        "message_refused": _("The message was refused (HTTP %(status)s)."),
        "message_unsent": _("The message could not be sent: %(error)s"),
        "answer_refused": _("The answer was refused."),
        # console.js: run control
        "cancel_confirm": _("Cancel this run? What it changed will be undone."),
        "control_refused": _("Refused."),
        "unreachable": _("Could not reach Keel: %(error)s"),
        # timeline.js: the live banner
        "new_event": _("1 new event since this page was drawn."),
        "new_events": _("%(count)s new events since this page was drawn."),
        # keel.js: the home page's wiring check
        "wiring_done": _("Round trip complete in %(ms)s ms: queued, run by worker %(worker)s, written, pushed."),
        "wiring_waiting": _("Waiting for a worker…"),
        "wiring_failed": _("The check could not start: %(error)s"),
    }.items()}


def ui_words_json() -> str:
    return json.dumps(ui_words(), ensure_ascii=False)
