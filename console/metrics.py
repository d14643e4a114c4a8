"""The validation metrics (DESIGN.md §2, last row), per tenant and period.

Every figure is computed from the records alone — runs, nodes, transitions,
plans, tool calls, coordinates, approvals, events — never from what a worker
said about itself. The period selects runs by their creation time; each
figure then counts those runs' records, so all figures describe the same runs.

Ordering between transitions uses their row id, not their timestamp: a
dependency's `completed` and its dependant's `ready` are written in the same
transaction, so the id order is the causal order even when clocks tie."""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, time, timedelta
from datetime import timezone as dt_timezone
from typing import Any, Iterable

from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from django.utils.translation import gettext, gettext_noop

from approvals.models import ApprovalRequest, ApprovalStatus
from config.api import DomainError, strict_int
from timeline.models import Event
from workflows.models import (
    RUN_TERMINAL,
    Node,
    NodeStatus,
    Plan,
    ProvenanceBlock,
    Run,
    RunStatus,
    ToolCall,
    Transition,
)
from workflows.tools import TOOLS

N, R = NodeStatus, RunStatus
DEFAULT_DAYS = 30
MAX_DAYS = 366
# Runs that ended needing a person. A run merely waiting for an answer is not one: asking
# is part of the workflow, and the run goes on by itself once answered.
TAKEOVER_STATUSES = {R.BLOCKED, R.STOPPED}
# A receipt a step wrote about itself (its own tool call), not one a system of record issued.
SELF_RECEIPT_PREFIX = "call/"
# Statuses that leave in_progress: the end of a node's execution interval.
LEAVES_IN_PROGRESS = {N.COMPLETED, N.FAILED, N.AWAITING_INPUT, N.BLOCKED}
# The order of the plot's stacks, and of the legend.
RUN_STATUS_ORDER = [R.COMPLETED, R.RUNNING, R.AWAITING_APPROVAL, R.AWAITING_INPUT, R.FAILED, R.BLOCKED,
                    R.ROLLED_BACK, R.STOPPED]


class PeriodError(DomainError):
    code = "invalid_period"


@dataclass(frozen=True)
class Period:
    since: datetime
    until: datetime

    @property
    def days(self) -> list[date]:
        first, last = self.since.date(), (self.until - timedelta(microseconds=1)).date()
        return [first + timedelta(days=i) for i in range((last - first).days + 1)]


def _moment(value: str, name: str, *, end: bool) -> datetime:
    """A date or date-time in UTC. Any offset Python accepts is taken (PostgreSQL refuses
    offsets beyond ±15:59, so the moment is converted before it reaches a query)."""
    try:
        day = parse_date(value)
        moment = None if day else parse_datetime(value)
        if day is not None:
            # A bare `until` date includes that whole day.
            moment = datetime.combine(day + timedelta(days=1) if end else day, time.min)
        if moment is not None and timezone.is_naive(moment):
            moment = timezone.make_aware(moment, timezone.get_current_timezone())
        moment = moment.astimezone(dt_timezone.utc) if moment is not None else None
    except (ValueError, OverflowError):
        moment = None
    if moment is None:
        raise PeriodError(gettext("`%(name)s` must be a date (2026-11-30) or a date-time (2026-11-30T08:00:00Z).")
                          % {"name": name})
    return moment


def period_parse(params: dict[str, Any], *, now: datetime | None = None) -> Period:
    """?since=&until= (dates or date-times) or ?days=N; the last 30 days by default."""
    now = now or timezone.now()
    since, until, days = params.get("since"), params.get("until"), params.get("days")
    if days not in (None, "") and (since or until):
        raise PeriodError(gettext("Give either `days` or `since`/`until`, not both."))
    if days not in (None, ""):
        try:
            n = strict_int(days)
        except (TypeError, ValueError):
            raise PeriodError(gettext("`days` must be a whole number."))
        if not 1 <= n <= MAX_DAYS:
            raise PeriodError(gettext("`days` must be between 1 and %(MAX_DAYS)s.") % {"MAX_DAYS": MAX_DAYS})
        return Period(since=now - timedelta(days=n), until=now)
    end = _moment(until, "until", end=True) if until else now
    try:
        start = _moment(since, "since", end=False) if since else end - timedelta(days=DEFAULT_DAYS)
    except OverflowError:  # `until` in the first days of year 1
        raise PeriodError(gettext("`since` must be before `until`."))
    if start >= end:
        raise PeriodError(gettext("`since` must be before `until`."))
    if end - start > timedelta(days=MAX_DAYS):
        raise PeriodError(gettext("A period may span at most %(MAX_DAYS)s days.") % {"MAX_DAYS": MAX_DAYS})
    return Period(since=start, until=end)


