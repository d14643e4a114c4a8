"""Tenant-scoped reads of the timeline, and the role projections of it.

Every read starts from a membership; another tenant's id answers 404. What a
business user sees is a projection of the same records a developer sees: the
summaries and statuses, never payloads."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, Iterable

from django.db.models import Q, QuerySet, Sum
from django.utils import timezone

from config.api import DomainError, Forbidden, NotFound
from tenants.models import Membership

from .models import Activity, Conversation, Event, Frame, FramePayload, WiringCheck

FRAME_PAGE = 200


def wiring_check_get(membership: Membership, check_id: int) -> WiringCheck:
    check = WiringCheck.objects.filter(tenant_id=membership.tenant_id, id=check_id).first()
    if check is None:
        raise NotFound("No such wiring check.")
    return check


def conversation_get_for(membership: Membership, conversation_id: int) -> Conversation:
    conversation = Conversation.objects.filter(tenant_id=membership.tenant_id, id=conversation_id).first()
    if conversation is None:
        raise NotFound("No such conversation.")
    return conversation


def conversations_for(membership: Membership) -> QuerySet[Conversation]:
    return Conversation.objects.filter(tenant_id=membership.tenant_id).select_related("started_by")


def events_after(conversation: Conversation, after: str | int | None, limit: int = 500):
    try:
        after = int(after or 0)
    except (TypeError, ValueError):
        raise DomainError("`after` must be a whole number (the last sequence number you saw).")
    return Event.objects.filter(conversation=conversation, seq__gt=after).order_by("seq")[:limit]


# --- what each role may see of an event --------------------------------------------------------

# Event data keys safe for every member. Anything else (worker names, arguments,
# whatever a later writer adds) reaches developers and admins only: a new key
# has to be let through on purpose, it never leaks by default.
BUSINESS_EVENT_KEYS = frozenset({
    "node", "plan_version", "from", "to", "reason", "control", "blueprint", "nodes", "approval", "summary",
    "deadline", "by", "comment", "replan", "waited_seconds", "question", "options", "replaced", "verdict",
    "activity", "activity_id", "run_id", "intent", "reply", "text", "delta", "status", "title", "index", "user",
    "attachment", "route", "run",
})


def event_project(event: dict[str, Any], membership: Membership) -> dict[str, Any]:
    """The event as `membership` may see it (event_json shape)."""
    if membership.can_see_payloads:
        return event
    data = {k: v for k, v in (event.get("data") or {}).items() if k in BUSINESS_EVENT_KEYS}
    return {**event, "data": data}


# --- activities and frames ---------------------------------------------------------------------

def activity_get_for(membership: Membership, activity_id: int) -> Activity:
    activity = Activity.objects.filter(conversation__tenant_id=membership.tenant_id, id=activity_id).first()
    if activity is None:
        raise NotFound("No such activity.")
    return activity


def activities_for(conversation: Conversation) -> QuerySet[Activity]:
    return Activity.objects.filter(conversation=conversation).select_related("run").order_by("started_at", "id")


@dataclass
class ChatLine:
    role: str  # "user" | "assistant"
    text: str
    intent: str = ""
    attachment_name: str = ""
    attachment_rows: int = 0


def messages_for(conversation: Conversation) -> list[ChatLine]:
    """The chat history: the conversation front's Message rows when it keeps
    them, else the message Activities (title = what was asked, summary = reply)."""
    from agents import models as agent_models

    message_model = getattr(agent_models, "Message", None)
    if message_model is not None:
        rows = list(message_model.objects.filter(conversation=conversation).order_by("created_at", "id"))
        if rows:
            return [ChatLine(role=m.role, text=m.text, intent=getattr(m, "intent", ""),
                             attachment_name=getattr(m, "attachment_name", ""),
                             attachment_rows=getattr(m, "attachment_rows", 0)) for m in rows]
    lines: list[ChatLine] = []
    for activity in activities_for(conversation).filter(kind=Activity.Kind.MESSAGE):
        lines.append(ChatLine(role="user", text=activity.title))
        if activity.summary:
            lines.append(ChatLine(role="assistant", text=activity.summary, intent=activity.intent))
    return lines


@dataclass
class FrameFilters:
    kind: str = ""
    tool: str = ""
    level: str = ""
    errors: bool = False
    kinds: list[str] = field(default_factory=list)

    @classmethod
    def from_query(cls, query) -> "FrameFilters":
        return cls(kind=query.get("kind", "")[:20], tool=query.get("tool", "")[:80],
                   level=query.get("level", "")[:10], errors=query.get("errors") in ("1", "on", "true"))

    def apply(self, frames: QuerySet[Frame]) -> QuerySet[Frame]:
        if self.kind:
            frames = frames.filter(kind=self.kind)
        if self.kinds:
            frames = frames.filter(kind__in=self.kinds)
        if self.tool:
            frames = frames.filter(gen_ai_tool_name=self.tool)
        if self.level:
            frames = frames.filter(level=self.level)
        if self.errors:
            frames = frames.filter(Q(status="error") | Q(level="error") | Q(kind=Frame.Kind.ERROR))
        return frames

    def active(self) -> bool:
        return bool(self.kind or self.tool or self.level or self.errors)

    def as_query(self) -> str:
        from urllib.parse import urlencode

        return urlencode({k: v for k, v in (("kind", self.kind), ("tool", self.tool), ("level", self.level),
                                            ("errors", "1" if self.errors else "")) if v})


def _cursor_parse(cursor: str | None) -> tuple[datetime, int] | None:
    """Keyset cursor "<iso started_at>|<id>": the page after the last frame shown."""
    if not cursor:
        return None
    try:
        at, frame_id = cursor.rsplit("|", 1)
        parsed = datetime.fromisoformat(at)
        return parsed, int(frame_id)
    except (ValueError, TypeError):
        raise DomainError("`after` is not a cursor this page gave out.")


def _cursor_of(frame: Frame) -> str:
    return f"{frame.started_at.isoformat()}|{frame.id}"


@dataclass
class FramePage:
    frames: list[Frame]
    next_cursor: str | None


def frames_page(activity: Activity, *, after: str | None = None, filters: FrameFilters | None = None,
                limit: int = FRAME_PAGE, with_payloads: bool = False) -> FramePage:
    """One bounded page of an Activity's frames in time order, keyset-paginated:
    the same two queries whether the Activity holds a thousand frames or twenty
    thousand (the (activity, started_at) index serves the seek)."""
    frames = Frame.objects.filter(activity=activity)
    if filters:
        frames = filters.apply(frames)
    cursor = _cursor_parse(after)
    if cursor:
        at, frame_id = cursor
        frames = frames.filter(Q(started_at__gt=at) | Q(started_at=at, id__gt=frame_id))
    frames = frames.order_by("started_at", "id")
    if with_payloads:
        frames = frames.select_related("payload")
    rows = list(frames[:limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    return FramePage(frames=rows, next_cursor=_cursor_of(rows[-1]) if more and rows else None)


def frame_payload_get_for(membership: Membership, frame_id: int) -> FramePayload | None:
    """A frame's payload: developers and admins only; another tenant's frame is 404."""
    frame = Frame.objects.filter(id=frame_id, activity__conversation__tenant_id=membership.tenant_id).first()
    if frame is None:
        raise NotFound("No such frame.")
    if not membership.can_see_payloads:
        raise Forbidden("Only developers and admins may see frame payloads.", code="payloads_forbidden")
    return FramePayload.objects.filter(frame=frame).first()


@dataclass
class FrameRow:
    """A frame placed on its Activity's waterfall (percentages of the span)."""

    frame: Frame
    left: float
    width: float


