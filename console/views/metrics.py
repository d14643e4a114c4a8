"""The metrics page: the validation metrics of the viewer's tenant in cards, and
the trends as server-side SVG plots (no chart library, no script)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext, gettext_lazy, gettext_noop, ngettext

from console.metrics import (
    RUN_STATUS_ORDER,
    DayFigures,
    Metric,
    PeriodError,
    metrics_for,
    period_parse,
)
from tenants.selectors import membership_for_user
from workflows.models import RunStatus

from ..status import status_label

# The status colours of static/keel/keel.css, by CSS variable (UI.md: one meaning everywhere).
STATUS_COLOUR = {
    RunStatus.COMPLETED: "--keel-green", RunStatus.RUNNING: "--keel-blue",
    RunStatus.AWAITING_APPROVAL: "--keel-amber", RunStatus.AWAITING_INPUT: "--keel-rose",
    RunStatus.FAILED: "--keel-red", RunStatus.BLOCKED: "--keel-maroon", RunStatus.ROLLED_BACK: "--keel-purple",
    RunStatus.STOPPED: "--keel-dark", RunStatus.CANCELLED: "--keel-slate",
}
# Figures that must be zero (or whole) in a sound engine: a card turns red otherwise.
MUST_BE_ZERO = {"skipped_executions", "missed_executions", "duplicate_executions", "duplicate_side_effects"}
# (Receipt coverage is not one: a model's interpretation has no system of record to issue a receipt.)
MUST_BE_WHOLE = {"checkpoint_consistency", "dependency_coverage"}
SECTIONS = [
    (gettext_noop("Outcomes"), ["success_rate", "takeover_rate", "approval_resumes", "provenance_blocks"]),
    (gettext_noop("Execution integrity"), ["skipped_executions", "missed_executions", "duplicate_executions",
                             "duplicate_side_effects"]),
    (gettext_noop("Acceptance, dependencies and checkpoints"), ["dependency_coverage", "receipt_coverage",
                                                  "checkpoint_consistency"]),
    (gettext_noop("Replans, recovery and concurrency"), ["replan_scope", "recovery_time", "crash_recoveries",
                                                         "parallel_concurrency"]),
]


# The line under a figure: what it was counted over, in the reader's language.
FRACTIONS: dict[str, Callable[[Metric], str]] = {
    "success_rate": lambda m: ngettext("%(n)s of %(total)s finished run", "%(n)s of %(total)s finished runs",
                                       m.denominator) % {"n": m.numerator, "total": m.denominator},
    "takeover_rate": lambda m: ngettext("%(n)s of %(total)s run", "%(n)s of %(total)s runs",
                                        m.denominator) % {"n": m.numerator, "total": m.denominator},
    "approval_resumes": lambda m: ngettext("%(n)s of %(total)s approved step resumed",
                                           "%(n)s of %(total)s approved steps resumed",
                                           m.denominator) % {"n": m.numerator, "total": m.denominator},
    "skipped_executions": lambda m: ngettext("of %(total)s completed step", "of %(total)s completed steps",
                                             m.denominator) % {"total": m.denominator},
    "missed_executions": lambda m: ngettext("in %(total)s completed run", "in %(total)s completed runs",
                                            m.details["completed_runs"]) % {"total": m.details["completed_runs"]},
    "duplicate_side_effects": lambda m: ngettext("%(n)s of %(total)s approved import affected",
                                                 "%(n)s of %(total)s approved imports affected",
                                                 m.denominator) % {"n": m.numerator, "total": m.denominator},
    "checkpoint_consistency": lambda m: ngettext("%(n)s of %(total)s run", "%(n)s of %(total)s runs",
                                                 m.denominator) % {"n": m.numerator, "total": m.denominator},
    "dependency_coverage": lambda m: ngettext("%(n)s of %(total)s dependency met",
                                              "%(n)s of %(total)s dependencies met",
                                              m.denominator) % {"n": m.numerator, "total": m.denominator},
    "receipt_coverage": lambda m: ngettext("%(n)s of %(total)s completed step", "%(n)s of %(total)s completed steps",
                                           m.denominator) % {"n": m.numerator, "total": m.denominator},
    "replan_scope": lambda m: ngettext("over %(total)s replan", "over %(total)s replans",
                                       m.details["replans"]) % {"total": m.details["replans"]},
    "recovery_time": lambda m: ngettext("over %(total)s recovery", "over %(total)s recoveries",
                                        m.details["recoveries"]) % {"total": m.details["recoveries"]},
    "parallel_concurrency": lambda m: ngettext("overlapped in %(n)s of %(total)s run",
                                               "overlapped in %(n)s of %(total)s runs",
                                               m.denominator) % {"n": m.numerator, "total": m.denominator},
    "crash_recoveries": lambda m: ngettext("%(n)s of %(total)s run that lost a worker",
                                           "%(n)s of %(total)s runs that lost a worker",
                                           m.denominator) % {"n": m.numerator, "total": m.denominator},
}
EMPTY = {
    "replan_scope": gettext_lazy("no replans in this period"),
    "recovery_time": gettext_lazy("no recoveries in this period"),
    "parallel_concurrency": gettext_lazy("no run with parallel steps yet"),
    "crash_recoveries": gettext_lazy("no worker crashed in this period"),
}
PERIOD_CHOICES = [7, 30, 90]


def _duration(seconds: float) -> str:
    if seconds < 1:
        return gettext("%(ms)d ms") % {"ms": round(seconds * 1000)}
    if seconds < 90:
        return gettext("%(s).1f s") % {"s": seconds}
    if seconds < 5400:
        return gettext("%(m).1f min") % {"m": seconds / 60}
    return gettext("%(h).1f h") % {"h": seconds / 3600}


@dataclass
class Card:
    """A metric as the page shows it: the label and definition Keel stores in English (the API's
    JSON keeps them so) rendered in the reader's language."""
    metric: Metric
    shown: str
    fraction: str
    tone: str  # good | bad | neutral | empty
    label: str = ""
    definition: str = ""