@dataclass
class Metric:
    key: str
    label: str
    value: float | int | None
    unit: str  # ratio | count | seconds | nodes | runs
    definition: str
    numerator: int | None = None
    denominator: int | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def is_rate(self) -> bool:
        return self.unit == "ratio"


@dataclass
class DayFigures:
    day: date
    by_status: dict[str, int]
    completed: int
    finished: int

    @property
    def runs(self) -> int:
        return sum(self.by_status.values())

    @property
    def success_rate(self) -> float | None:
        return self.completed / self.finished if self.finished else None


@dataclass
class MetricsReport:
    tenant_id: int
    period: Period
    runs: int
    metrics: list[Metric]
    daily: list[DayFigures]

    def metric(self, key: str) -> Metric:
        return next(m for m in self.metrics if m.key == key)

    def as_json(self) -> dict[str, Any]:
        return {
            "since": self.period.since.isoformat(), "until": self.period.until.isoformat(), "runs": self.runs,
            "metrics": [asdict(m) for m in self.metrics],
            "daily": [{"date": d.day.isoformat(), "runs": d.runs, "by_status": d.by_status,
                       "completed": d.completed, "finished": d.finished, "success_rate": d.success_rate}
                      for d in self.daily],
        }


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


class _Records:
    """Everything the figures need, loaded once: a bounded number of queries
    whatever the number of runs."""

    def __init__(self, tenant_id: int, period: Period):
        runs = Run.objects.filter(tenant_id=tenant_id, created_at__gte=period.since, created_at__lt=period.until)
        self.runs = list(runs.only("id", "status", "created_at", "finished_at"))
        self.nodes = list(Node.objects.filter(run__in=runs).only(
            "id", "run_id", "key", "plan_version", "retired_in", "depends_on", "run_when", "status", "result_ref"))
        self.transitions = list(Transition.objects.filter(run__in=runs).order_by("id").only(
            "id", "run_id", "node_id", "from_status", "to_status", "at"))
        self.plans = list(Plan.objects.filter(run__in=runs).only("run_id", "version", "graph", "created_at"))
        self.calls = list(ToolCall.objects.filter(tenant_id=tenant_id, run__in=runs).only(
            "id", "node_id", "tool", "status", "result", "idempotency_key", "approval_id"))
        self.approvals = list(ApprovalRequest.objects.filter(tenant_id=tenant_id, run__in=runs).only(
            "id", "run_id", "node_id", "tool", "status"))
        self.blocks = ProvenanceBlock.objects.filter(tenant_id=tenant_id, run__in=runs).count()
        self.node_events = list(Event.objects.filter(run__in=runs, type="node.status")
                                .order_by("conversation_id", "seq").values_list("run_id", "data"))
        self.reclaims = list(Event.objects.filter(run__in=runs, type="node.reclaimed")
                             .order_by("conversation_id", "seq").values_list("run_id", "data"))
        self.tenant_id = tenant_id

        self.nodes_of: dict[int, list[Node]] = defaultdict(list)
        self.nodes_by_key: dict[tuple[int, str], list[Node]] = defaultdict(list)
        for node in self.nodes:
            self.nodes_of[node.run_id].append(node)
            self.nodes_by_key[(node.run_id, node.key)].append(node)
        self.node_by_id = {n.id: n for n in self.nodes}
        self.transitions_of_node: dict[int, list[Transition]] = defaultdict(list)
        self.run_transitions: dict[int, list[Transition]] = defaultdict(list)
        self.transitions_of_run: dict[int, list[Transition]] = defaultdict(list)
        for t in self.transitions:
            self.transitions_of_run[t.run_id].append(t)
            (self.transitions_of_node[t.node_id] if t.node_id else self.run_transitions[t.run_id]).append(t)
        self.call_by_id = {c.id: c for c in self.calls}
        self.run_by_id = {r.id: r for r in self.runs}

    def first_transition(self, node: Node, to: Iterable[str]) -> Transition | None:
        wanted = set(to)
        return next((t for t in self.transitions_of_node[node.id] if t.to_status in wanted), None)

    def dependency_of(self, node: Node, key: str) -> Node | None:
        """The node with `key` that was active in `node`'s plan version."""
        candidates = [n for n in self.nodes_by_key[(node.run_id, key)]
                      if n.plan_version <= node.plan_version
                      and (n.retired_in is None or n.retired_in > node.plan_version)]
        return max(candidates, key=lambda n: n.plan_version, default=None)

    def dependency_met_before(self, node: Node, key: str, moment: Transition) -> bool:
        """A step's dependency had completed before the step started. A compensation is started
        by the engine once one of its dependencies failed (or by a cancel): the others have then
        completed, or will never run because the step before them failed. So a compensation's
        edge is met when the dependency had ended, either way, or never started — what must not
        happen is an undo starting while a step it undoes is still running (or starts later)."""
        dep = self.dependency_of(node, key)
        if dep is None:
            return False
        if node.run_when != "failed":
            reached = self.first_transition(dep, [N.COMPLETED])
            return reached is not None and reached.id < moment.id
        ended = self.first_transition(dep, [N.COMPLETED, N.FAILED])
        if ended is not None:
            return ended.id < moment.id
        return self.first_transition(dep, [N.IN_PROGRESS]) is None