@dataclass
class Iteration:
    """Consecutive thought → action → observation frames: one ReAct iteration."""

    number: int
    rows: list[FrameRow] = field(default_factory=list)

    @property
    def latency_ms(self) -> float:
        return sum(r.frame.latency_ms for r in self.rows)


REACT_KINDS = {Frame.Kind.THOUGHT, Frame.Kind.ACTION, Frame.Kind.OBSERVATION}


def waterfall_rows(activity: Activity, frames: Iterable[Frame]) -> list[FrameRow | Iteration]:
    """Place each frame on the Activity's time span, grouping ReAct iterations."""
    start = activity.frames_from or activity.started_at
    end = activity.frames_until or activity.ended_at or timezone.now()
    span = max((end - start).total_seconds() * 1000, 1.0)
    out: list[FrameRow | Iteration] = []
    iteration: Iteration | None = None
    count = 0
    for frame in frames:
        left = min(max((frame.started_at - start).total_seconds() * 1000 / span * 100, 0), 99.5)
        row = FrameRow(frame=frame, left=round(left, 3),
                       width=round(max(min(frame.latency_ms / span * 100, 100 - left), 0.4), 3))
        if frame.kind in REACT_KINDS:
            if iteration is None or frame.kind == Frame.Kind.THOUGHT:
                count += 1
                iteration = Iteration(number=count)
                out.append(iteration)
            iteration.rows.append(row)
            continue
        iteration = None
        out.append(row)
    return out


@dataclass
class Totals:
    frames: int
    errors: int
    tokens_in: int
    tokens_out: int
    cost: Decimal


