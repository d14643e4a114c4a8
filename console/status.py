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


def ui_words_json() -> str:
    """The few words console.js writes itself (the live indicator, the attach control), translated."""
    words = {"connecting": _("connecting…"), "live": _("● live"), "reconnecting": _("reconnecting…"),
             "refused": _("not available"), "attach": _("Attach a file")}
    return json.dumps({k: str(v) for k, v in words.items()}, ensure_ascii=False)