# --- the figures -------------------------------------------------------------------------


def _success_rate(rec: _Records) -> Metric:
    finished = [r for r in rec.runs if r.status in RUN_TERMINAL]
    completed = sum(r.status == R.COMPLETED for r in finished)
    return Metric("success_rate", gettext_noop("Strict-workflow success rate"), _ratio(completed, len(finished)), "ratio",
                  gettext_noop("Runs that completed, of the runs that finished (completed, failed, blocked, rolled back or "
                  "stopped)."), completed, len(finished))


def _takeover_rate(rec: _Records) -> Metric:
    rejected = {a.run_id for a in rec.approvals if a.status == ApprovalStatus.REJECTED}
    taken = sum(1 for r in rec.runs if r.status in TAKEOVER_STATUSES or r.id in rejected)
    # A run waiting for the user's answer has not ended either way: it is in neither count.
    counted = [r for r in rec.runs if r.status != R.AWAITING_INPUT or r.id in rejected]
    return Metric("takeover_rate", gettext_noop("Takeover rate"), _ratio(taken, len(counted)), "ratio",
                  gettext_noop("Runs that ended needing a person — blocked, stopped, or with a rejected approval — of all "
                  "runs except those merely waiting for the user's answer."), taken, len(counted),
                  {"awaiting_input": len(rec.runs) - len(counted)})


def _provenance_blocks(rec: _Records) -> Metric:
    return Metric("provenance_blocks", gettext_noop("Provenance blocks"), rec.blocks, "count",
                  gettext_noop("Supplied values refused because they differed from the recorded coordinate."))


def _approval_resumes(rec: _Records) -> Metric:
    approved = [a for a in rec.approvals if a.status == ApprovalStatus.APPROVED]
    resumed = sum(1 for a in approved if a.node_id in rec.node_by_id
                  and rec.node_by_id[a.node_id].status == N.COMPLETED)
    return Metric("approval_resumes", gettext_noop("Resumes after approval"), resumed, "count",
                  gettext_noop("Approved approvals whose waiting step then completed."), resumed, len(approved))


