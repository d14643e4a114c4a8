"""The only writers of timeline records. Call them inside the transaction that
makes the change they describe, so the timeline never lies."""
from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from config import sql
from config.celery import app
from config.ids import new_id
from config.words import Stored, is_words, words_english
from outbox.services import outbox_is_held, outbox_send_on_commit, publish_on_commit
from tenants.models import Membership

from .masking import payload_mask
from .models import Activity, ActivityLink, Conversation, Event, Frame, WiringCheck
from . import otel
from .push import EVENTS, broadcast_many_on_commit, broadcast_on_commit, conversation_group, tenant_group
from .sql import events_insert_ctes


def conversation_create(*, tenant_id: int, user_id: int, title: str = "") -> Conversation:
    return Conversation.objects.create(tenant_id=tenant_id, started_by_id=user_id, title=title[:200])


_batch = threading.local()

# Who reacts to which events: (type prefixes, Celery task name). A higher layer registers
# here when Django starts (agents tells the conversation what a run did), so the engine and
# the approval gate, which write the events, never import it.
_SUBSCRIBERS: list[tuple[tuple[str, ...], str]] = []


def event_subscribe(*, types: tuple[str, ...], task: str) -> None:
    """After commit, send each event whose type starts with one of `types` to `task` (by id)."""
    if (types, task) not in _SUBSCRIBERS:
        _SUBSCRIBERS.append((types, task))


def events_owed_params() -> dict[str, list[str]]:
    """The parameters of timeline.sql's `owed` CTE: each subscriber's (type prefix, task),
    pairwise — none inside outbox_held() (a sandbox owes nobody)."""
    pairs = [] if outbox_is_held() else [(prefix, task) for types, task in _SUBSCRIBERS for prefix in types]
    return {"owe_types": [p for p, _ in pairs], "owe_tasks": [t for _, t in pairs]}


@contextmanager
def events_batched() -> Iterator[None]:
    """A transaction whose events are written together just before it commits.

    The gapless sequence is a counter on the conversation row: whoever bumps it
    holds that row's lock until commit. Written at the end, the lock is held for
    the last few statements only, so parallel nodes of one run do not queue
    behind each other's work. Also defers the run's transition-cap counting
    (see workflows.transitions), which locks the run row. Nested uses join the
    outermost block."""
    if getattr(_batch, "events", None) is not None:
        # Joined, not nested: no savepoint round trips; an error fails the whole batch.
        with transaction.atomic(savepoint=False):
            yield
        return
    _batch.events, _batch.before_flush, _batch.state = [], [], {}
    try:
        with transaction.atomic():
            yield
            while _batch.before_flush:  # e.g. the cap check, which may append a stop event
                _batch.before_flush.pop(0)()
            _events_write(_batch.events)
    finally:
        _batch.events = _batch.before_flush = _batch.state = None


def batch_state() -> dict[str, Any] | None:
    """A dict that lives as long as the open events batch (None when none is open): what a
    caller defers to the batch's end (with before_events_flush), dropped with the batch
    however it ends — a batch that failed leaves nothing to the next."""
    return getattr(_batch, "state", None)


def before_events_flush(callback: Callable[[], None]) -> bool:
    """Run `callback` inside the batch, before its events are written. False when no batch is open."""
    if getattr(_batch, "events", None) is None:
        return False
    _batch.before_flush.append(callback)
    return True


def event_append(*, conversation_id: int, type: str, data: dict[str, Any], run_id: int | None = None) -> Event | None:
    """Append an event with the next gapless sequence number, and push it after commit.

    Inside events_batched() the event is written when the batch ends (and None is
    returned); otherwise now. Either way it commits or rolls back with the change
    it describes."""
    assert transaction.get_connection().in_atomic_block, "event_append must run inside the change's transaction"
    pending = event_pending(conversation_id=conversation_id, type=type, data=data, run_id=run_id)
    if events_batch_open():
        _batch.events.append(pending)
        return None
    return _events_write([pending])[0]


# One statement per conversation: the numbers reserved and the events inserted
# (timeline.sql.events_insert_ctes), prepared once per connection.
_EVENTS_INSERT = sql.Statement(f"""
WITH x AS (
  SELECT x.o, x.run_id, x.type, x.data
    FROM unnest(%(runs)s::bigint[], %(types)s::text[], %(datas)s::jsonb[]) WITH ORDINALITY AS x(run_id, type, data, o)
), {events_insert_ctes("x")}
SELECT id, seq, ARRAY(SELECT owed.id FROM owed WHERE owed.event = ins.id) FROM ins""")


