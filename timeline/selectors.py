"""Tenant-scoped reads of the timeline, and the role projections of it.

Every read starts from a membership; another tenant's id answers 404. What a
business user sees is a projection of the same records a developer sees: the
summaries and statuses, never payloads."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, Iterable
from urllib.parse import urlencode

from django.db.models import Q, QuerySet, Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from config.api import DomainError, Forbidden, NotFound, strict_int, strict_moment
from tenants.models import Membership

from .models import Activity, Conversation, Event, Frame, FramePayload, WiringCheck

FRAME_PAGE = 200


def wiring_check_get(membership: Membership, check_id: int) -> WiringCheck:
    check = WiringCheck.objects.filter(tenant_id=membership.tenant_id, id=check_id).first()
    if check is None:
        raise NotFound(_("No such wiring check."))
    return check


def conversation_get_for(membership: Membership, conversation_id: int) -> Conversation:
    conversation = Conversation.objects.filter(tenant_id=membership.tenant_id, id=conversation_id).first()
    if conversation is None:
        raise NotFound(_("No such conversation."))
    return conversation


def conversations_for(membership: Membership) -> QuerySet[Conversation]:
    return Conversation.objects.filter(tenant_id=membership.tenant_id).select_related("started_by")


MAX_SEQ = 2**63 - 1  # a sequence number is a BIGINT; past it PostgreSQL refuses the comparison


def events_after(conversation: Conversation, after: str | int | None, limit: int = 500):
    try:
        after = strict_int(after or 0)
    except (TypeError, ValueError):
        after = -1
    if not 0 <= after <= MAX_SEQ:
        raise DomainError(_("`after` must be a whole number from 0 to %(max)s (the last sequence number you saw).")
                          % {"max": MAX_SEQ})
    return Event.objects.filter(conversation=conversation, seq__gt=after).order_by("seq")[:limit]


# --- what each role may see of an event --------------------------------------------------------

# Event data keys safe for every member. Anything else (worker names, arguments,
# whatever a later writer adds) reaches developers and admins only: a new key
# has to be let through on purpose, it never leaks by default.
BUSINESS_EVENT_KEYS = frozenset({
    "node", "plan_version", "from", "to", "reason", "control", "blueprint", "nodes", "approval", "summary",
    "deadline", "by", "comment", "replan", "waited_seconds", "question", "options", "replaced", "verdict",
    "activity", "activity_id", "run_id", "intent", "reply", "text", "delta", "status", "title", "index", "user",
    "attachment", "route", "run", "words",
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
        raise NotFound(_("No such activity."))
    return activity


def activities_for(conversation: Conversation) -> QuerySet[Activity]:
    return Activity.objects.filter(conversation=conversation).select_related("run").order_by("started_at", "id")


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
        return urlencode({k: v for k, v in (("kind", self.kind), ("tool", self.tool), ("level", self.level),
                                            ("errors", "1" if self.errors else "")) if v})


def _cursor_parse(cursor: str | None) -> tuple[datetime, int] | None:
    """Keyset cursor "<iso started_at>|<id>": the page after the last frame shown."""
    if not cursor:
        return None
    try:
        at, frame_id = cursor.rsplit("|", 1)
        return strict_moment(at), strict_int(frame_id)
    except (ValueError, TypeError):
        raise DomainError(_("`after` is not a cursor this page gave out."))


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
        raise NotFound(_("No such frame."))
    if not membership.can_see_payloads:
        raise Forbidden(_("Only developers and admins may see frame payloads."), code="payloads_forbidden")
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