def _skipped(rec: _Records) -> Metric:
    skipped, checked = [], 0
    for node in rec.nodes:
        done = rec.first_transition(node, [N.COMPLETED])
        if done is None:
            continue
        checked += 1
        started = rec.first_transition(node, [N.IN_PROGRESS]) or done
        if not all(rec.dependency_met_before(node, key, started) for key in node.depends_on):
            skipped.append(node.key)
    return Metric("skipped_executions", gettext_noop("Skipped steps"), len(skipped), "count",
                  gettext_noop("Completed steps that started before all their dependencies had completed (for an undo: "
                               "ended or never started), by the transition log."), len(skipped), checked, {"nodes": skipped})


def _missed(rec: _Records) -> Metric:
    missed, completed_runs = [], [r for r in rec.runs if r.status == R.COMPLETED]
    for run in completed_runs:
        missed += [n.key for n in rec.nodes_of[run.id]
                   if n.retired_in is None and n.run_when != "failed" and n.status != N.COMPLETED]
    return Metric("missed_executions", gettext_noop("Missed steps"), len(missed), "count",
                  gettext_noop("Steps of the current plan (compensations aside) not completed in a run that completed."),
                  details={"nodes": missed, "completed_runs": len(completed_runs)})


def _side_effecting(tool: str) -> bool:
    spec = TOOLS.get(tool)
    return bool(spec and (spec.side_effects or not spec.read_only))


def _duplicates(rec: _Records) -> Metric:
    succeeded = [c for c in rec.calls if c.status == ToolCall.Status.SUCCEEDED]
    per_node = Counter(c.node_id for c in succeeded)
    per_key = Counter(c.idempotency_key for c in succeeded if _side_effecting(c.tool))
    by_node = sum(n - 1 for n in per_node.values() if n > 1)
    by_key = sum(n - 1 for n in per_key.values() if n > 1)
    return Metric("duplicate_executions", gettext_noop("Duplicate executions"), by_node + by_key, "count",
                  gettext_noop("Extra succeeded tool calls for one step and plan version, plus extra side-effecting calls "
                  "under one idempotency key."), details={"same_step": by_node, "same_idempotency_key": by_key})


def _receipt_coverage(rec: _Records) -> Metric:
    completed = [n for n in rec.nodes if n.status == N.COMPLETED]
    covered = self_referenced = 0
    for node in completed:
        call = rec.call_by_id.get(int(node.result_ref)) if node.result_ref.isdigit() else None
        receipt = str((call.result or {}).get("receipt_ref") or "") if call else ""
        if call is None or call.status != ToolCall.Status.SUCCEEDED or not receipt:
            continue
        if receipt.startswith(SELF_RECEIPT_PREFIX):
            self_referenced += 1  # the step's own call: no system of record issued it
        else:
            covered += 1
    return Metric("receipt_coverage", gettext_noop("Receipt coverage of acceptance"), _ratio(covered, len(completed)), "ratio",
                  gettext_noop("Completed steps accepted on a succeeded tool call that carries a receipt issued by a system "
                  "of record (not a reference to the step's own call), of all completed steps."),
                  covered, len(completed), {"self_references": self_referenced})


def _crash_recoveries(rec: _Records) -> Metric:
    """Runs in which a worker died holding a step (its lease ran out without being let go
    on purpose, and another worker took the step over), and how many of them completed."""
    crashed: dict[int, int] = Counter()
    for run_id, data in rec.reclaims:
        cause = data.get("cause") or ("crash" if not str(data.get("previous_owner", "")).startswith(
            ("retry:", "deferred:")) else "let go")
        if cause == "crash":
            crashed[run_id] += 1
    recovered = sum(1 for run_id in crashed if rec.run_by_id[run_id].status == R.COMPLETED)
    return Metric("crash_recoveries", gettext_noop("Recovered after a worker crash"), _ratio(recovered, len(crashed)), "ratio",
                  gettext_noop("Runs that completed after a worker died holding one of their steps (another worker took the "
                  "step over when its lease ran out), of the runs that lost a worker; retries and deferrals, "
                  "which let the lease go on purpose, are not crashes."), recovered, len(crashed),
                  {"takeovers": sum(crashed.values())})