def event_pending(*, conversation_id: int, type: str, data: dict[str, Any], run_id: int | None = None
                  ) -> dict[str, Any]:
    """An event as a batch holds it until it is written: what events_take hands over, and
    what a caller that writes its own events in a statement passes it with them."""
    return {"conversation_id": conversation_id, "type": type, "data": data, "run_id": run_id}


def events_batch_open() -> bool:
    """Whether an events_batched() block is open in this thread."""
    return getattr(_batch, "events", None) is not None


def events_pending(conversation_id: int) -> list[dict[str, Any]] | None:
    """What events_take would hand over, left in the batch: for a statement that writes
    them only if it goes ahead (the caller then takes them)."""
    pending = getattr(_batch, "events", None)
    if pending is None or any(item["conversation_id"] != conversation_id for item in pending):
        return None
    return list(pending)


def events_take(conversation_id: int) -> list[dict[str, Any]] | None:
    """Hand the open batch's pending events to a caller that writes them, with its own, in a
    statement it runs anyway (the engine's hot path, workflows.sql): they are no longer
    written at the end of the batch, and the caller reports what it wrote through
    events_written(). None (nothing taken) when no batch is open or the batch holds events
    of another conversation. Events appended afterwards are written at the end, after them."""
    taken = events_pending(conversation_id)
    if taken is not None:
        _batch.events.clear()
    return taken


def events_written(conversation_id: int, rows: list[tuple], created_at: datetime) -> None:
    """What happens after events are written, for events a caller wrote itself (events_take):
    rows of (id, seq, run id, type, data, outbox rows owed), in order (timeline.sql.EVENTS_WRITTEN)."""
    _events_after_write([WrittenEvent(id, conversation_id, seq, run_id, type, data, created_at)
                         for id, seq, run_id, type, data, _ in rows], [o for row in rows for o in row[5]])


@dataclass(slots=True)
class WrittenEvent:
    """An event as written, for what follows the write (no model instance on the hot path)."""

    id: int
    conversation_id: int
    seq: int
    run_id: int | None
    type: str
    data: dict[str, Any]
    created_at: datetime


def _events_write(pending: list[dict[str, Any]]) -> list[Event]:
    by_conversation: dict[int, list[dict[str, Any]]] = {}
    for item in pending:
        by_conversation.setdefault(item["conversation_id"], []).append(item)
    events, owed = [], []
    now = timezone.now()
    for conversation_id, items in by_conversation.items():
        rows = sql.execute(_EVENTS_INSERT, {
            "conv": conversation_id, "now": now, "runs": [i["run_id"] for i in items],
            "types": [i["type"] for i in items], "datas": [sql.jsonb(i["data"]) for i in items],
            **events_owed_params()}, fetch="all")
        if not rows:
            raise _conversation_gone(conversation_id)
        ids = dict((seq, id) for id, seq, _ in rows)  # the subscribers are sent each event by its id
        owed += [o for *_, row_owed in rows for o in row_owed]
        first = min(ids)
        events += [Event(id=ids[first + i], seq=first + i, created_at=now, **item) for i, item in enumerate(items)]
    return _events_after_write(events, owed)


def _conversation_gone(conversation_id: int) -> Conversation.DoesNotExist:
    return Conversation.DoesNotExist(f"conversation {conversation_id} is gone: its events have nowhere to go")


def _events_after_write(events: list[Event] | list[WrittenEvent], owed: list[int]) -> list[Event] | list[WrittenEvent]:
    if not events:
        return events
    # The subscribers' rows (the chat's news) were written by the events' own statement
    # (timeline.sql `owed`): here a worker is only asked to deliver them after the commit.
    outbox_send_on_commit(owed, f"news owed by {len(events)} events written together")
    if otel.enabled():  # a step or a run changed status (the hot path writes no Activity through here)
        for run_id in {e.run_id for e in events if e.run_id and e.type in ("node.status", "run.status")}:
            otel.export_on_commit(run_id=run_id)
    # One hand-over to the push loop for the whole transaction's events, in order: one
    # message per conversation (timeline.push.EVENTS).
    by_group: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        by_group.setdefault(conversation_group(event.conversation_id), []).append(event_json(event))
    broadcast_many_on_commit([(group, {"type": EVENTS, "events": items}) for group, items in by_group.items()])
    return events