def conversation_totals(conversation: Conversation) -> Totals:
    """Token, cost and frame totals from the Activity rollups: one query, any frame count."""
    agg = Activity.objects.filter(conversation=conversation).aggregate(
        frames=Sum("frame_count"), errors=Sum("error_count"), tokens_in=Sum("tokens_in"),
        tokens_out=Sum("tokens_out"), cost=Sum("cost"))
    return Totals(frames=agg["frames"] or 0, errors=agg["errors"] or 0, tokens_in=agg["tokens_in"] or 0,
                  tokens_out=agg["tokens_out"] or 0, cost=agg["cost"] or Decimal(0))


def frame_tools_for(conversation: Conversation) -> list[str]:
    """The tool names used in the conversation (for the filter menu), from the Activity links."""
    from agents.models import ToolCall

    return sorted(set(ToolCall.objects.filter(run__conversation=conversation).values_list("tool", flat=True)))


# --- runs: the panel, the DAG, waits, provenance -----------------------------------------------

def latest_run_for(conversation: Conversation):
    from workflows.models import Run

    return Run.objects.filter(conversation=conversation).order_by("-created_at", "-id").first()


def run_for_conversation_page(membership: Membership, run_id: int):
    from workflows.models import Run

    run = Run.objects.filter(id=run_id, tenant_id=membership.tenant_id).select_related("conversation").first()
    if run is None:
        raise NotFound("No such run.")
    return run


@dataclass
class DagNode:
    key: str
    goal: str
    tool: str
    status: str
    depends_on: list[str]
    run_when: str
    x: int = 0
    y: int = 0

    @property
    def status_label(self) -> str:
        if self.run_when != "completed" and self.status == "pending":
            return "only on failure"
        return self.status.replace("_", " ")


@dataclass
class Dag:
    nodes: list[DagNode]
    edges: list[tuple[DagNode, DagNode]]
    width: int
    height: int
    box_w: int
    box_h: int

    @property
    def edge_paths(self) -> list[dict[str, Any]]:
        out = []
        for a, b in self.edges:
            x1, y1 = a.x + self.box_w, a.y + self.box_h // 2
            x2, y2 = b.x, b.y + self.box_h // 2
            mid = (x1 + x2) // 2
            out.append({"d": f"M{x1},{y1} C{mid},{y1} {mid},{y2} {x2},{y2}", "from": a.key, "to": b.key,
                        "compensation": b.run_when != "completed"})
        return out


def dag_layout(nodes: list[Any], *, box_w: int = 128, box_h: int = 42, gap_x: int = 30, gap_y: int = 16) -> Dag:
    """Layer nodes by dependency depth (column = longest path from a root), stack each layer."""
    by_key = {n.key: DagNode(key=n.key, goal=n.goal, tool=n.tool, status=n.status, depends_on=list(n.depends_on),
                             run_when=n.run_when) for n in nodes}
    depth: dict[str, int] = {}

    def depth_of(key: str, seen: frozenset[str] = frozenset()) -> int:
        if key in depth:
            return depth[key]
        deps = [d for d in by_key[key].depends_on if d in by_key and d not in seen]
        depth[key] = 0 if not deps else 1 + max(depth_of(d, seen | {key}) for d in deps)
        return depth[key]

    layers: dict[int, list[DagNode]] = {}
    for key in by_key:
        layers.setdefault(depth_of(key), []).append(by_key[key])
    tallest = max((len(v) for v in layers.values()), default=1)
    height = tallest * box_h + (tallest - 1) * gap_y + 8
    for col, layer in sorted(layers.items()):
        total = len(layer) * box_h + (len(layer) - 1) * gap_y
        top = (height - total) // 2
        for i, node in enumerate(layer):
            node.x = 4 + col * (box_w + gap_x)
            node.y = top + i * (box_h + gap_y)
    width = 8 + len(layers) * box_w + max(len(layers) - 1, 0) * gap_x
    edges = [(by_key[d], n) for n in by_key.values() for d in n.depends_on if d in by_key]
    return Dag(nodes=list(by_key.values()), edges=edges, width=width, height=height, box_w=box_w, box_h=box_h)


@dataclass
class Wait:
    """An approval or input wait: its own segment on the timeline, with its duration."""

    kind: str  # "approval" | "input"
    node: str
    started_at: datetime
    ended_at: datetime | None
    outcome: str

    @property
    def seconds(self) -> float:
        return ((self.ended_at or timezone.now()) - self.started_at).total_seconds()

    percent: float = 100.0  # of the longest wait shown beside it

    @property
    def label(self) -> str:
        return "Approval wait" if self.kind == "approval" else "Waiting for an answer"

    @property
    def outcome_label(self) -> str:
        if self.ended_at is None:
            return "still waiting"
        if self.outcome == "ready":
            return "approved" if self.kind == "approval" else "answered"
        return {"blocked": "refused or expired"}.get(self.outcome, self.outcome.replace("_", " "))