def _dependency_coverage(rec: _Records) -> Metric:
    edges = met = 0
    for node in rec.nodes:
        started = rec.first_transition(node, [N.IN_PROGRESS])
        if started is None:
            continue
        for key in node.depends_on:
            edges += 1
            met += rec.dependency_met_before(node, key, started)
    return Metric("dependency_coverage", gettext_noop("Dependency coverage"), _ratio(met, edges), "ratio",
                  gettext_noop("Declared dependencies of started steps that had completed before the step started; for "
                               "an undo, that had ended (completed or failed) or never started."), met, edges)


def _replans(rec: _Records) -> tuple[Metric, Metric]:
    replans = [p for p in rec.plans if p.version > 1]
    scopes, recoveries = [], []
    for plan in replans:
        nodes = rec.nodes_of[plan.run_id]
        scopes.append(sum(1 for n in nodes if n.retired_in == plan.version))
        trigger = None
        for t in rec.transitions_of_run[plan.run_id]:
            if (t.node_id and t.to_status in (N.FAILED, N.BLOCKED)
                    and t.at <= plan.created_at):
                trigger = t
        if trigger is None:
            continue
        new_nodes = [n for n in nodes if n.plan_version == plan.version]
        starts = [t.at for n in new_nodes for t in rec.transitions_of_node[n.id] if t.to_status == N.IN_PROGRESS]
        end = min(starts) if starts else rec.run_by_id[plan.run_id].finished_at
        if end is not None:
            recoveries.append((end - trigger.at).total_seconds())
    scope = Metric("replan_scope", gettext_noop("Replan scope"), _mean(scopes), "nodes",
                   gettext_noop("Steps replaced per local replan (plan versions after the first), on average."),
                   details={"replans": len(replans), "replaced": sum(scopes), "max": max(scopes, default=None)})
    recovery = Metric("recovery_time", gettext_noop("Recovery time"), _mean(recoveries), "seconds",
                      gettext_noop("From the failure or rejection to the first step of the next plan version starting (or "
                      "the run ending), on average."),
                      details={"recoveries": len(recoveries), "max": max(recoveries, default=None)})
    return scope, recovery


def _checkpoint_consistency(rec: _Records) -> Metric:
    replayed: dict[int, dict[tuple[str, int], str]] = defaultdict(dict)
    for run_id, data in rec.node_events:
        replayed[run_id][(data.get("node"), data.get("plan_version"))] = data.get("to")
    consistent, broken = 0, []
    for run in rec.runs:
        ok = True
        for node in rec.nodes_of[run.id]:
            log = rec.transitions_of_node[node.id]
            by_log = log[-1].to_status if log else N.PENDING
            by_events = replayed[run.id].get((node.key, node.plan_version), N.PENDING)
            ok = ok and node.status == by_log == by_events
        run_log = rec.run_transitions[run.id]
        ok = ok and run.status == (run_log[-1].to_status if run_log else R.RUNNING)
        consistent += ok
        if not ok:
            broken.append(str(run.id))
    return Metric("checkpoint_consistency", gettext_noop("Checkpoint consistency"), _ratio(consistent, len(rec.runs)), "ratio",
                  gettext_noop("Runs whose stored step statuses equal both the last transition of each step and a replay of "
                  "the event log."), consistent, len(rec.runs), {"inconsistent_runs": broken[:20]})


def _parallelisable(nodes: list[Node]) -> bool:
    """Two steps of the plan (compensations aside) with no dependency path between
    them — that is, the graph is not one chain: a topological sort (Kahn) meets a
    moment with two steps ready at once."""
    latest: dict[str, Node] = {}
    for node in nodes:
        if node.run_when != "failed" and (node.key not in latest or node.plan_version > latest[node.key].plan_version):
            latest[node.key] = node
    waiting = {key: {d for d in node.depends_on if d in latest} for key, node in latest.items()}
    dependants: dict[str, list[str]] = defaultdict(list)
    for key, deps in waiting.items():
        for dep in deps:
            dependants[dep].append(key)
    ready = [key for key, deps in waiting.items() if not deps]
    while ready:
        if len(ready) > 1:
            return True
        key = ready.pop()
        for child in dependants[key]:
            waiting[child].discard(key)
            if not waiting[child]:
                ready.append(child)
    return False