def event_json(event: Event | WrittenEvent) -> dict[str, Any]:
    return {"seq": event.seq, "type": event.type, "run": str(event.run_id) if event.run_id else None,
            "data": event.data, "at": event.created_at.isoformat()}


def summary_columns(summary: Stored) -> tuple[str, dict[str, Any] | None]:
    """A summary given as words (config.words) is stored as meaning, with its English
    rendering beside it for search and logs; a string is stored as it is."""
    if is_words(summary):
        return words_english(summary), summary
    return summary or "", None


def activity_open(*, conversation_id: int, kind: str, title: str, summary: Stored = "", run_id: int | None = None,
                  node_key: str = "", intent: str = "", route: str = "", id: int | None = None) -> Activity:
    ids = {"id": id} if id is not None else {}
    text, meaning = summary_columns(summary)
    return Activity.objects.create(conversation_id=conversation_id, kind=kind, title=title[:200], summary=text,
                                   summary_words=meaning, run_id=run_id, node_key=node_key, intent=intent,
                                   route=route, **ids)


def activity_close(*, activity_id: int, status: str, summary: Stored = None, intent: str | None = None,
                   route: str | None = None) -> None:
    """End an activity (one UPDATE); `intent` and `route` label a turn as it ends."""
    fields: dict[str, Any] = {"status": status, "ended_at": timezone.now()}
    if summary is not None:
        fields["summary"], fields["summary_words"] = summary_columns(summary)
    for name, value in (("intent", intent), ("route", route)):
        if value is not None:
            fields[name] = value
    Activity.objects.filter(id=activity_id).update(**fields)
    if otel.enabled():  # its run's spans go out as its records end (timeline/otel.py)
        otel.export_on_commit(activity_id=activity_id)


def frame_record(*, activity_id: int, kind: str, name: str, summary: Stored = "", status: str = "ok",
                 level: str = "info", started_at: datetime | None = None, ended_at: datetime | None = None,
                 first_token_at: datetime | None = None, parent_id: int | None = None,
                 payload: dict[str, Any] | None = None, operation: str = "", provider: str = "", model: str = "",
                 input_tokens: int = 0, output_tokens: int = 0, tool_name: str = "", tool_call_id: str = "",
                 cost: Decimal | float = 0) -> Frame:
    """Record one step. `summary` must be safe for business users (words, config.words, or
    a string shown as it is); `payload` is not.

    Atomic by itself: call it inside the transaction of the change it describes, or alone
    (a turn's frames), when it costs one statement and no BEGIN/COMMIT on PostgreSQL."""
    now = timezone.now()
    started_at = started_at or now
    ended_at = ended_at or now
    summary_text, summary_meaning = summary_columns(summary)
    frame = Frame(
        activity_id=activity_id, parent_id=parent_id, kind=kind, name=name[:120], status=status, level=level,
        summary=summary_text, summary_words=summary_meaning, started_at=started_at, ended_at=ended_at, first_token_at=first_token_at,
        latency_ms=max((ended_at - started_at).total_seconds() * 1000, 0), gen_ai_operation_name=operation,
        gen_ai_provider_name=provider, gen_ai_request_model=model, gen_ai_usage_input_tokens=input_tokens,
        gen_ai_usage_output_tokens=output_tokens, gen_ai_tool_name=tool_name, gen_ai_tool_call_id=tool_call_id,
        cost=Decimal(str(cost)),
    )
    # Masked on the way in: what is never stored can never leak.
    data = payload_mask(payload) if payload is not None else None
    _frame_write(frame, data)  # one statement: outside a transaction, a transaction of its own
    if otel.enabled() and kind in otel.EXPORTED_KINDS:
        otel.export_on_commit(activity_id=activity_id)
    return frame