def waits_for_runs(run_ids: list[int]) -> list[Wait]:
    """Pair each node's entry into awaiting_approval/awaiting_input with its exit."""
    from workflows.models import Transition

    waits: list[Wait] = []
    open_: dict[tuple[int, str], Wait] = {}
    for t in (Transition.objects.filter(run_id__in=run_ids, node__isnull=False).select_related("node")
              .order_by("at", "id")):
        slot = (t.node_id, t.from_status)
        if t.from_status in ("awaiting_approval", "awaiting_input") and slot in open_:
            wait = open_.pop(slot)
            wait.ended_at, wait.outcome = t.at, t.to_status
        if t.to_status in ("awaiting_approval", "awaiting_input"):
            wait = Wait(kind="approval" if t.to_status == "awaiting_approval" else "input", node=t.node.key,
                        started_at=t.at, ended_at=None, outcome="waiting")
            open_[(t.node_id, t.to_status)] = wait
            waits.append(wait)
    longest = max((w.seconds for w in waits), default=0) or 1
    for wait in waits:
        wait.percent = round(max(wait.seconds / longest * 100, 1), 2)
    return waits


@dataclass
class RunPanel:
    run: Any
    dag: Dag
    steps_done: int
    steps_total: int
    waiting_on: str
    waiting_since: datetime | None
    question: dict[str, Any] | None
    approval: Any
    plans: list[Any]
    cost: Decimal = Decimal(0)

    @property
    def percent(self) -> int:
        return int(self.steps_done * 100 / self.steps_total) if self.steps_total else 0


def nodes_in_plan_order(nodes, plans) -> list[Any]:
    """Nodes in the order their plan lists them (ids are random, so never by id)."""
    order: dict[tuple[int, str], int] = {}
    for plan in plans:
        for i, spec in enumerate(plan.graph):
            order[(plan.version, spec["key"])] = i
    return sorted(nodes, key=lambda n: (n.plan_version, order.get((n.plan_version, n.key), 99), n.key))


def run_panel(membership: Membership, run) -> RunPanel:
    """What the run panel shows: the DAG, progress, and what is waiting on whom."""
    from approvals.models import ApprovalRequest
    from tenants.models import Role
    from workflows.models import Node

    plans = list(run.plans.all())
    nodes = nodes_in_plan_order(Node.objects.filter(run=run, retired_in__isnull=True), plans)
    steps = [n for n in nodes if n.run_when == "completed"]
    waiting_on, since, question, approval = "", None, None, None
    awaiting_input = next((n for n in nodes if n.status == "awaiting_input"), None)
    if awaiting_input is not None:
        waiting_on = "your answer" if run.created_by_id == membership.user_id else "the requester's answer"
        question = awaiting_input.question or {"text": awaiting_input.status_reason}
        since = awaiting_input.transitions.filter(to_status="awaiting_input").order_by("-at").values_list(
            "at", flat=True).first()
    approval = ApprovalRequest.objects.filter(run=run, status="pending").order_by("created_at").first()
    if approval is not None:
        approvers = (Membership.objects.filter(tenant_id=run.tenant_id, role__in=[Role.APPROVER, Role.ADMIN])
                     .select_related("user").order_by("user__username"))
        names = ", ".join(m.user.username for m in approvers)
        waiting_on = f"an approver ({names})" if names else "an approver"
        since = approval.created_at
    return RunPanel(run=run, dag=dag_layout(nodes), steps_done=sum(1 for n in steps if n.status == "completed"),
                    steps_total=len(steps), waiting_on=waiting_on, waiting_since=since, question=question,
                    approval=approval, plans=plans,
                    cost=Activity.objects.filter(run=run).aggregate(c=Sum("cost"))["c"] or Decimal(0))


@dataclass
class CoordinateTrail:
    key: str
    value: Any
    producer: str
    call_id: str
    node: str
    receipt_ref: str
    plan_version: int
    consumers: list[dict[str, str]]

    @property
    def value_text(self) -> str:
        import json

        return self.value if isinstance(self.value, str) else json.dumps(self.value, ensure_ascii=False)


def provenance_for_runs(run_ids: list[int]) -> list[CoordinateTrail]:
    """Each coordinate with the call that produced it and the calls that consumed it."""
    from agents.models import StateCoordinate

    coordinates = (StateCoordinate.objects.filter(run_id__in=run_ids).select_related("call__node")
                   .prefetch_related("consumptions__call__node").order_by("created_at", "id"))
    return [CoordinateTrail(key=c.key, value=c.value, producer=c.producer, call_id=str(c.call_id),
                            node=c.call.node.key, receipt_ref=c.receipt_ref, plan_version=c.plan_version,
                            consumers=[{"call_id": str(x.call_id), "tool": x.call.tool, "node": x.call.node.key}
                                       for x in c.consumptions.all()])
            for c in coordinates]