def _concurrency(rec: _Records) -> Metric:
    peaks = []
    for run in rec.runs:
        nodes = rec.nodes_of[run.id]
        if not _parallelisable(nodes):
            continue
        edges: list[tuple[datetime, int, int]] = []
        for node in nodes:
            start = None
            for t in rec.transitions_of_node[node.id]:
                if t.to_status == N.IN_PROGRESS:
                    start = t
                elif start is not None and t.from_status == N.IN_PROGRESS and t.to_status in LEAVES_IN_PROGRESS:
                    # An end sorts before a start at the same instant: touching is not overlapping.
                    edges += [(start.at, 1, start.id), (t.at, 0, t.id)]
                    start = None
            if start is not None:
                edges += [(start.at, 1, start.id), (run.finished_at or timezone.now(), 0, 0)]
        if not edges:
            continue
        level = peak = 0
        for _, is_start, _ in sorted(edges):
            level += 1 if is_start else -1
            peak = max(peak, level)
        peaks.append(peak)
    overlapped = sum(1 for p in peaks if p > 1)
    return Metric("parallel_concurrency", gettext_noop("Parallel concurrency"), _mean(peaks), "nodes",
                  gettext_noop("Most steps of one run in progress at once, averaged over runs with parallelisable steps; "
                  "the fraction counts those runs whose parallel steps actually overlapped."),
                  overlapped, len(peaks), {"max": max(peaks, default=None)})


def _duplicate_side_effects(rec: _Records) -> Metric:
    """For every approved tool that can count its own effects (`Tool.effects_count`): the
    records created beyond one per approval, across the keys its calls used."""
    approved = [a for a in rec.approvals if a.status == ApprovalStatus.APPROVED
                and a.tool in TOOLS and TOOLS[a.tool].effects_count is not None]
    keys_of: dict[int, set[str]] = defaultdict(set)
    for call in rec.calls:
        if call.approval_id:
            keys_of[call.approval_id].add(call.idempotency_key)
    effects: dict[str, dict[str, int]] = {}
    for tool in {a.tool for a in approved}:
        keys = sorted(set().union(*(keys_of[a.id] for a in approved if a.tool == tool)))
        effects[tool] = TOOLS[tool].effects_count(rec.tenant_id, keys) if keys else {}
    extra, affected = 0, 0
    for approval in approved:
        created = sum(effects[approval.tool].get(k, 0) for k in keys_of[approval.id])
        if created > 1:
            extra += created - 1
            affected += 1
    return Metric("duplicate_side_effects", gettext_noop("Duplicate side effects after approval"), extra, "count",
                  gettext_noop("Records created beyond the one an approved step allows (one record per approved "
                  "write), after the approval resumed the run."), affected, len(approved))


def _daily(rec: _Records, period: Period) -> list[DayFigures]:
    days = {d: DayFigures(day=d, by_status={s: 0 for s in RUN_STATUS_ORDER}, completed=0, finished=0)
            for d in period.days}
    current = timezone.get_current_timezone()
    for run in rec.runs:
        figures = days.get(timezone.localtime(run.created_at, current).date())
        if figures is None:
            continue
        figures.by_status[run.status] = figures.by_status.get(run.status, 0) + 1
        figures.finished += run.status in RUN_TERMINAL
        figures.completed += run.status == R.COMPLETED
    return list(days.values())


def metrics_for(*, tenant_id: int, period: Period) -> MetricsReport:
    """The validation metrics of one tenant's runs created in `period`."""
    rec = _Records(tenant_id, period)
    scope, recovery = _replans(rec)
    metrics = [
        _success_rate(rec), _takeover_rate(rec), _provenance_blocks(rec), _approval_resumes(rec),
        _skipped(rec), _missed(rec), _duplicates(rec), _receipt_coverage(rec), _dependency_coverage(rec),
        scope, recovery, _checkpoint_consistency(rec), _concurrency(rec), _duplicate_side_effects(rec),
        _crash_recoveries(rec),
    ]
    return MetricsReport(tenant_id=tenant_id, period=period, runs=len(rec.runs), metrics=metrics,
                         daily=_daily(rec, period))
