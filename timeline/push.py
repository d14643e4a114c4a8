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


async def _send_batch(layer, batch: list[tuple[str, dict[str, Any]]]) -> None:
    # Batches run in submission order: asyncio.Lock wakes its waiters first-come first-served.
    lock = _order_locks.setdefault(id(asyncio.get_running_loop()), asyncio.Lock())
    async with lock:
        for group, message in batch:
            try:
                await layer.group_send(group, message)
            except Exception:
                log.exception("broadcast to %s failed", group)


def group_send_many(batch: list[tuple[str, dict[str, Any]]], *, wait: bool = False) -> None:
    layer = get_channel_layer()
    if layer is None or not batch:
        return
    loop = _loop_for(layer)
    if loop is None:
        async_to_sync(_send_batch)(layer, batch)
        return
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:  # already on that loop (an async consumer): schedule, never block it
        loop.create_task(_send_batch(layer, batch))
        return
    future = asyncio.run_coroutine_threadsafe(_send_batch(layer, batch), loop)
    if wait:
        future.result(timeout=10)


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