# A frame, its payload, its activity's roll-up and link in one prepared statement
# (what frame_record does in three to five ORM queries elsewhere): every chat turn
# and step writes several frames.
_FRAME_INSERT = """
WITH fr AS (
  INSERT INTO timeline_frame (id, activity_id, parent_id, kind, name, status, level, summary, summary_words,
         started_at, first_token_at, ended_at, latency_ms, gen_ai_operation_name, gen_ai_provider_name,
         gen_ai_request_model, gen_ai_usage_input_tokens, gen_ai_usage_output_tokens, gen_ai_tool_name,
         gen_ai_tool_call_id, cost)
  VALUES (%(id)s, %(act)s, %(parent)s, %(kind)s, %(name)s, %(status)s, %(level)s, %(summary)s, %(words)s::jsonb,
          %(started)s,
          %(first)s, %(ended)s, %(lat)s, %(op)s, %(provider)s, %(model)s, %(tin)s, %(tout)s, %(tool)s, %(call)s,
          %(cost)s)
  RETURNING id
), fp AS (
  INSERT INTO timeline_framepayload (frame_id, data) SELECT fr.id, %(data)s::jsonb FROM fr WHERE %(data)s IS NOT NULL
), a AS (
  UPDATE timeline_activity SET frame_count = frame_count + 1, tokens_in = tokens_in + %(tin)s,
         tokens_out = tokens_out + %(tout)s, cost = cost + %(cost)s, latency_ms = latency_ms + %(lat)s,
         error_count = error_count + %(err)s,
         frames_from = LEAST(COALESCE(frames_from, %(started)s), %(started)s),
         frames_until = GREATEST(COALESCE(frames_until, %(ended)s), %(ended)s)
    FROM fr WHERE timeline_activity.id = %(act)s
), l AS (
  INSERT INTO timeline_activitylink (activity_id, kind, object_id)
  SELECT %(act)s, 'tool_call', %(call)s FROM fr WHERE %(call)s <> ''
  ON CONFLICT DO NOTHING
)
SELECT id FROM fr
"""


def _frame_write(frame: Frame, data: dict[str, Any] | None) -> None:
    frame.id = new_id()
    sql.execute(_FRAME_INSERT, {
        "id": frame.id, "act": frame.activity_id, "parent": frame.parent_id, "kind": frame.kind, "name": frame.name,
        "status": frame.status, "level": frame.level, "summary": frame.summary,
        "words": sql.jsonb(frame.summary_words) if frame.summary_words is not None else None,
        "started": frame.started_at,
        "first": frame.first_token_at, "ended": frame.ended_at, "lat": frame.latency_ms,
        "op": frame.gen_ai_operation_name, "provider": frame.gen_ai_provider_name,
        "model": frame.gen_ai_request_model, "tin": frame.gen_ai_usage_input_tokens,
        "tout": frame.gen_ai_usage_output_tokens, "tool": frame.gen_ai_tool_name,
        "call": frame.gen_ai_tool_call_id, "cost": frame.cost, "err": int(_is_error(frame)),
        "data": sql.jsonb(data) if data is not None else None}, fetch="one")
    frame._state.adding = False
    frame._state.db = "default"


def _is_error(frame: Frame) -> bool:
    return frame.status == "error" or frame.level == "error" or frame.kind == Frame.Kind.ERROR


def activity_link(*, activity_id: int, kind: str, object_id: int | str) -> None:
    """Record that the Activity touched a business object (a tool call, an approval, a group…)."""
    # One INSERT that ignores a duplicate: no read-modify-write of a list to lose a link.
    ActivityLink.objects.bulk_create([ActivityLink(activity_id=activity_id, kind=kind, object_id=str(object_id))],
                                     ignore_conflicts=True)


@transaction.atomic
def wiring_check_start(*, membership: Membership) -> WiringCheck:
    """Record a wiring check and hand it to a worker once the row is committed."""
    check = WiringCheck.objects.create(tenant=membership.tenant, requested_by=membership.user)
    # By name: the task module imports this one (tasks → services), never the reverse.
    publish_on_commit(lambda: app.send_task("timeline.tasks.wiring_check_run", args=[check.id]),
                      f"wiring check {check.id}", recovered_by="it waits until the check is started again")
    return check


@transaction.atomic
def wiring_check_complete(*, check_id: int) -> bool:
    """Mark the check done (once) and push the news to the tenant's sockets."""
    now = timezone.now()
    updated = WiringCheck.objects.filter(id=check_id, completed_at__isnull=True).update(
        completed_at=now, worker=socket.gethostname()
    )
    if not updated:
        return False  # gone, or a redelivery after it was done
    check = WiringCheck.objects.get(id=check_id)
    broadcast_on_commit(tenant_group(check.tenant_id), {
        "type": "wiring.done",
        "check_id": str(check.id),
        "completed_at": now.isoformat(),
        "worker": check.worker,
    })
    return True
