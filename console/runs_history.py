"""Run history for the console: the tenant's runs × steps grid (Airflow's grid view),
with filters and pages, and a run's waterfall on one time axis, waits drawn as labelled gaps."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from django.core.paginator import Page, Paginator
from django.utils import timezone
from django.utils.dateparse import parse_date
from django.utils.translation import gettext as _

from approvals.models import ApprovalRequest
from config.api import DomainError, strict_int
from config.words import words_english, words_render
from tenants.models import Membership, Role
from workflows.blueprints import step_title
from workflows.models import RUN_TERMINAL, Node, Run, RunStatus, Transition
from workflows.step_status import step_status_shown


PER_PAGE = 25
WORK = {"in_progress"}
WAITS = {"awaiting_approval", "awaiting_input"}
TERMINAL_STEP = {"completed", "failed", "blocked"}
# The statuses the grid's legend explains: a step's own, and "cancelled" and "skipped" (display only).
GRID_STATUSES = ["pending", "ready", "in_progress", "awaiting_approval", "awaiting_input", "completed", "failed",
                 "blocked", "cancelled", "skipped"]


class RunFilterError(DomainError):
    code = "invalid_run_filter"


@dataclass
class RunFilters:
    status: str = ""
    blueprint: str = ""
    started_by: str = ""
    since: date | None = None
    until: date | None = None
    page: int = 1

    @classmethod
    def from_query(cls, query) -> RunFilters:
        """Read the filters; a value that cannot be one raises RunFilterError (shown, nothing filtered)."""
        f = cls(status=query.get("status", "").strip(), blueprint=query.get("blueprint", "").strip()[:60],
                started_by=query.get("started_by", "").strip()[:150])
        if f.status and f.status not in RunStatus.values:
            raise RunFilterError(_("“%(status)s” is not a run status.") % {"status": f.status})
        for name in ("since", "until"):
            raw = query.get(name, "").strip()
            if raw:
                try:
                    value = parse_date(raw)
                except ValueError:
                    value = None
                if value is None:
                    raise RunFilterError(_("“%(value)s” is not a date (use YYYY-MM-DD).") % {"value": raw[:40]})
                setattr(f, name, value)
        if f.since and f.until and f.since > f.until:
            raise RunFilterError(_("The “from” date is after the “to” date."))
        try:
            f.page = max(1, strict_int(query.get("page", "1") or 1))
        except ValueError:
            raise RunFilterError(_("“%(value)s” is not a page number.") % {"value": query.get("page", "")[:20]})
        return f

    def as_query(self) -> str:
        from urllib.parse import urlencode
        return urlencode({k: v for k, v in (("status", self.status), ("blueprint", self.blueprint),
                                            ("started_by", self.started_by),
                                            ("since", self.since.isoformat() if self.since else ""),
                                            ("until", self.until.isoformat() if self.until else "")) if v})


@dataclass
class GridRow:
    run: Run
    cells: list[str | None]  # the status of each column's step (as displayed), None when the run has no such step
    duration: str = ""  # from start to finish (or to now, while it runs)
    slots: list[tuple[GridColumn, str | None]] = field(default_factory=list)  # each column with this run's status

    @property
    def who(self) -> str:
        user = self.run.created_by
        return user.get_full_name() or user.username


@dataclass
class GridColumn:
    key: str  # the step's key (a code, the same in every blueprint that has the step)
    blueprint: str  # a blueprint that names the step: its title is the column's header

    @property
    def label(self) -> str:
        """The step's short name in the reader's language (the blueprint's "title"/"title_zh")."""
        return words_render(step_title(self.blueprint, self.key))


@dataclass
class RunGrid:
    columns: list[GridColumn]
    rows: list[GridRow]
    page: Page
    blueprints: list[str]
    starters: list[Membership]


def runs_grid(membership: Membership, filters: RunFilters) -> RunGrid:
    """The tenant's runs, newest first, with each step's status; only this tenant's runs."""
    runs = Run.objects.filter(tenant_id=membership.tenant_id).select_related("created_by", "activity")
    if filters.status:
        runs = runs.filter(status=filters.status)
    if filters.blueprint:
        runs = runs.filter(blueprint=filters.blueprint)
    if filters.started_by:
        runs = runs.filter(created_by__username=filters.started_by)
    current = timezone.get_current_timezone()
    if filters.since:
        runs = runs.filter(created_at__gte=datetime.combine(filters.since, datetime.min.time(), current))
    if filters.until:
        runs = runs.filter(created_at__lt=datetime.combine(filters.until + timedelta(days=1), datetime.min.time(),
                                                           current))
    paginator = Paginator(runs.order_by("-created_at", "-id"), PER_PAGE)
    page = paginator.get_page(filters.page)
    page_runs = list(page.object_list)
    # A column is a step as its blueprint names it: the same key means the same step only under
    # the same name ("restore" is a setup's Undo but a whole-tenant restore's Restore).
    steps: dict[int, dict[tuple[str, str], str]] = {r.id: {} for r in page_runs}
    position: dict[tuple[str, str], tuple[int, str]] = {}
    blueprint_of = {r.id: r.blueprint for r in page_runs}
    named_by: dict[tuple[str, str], str] = {}
    for run_id, key, status, pos in (Node.objects.filter(run_id__in=steps, retired_in__isnull=True)
                                     .order_by("plan_version", "id").values_list("run_id", "key", "status",
                                                                                 "position")):
        column = (key, words_english(step_title(blueprint_of[run_id], key)))
        steps[run_id][column] = status
        position[column] = min(position.get(column, (pos, key)), (pos, key))
        named_by.setdefault(column, blueprint_of[run_id])
    keys = sorted(position, key=lambda k: position[k])
    columns = [GridColumn(key=k[0], blueprint=named_by[k]) for k in keys]
    rows = [GridRow(run=r, cells=[step_status_shown(r.status, steps[r.id].get(k)) for k in keys],
                    duration=_run_duration(r)) for r in page_runs]
    for row in rows:
        row.slots = list(zip(columns, row.cells))
    tenant_runs = Run.objects.filter(tenant_id=membership.tenant_id)
    blueprints = sorted(set(tenant_runs.values_list("blueprint", flat=True).distinct()))
    starters = list(Membership.objects.filter(tenant_id=membership.tenant_id).select_related("user")
                    .order_by("user__username"))
    return RunGrid(columns=columns, rows=rows, page=page, blueprints=blueprints, starters=starters)


# --- The waterfall: one time axis across every step of a run ----------------------------------

@dataclass
class Segment:
    kind: str  # "work" | "wait" | "queued"
    status: str
    start: datetime
    end: datetime
    left: float = 0.0
    width: float = 0.0
    label: str = ""
    open: bool = False

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds()


@dataclass
class WaterfallLane:
    key: str
    goal: str
    status: str
    segments: list[Segment] = field(default_factory=list)


@dataclass
class Waterfall:
    start: datetime
    end: datetime
    lanes: list[WaterfallLane]
    ticks: list[dict[str, Any]]

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds()


def _who_approves(run: Run) -> str:
    names = [m.user.username for m in Membership.objects.filter(
        tenant_id=run.tenant_id, role__in=[Role.APPROVER, Role.ADMIN]).select_related("user")
        .order_by("user__username") if m.user_id != run.created_by_id]
    return ", ".join(names)


def _duration(seconds: float) -> str:
    if seconds < 1:
        return _("%(ms)d ms") % {"ms": round(seconds * 1000)}
    if seconds < 90:
        return _("%(s).1f s") % {"s": seconds}
    if seconds < 5400:
        return _("%(m).1f min") % {"m": seconds / 60}
    return _("%(h).1f h") % {"h": seconds / 3600}


def _run_duration(run: Run) -> str:
    """How long the run took, or has taken so far; "" when it is over but its end was not kept."""
    end = run.finished_at or (timezone.now() if run.status not in RUN_TERMINAL else None)
    return _duration(max((end - run.created_at).total_seconds(), 0)) if end else ""


def run_waterfall(run: Run, nodes: list[Node]) -> Waterfall:
    """Each step's transitions as segments on the run's one axis: work as bars, approval and
    input waits as gaps labelled with who was waited on, the time before a step started as
    queued. Time flows from the run's start to its end (or now, while it runs)."""
    now = timezone.now()
    transitions = list(Transition.objects.filter(run=run, node__isnull=False).order_by("at", "id"))
    by_node: dict[int, list[Transition]] = {}
    for t in transitions:
        by_node.setdefault(t.node_id, []).append(t)
    last_at = max([t.at for t in transitions] + [run.created_at])
    end = run.finished_at or (now if run.status not in {"completed", "failed", "blocked", "rolled_back", "stopped",
                                                          "cancelled"} else last_at)
    end = max(end, last_at)
    start = run.created_at
    span = max((end - start).total_seconds(), 0.001)
    approvals = list(ApprovalRequest.objects.filter(run=run).select_related("decided_by").order_by("created_at"))
    approvers = None
    requester = run.created_by.get_full_name() or run.created_by.username
    lanes = []
    for node in nodes:
        if node.retired_in:
            continue
        lane = WaterfallLane(key=node.key, goal=node.goal, status=step_status_shown(run.status, node.status))
        steps = by_node.get(node.id, [])
        for i, t in enumerate(steps):
            nxt = steps[i + 1].at if i + 1 < len(steps) else None
            if t.to_status in TERMINAL_STEP or t.to_status in {"pending"}:
                continue
            seg_end = nxt or end
            if t.to_status in WORK:
                kind, label = "work", _duration((seg_end - t.at).total_seconds())
            elif t.to_status in WAITS:
                kind = "wait"
                if t.to_status == "awaiting_approval":
                    decided = next((a for a in approvals if a.node_id == node.id and a.decided_by_id
                                    and a.created_at >= t.at - timedelta(seconds=5)
                                    and (nxt is None or a.decided_at <= nxt + timedelta(seconds=5))), None)
                    if decided is not None:
                        who = decided.decided_by.get_full_name() or decided.decided_by.username
                    else:
                        approvers = approvers if approvers is not None else _who_approves(run)
                        who = _("an approver (%(names)s)") % {"names": approvers} if approvers else _("an approver")
                    label = _("waited on %(who)s for approval · %(duration)s") % {
                        "who": who, "duration": _duration((seg_end - t.at).total_seconds())}
                else:
                    label = _("waited on %(who)s for an answer · %(duration)s") % {
                        "who": requester, "duration": _duration((seg_end - t.at).total_seconds())}
            elif t.to_status == "ready":
                kind, label = "queued", ""
            else:
                continue
            lane.segments.append(Segment(kind=kind, status=t.to_status, start=t.at, end=seg_end, label=label,
                                         open=nxt is None))
        for s in lane.segments:
            s.left = round((s.start - start).total_seconds() / span * 100, 3)
            s.width = round(max((s.end - s.start).total_seconds() / span * 100, 0.4), 3)
            s.width = min(s.width, round(100 - s.left, 3))
        lanes.append(lane)
    ticks = [{"left": round(i * 25, 1), "label": "+" + _duration(span * i / 4) if i else "0",
              "at": start + timedelta(seconds=span * i / 4)} for i in range(5)]
    return Waterfall(start=start, end=end, lanes=lanes, ticks=ticks)
