"""Broadcasts to websocket groups, always after commit.

Messages are sent after their transaction commits, in order. They are handed to a long-lived event loop — the server's in the embedded mode
(the in-memory channel layer lives there and is not thread-safe), a background
thread's in a worker process (so channels-redis keeps its connections instead
of opening new ones for every async_to_sync call) — and the caller does not
wait: a lost push is repaired by the browser's resync by sequence number.
"""
from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.db import transaction

log = logging.getLogger(__name__)
_server_loop: asyncio.AbstractEventLoop | None = None
_push_loop: tuple[int, asyncio.AbstractEventLoop] | None = None  # (pid, loop): a fork needs its own


def server_loop_register(loop: asyncio.AbstractEventLoop) -> None:
    """Called by the embedded server once its event loop exists."""
    global _server_loop
    _server_loop = loop


def tenant_group(tenant_id: int) -> str:
    return f"tenant.{tenant_id}"


def conversation_group(conversation_id: int) -> str:
    return f"conversation.{conversation_id}"


def run_group(run_id: int) -> str:
    return f"run.{run_id}"


def _loop_for(layer) -> asyncio.AbstractEventLoop | None:
    global _push_loop
    if _server_loop is not None and _server_loop.is_running():
        return _server_loop
    if isinstance(layer, InMemoryChannelLayer):
        return None  # no server loop (unit tests): send inline
    if _push_loop is None or _push_loop[0] != os.getpid():
        loop = asyncio.new_event_loop()
        threading.Thread(target=loop.run_forever, name="keel-push", daemon=True).start()
        _push_loop = (os.getpid(), loop)
    return _push_loop[1]


_order_locks: dict[int, asyncio.Lock] = {}


def _order_lock() -> asyncio.Lock:
    return _order_locks.setdefault(id(asyncio.get_running_loop()), asyncio.Lock())


async def _send_batch(layer, batch: list[tuple[str, dict[str, Any]]]) -> None:
    # Batches run in submission order (asyncio.Lock wakes its waiters first-come first-served),
    # after what this loop still holds gathered (pushes_gathered): none overtakes an earlier one.
    async with _order_lock():
        await _send(layer, coalesced(_queue_take(asyncio.get_running_loop()) + batch))


async def _send(layer, batch: list[tuple[str, dict[str, Any]]]) -> None:
    for group, message in batch:
        for attempt in (1, 2):
            try:
                await layer.group_send(group, message)
                break
            except Exception:
                # Once more: a Redis that restarted leaves the layer's pooled connection dead,
                # and the next send opens a live one. A second failure is an outage: the
                # browsers resync by sequence number when they reconnect.
                if attempt == 2:
                    log.exception("broadcast to %s failed (the browsers resync when they reconnect)", group)


# A conversation's events go to its group as one message per hand-over ("timeline.events",
# their list in order) instead of one message each: a group_send costs several Redis
# round trips, and a hop writes three events. Batches handed over while the push loop was
# busy are merged the same way before they are sent (coalesced), so a worker's pushes
# cost less the faster it commits. Every other message is sent as it is, in order.
EVENTS = "timeline.events"


def coalesced(batch: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    """The batch with each group's consecutive timeline.events messages merged into one,
    the order of every group's messages kept."""
    out: list[tuple[str, dict[str, Any]]] = []
    last: dict[str, int] = {}  # group → index in `out` of its latest message
    for group, message in batch:
        i = last.get(group)
        if message.get("type") == EVENTS and i is not None and out[i][1].get("type") == EVENTS:
            out[i] = (group, {"type": EVENTS, "events": out[i][1]["events"] + message["events"]})
            continue
        last[group] = len(out)
        out.append((group, message))
    return out


_queues: dict[int, list[tuple[str, dict[str, Any]]]] = {}  # id(loop) → batches not yet sent, in order
_drained: dict[int, float] = {}  # id(loop) → when its queue was last taken (time.monotonic)
_queues_lock = threading.Lock()
_gathering = threading.local()


@contextmanager
def pushes_gathered(window: float = 0.01) -> Iterator[None]:
    """Within, this thread's pushes go out at most once per `window` seconds, merged
    (coalesced): for a worker that commits step after step (an in-place chain, a
    fan-out chunk), a group_send per commit would cost more than the step. The first
    push after a quiet spell goes at once, the others wait `window` at most, stalled
    step or not (the push loop keeps the timer)."""
    outer = getattr(_gathering, "window", None)
    _gathering.window = window if outer is None else outer
    try:
        yield
    finally:
        _gathering.window = outer


def _hand_over(layer, loop: asyncio.AbstractEventLoop, batch: list[tuple[str, dict[str, Any]]]) -> None:
    window = getattr(_gathering, "window", None)
    with _queues_lock:
        queued = _queues.get(id(loop))
        if queued is not None:  # a drain is already scheduled: it takes this batch too
            queued.extend(batch)
            return
        _queues[id(loop)] = list(batch)
        delay = 0.0 if window is None else max(0.0, _drained.get(id(loop), 0.0) + window - time.monotonic())

    def drain_later() -> None:
        loop.call_later(delay, lambda: loop.create_task(_drain(layer, loop)))

    loop.call_soon_threadsafe(drain_later)


async def _drain(layer, loop: asyncio.AbstractEventLoop) -> None:
    # Takes the queue only once the sends before it are done: whatever was handed over
    # meanwhile goes out together, so the push keeps up however fast workers commit.
    async with _order_lock():
        await _send(layer, coalesced(_queue_take(loop)))


def _queue_take(loop: asyncio.AbstractEventLoop) -> list[tuple[str, dict[str, Any]]]:
    """The batches handed over to this loop and not yet sent, in order; the loop drained now."""
    with _queues_lock:
        _drained[id(loop)] = time.monotonic()
        return _queues.pop(id(loop), [])


def group_send_many(batch: list[tuple[str, dict[str, Any]]], *, wait: bool = False) -> None:
    layer = get_channel_layer()
    if layer is None or not batch:
        return
    loop = _loop_for(layer)
    if loop is None:
        async_to_sync(_send_batch)(layer, coalesced(batch))
        return
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:  # already on that loop (an async consumer): schedule, never block it
        loop.create_task(_send_batch(layer, coalesced(batch)))
        return
    if wait:
        asyncio.run_coroutine_threadsafe(_send_batch(layer, coalesced(batch)), loop).result(timeout=10)
        return
    _hand_over(layer, loop, batch)


def group_send_now(group: str, message: dict[str, Any]) -> None:
    group_send_many([(group, message)], wait=True)


def broadcast_on_commit(group: str, message: dict[str, Any]) -> None:
    """Schedule a broadcast for after the surrounding transaction commits (dropped
    with it on a rollback). Sends are handed over in commit order and not awaited."""
    transaction.on_commit(lambda: group_send_many([(group, message)]))


def broadcast_many_on_commit(batch: list[tuple[str, dict[str, Any]]]) -> None:
    """Schedule several broadcasts for after commit, handed over together, in order."""
    if batch:
        transaction.on_commit(lambda: group_send_many(batch))