def _card(metric: Metric) -> Card:
    value, unit = metric.value, metric.unit
    if value is None:
        shown = "—"
    elif unit == "ratio":
        shown = f"{value * 100:.1f}%".replace(".0%", "%")
    elif unit == "seconds":
        shown = _duration(value)
    elif unit == "nodes" and not float(value).is_integer():
        shown = f"{value:.2f}"
    else:
        shown = f"{value:g}"
    if value is None:
        fraction = str(EMPTY.get(metric.key, gettext("nothing to measure in this period")))
    else:
        fraction = FRACTIONS[metric.key](metric) if metric.key in FRACTIONS else ""
    if value is None:
        tone = "empty"
    elif metric.key in MUST_BE_ZERO:
        tone = "good" if value == 0 else "bad"
    elif metric.key in MUST_BE_WHOLE:
        tone = "good" if value == 1 else "bad"
    else:
        tone = "neutral"
    return Card(metric=metric, shown=shown, fraction=fraction, tone=tone,
                label=gettext(metric.label), definition=gettext(metric.definition))


# --- plots ---------------------------------------------------------------------------------

WIDTH, HEIGHT = 560, 220
LEFT, RIGHT, TOP, BOTTOM = 36, 10, 12, 28


def _x_labels(days: list[DayFigures], slot: float) -> list[dict[str, Any]]:
    step = max(1, round(len(days) / 7))
    return [{"x": LEFT + slot * (i + 0.5), "text": f"{d.day.month}/{d.day.day}"}
            for i, d in enumerate(days) if i % step == 0 or i == len(days) - 1 and len(days) < 8]


def _runs_plot(days: list[DayFigures]) -> dict[str, Any]:
    """Stacked bars: runs created per day, by their final (current) status."""
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    top = max((d.runs for d in days), default=0)
    scale_max = max(top, 1)
    # Whole-number gridlines: 0, the top, and one in between when it helps.
    ticks = sorted({0, scale_max} | ({scale_max // 2} if scale_max >= 4 else set()))
    slot = plot_w / max(len(days), 1)
    bar_w = max(min(slot * 0.7, 28), 1.5)
    bars = []
    for i, day in enumerate(days):
        y = TOP + plot_h
        x = LEFT + slot * i + (slot - bar_w) / 2
        for status in RUN_STATUS_ORDER:
            count = day.by_status.get(status, 0)
            if not count:
                continue
            h = plot_h * count / scale_max
            y -= h
            bars.append({"x": round(x, 2), "y": round(y, 2), "w": round(bar_w, 2), "h": round(h, 2),
                         "colour": STATUS_COLOUR[status],
                         "title": f"{day.day:%Y-%m-%d}: {count} · {status_label(status)}"})
    present = {s for d in days for s, c in d.by_status.items() if c}
    return {"width": WIDTH, "height": HEIGHT, "left": LEFT, "right": WIDTH - RIGHT, "bottom": TOP + plot_h,
            "bars": bars, "empty": top == 0,
            "grid": [{"y": round(TOP + plot_h - plot_h * t / scale_max, 2), "label": t} for t in ticks],
            "x_labels": _x_labels(days, slot),
            "legend": [{"status": s, "label": status_label(s), "colour": STATUS_COLOUR[s]}
                       for s in RUN_STATUS_ORDER if s in present]}


def _success_plot(days: list[DayFigures]) -> dict[str, Any]:
    """Success rate per day (completed / finished); days without a finished run leave a gap."""
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / max(len(days), 1)
    points, segments, current = [], [], []
    for i, day in enumerate(days):
        rate = day.success_rate
        if rate is None:
            if current:
                segments.append(current)
            current = []
            continue
        x, y = LEFT + slot * (i + 0.5), TOP + plot_h * (1 - rate)
        points.append({"x": round(x, 2), "y": round(y, 2), "title": f"{day.day:%Y-%m-%d}: {rate * 100:.0f}% ("
                       + ngettext("%(n)s of %(total)s finished run completed", "%(n)s of %(total)s finished runs completed",
                                  day.finished) % {"n": day.completed, "total": day.finished} + ")"})
        current.append(f"{x:.2f},{y:.2f}")
    if current:
        segments.append(current)
    return {"width": WIDTH, "height": HEIGHT, "left": LEFT, "right": WIDTH - RIGHT, "bottom": TOP + plot_h,
            "points": points, "lines": [" ".join(s) for s in segments if len(s) > 1], "empty": not points,
            "grid": [{"y": round(TOP + plot_h * (1 - t / 100), 2), "label": f"{t}%"} for t in (0, 50, 100)],
            "x_labels": _x_labels(days, slot)}


@login_required
def metrics_page(request: HttpRequest) -> HttpResponse:
    membership = membership_for_user(request.user)
    error = ""
    try:
        period = period_parse(request.GET)
    except PeriodError as err:
        error, period = err.message, period_parse({})
    report = metrics_for(tenant_id=membership.tenant_id, period=period)
    cards = {m.key: _card(m) for m in report.metrics}
    return render(request, "metrics/index.html", {
        "report": report, "error": error,
        "sections": [(title, [cards[k] for k in keys]) for title, keys in SECTIONS],
        "runs_plot": _runs_plot(report.daily), "success_plot": _success_plot(report.daily),
        "period_choices": PERIOD_CHOICES, "days": request.GET.get("days", ""),
        "since": request.GET.get("since", ""), "until": request.GET.get("until", ""),
    })
