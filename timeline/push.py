"""Broadcasts to websocket groups, always after commit.

In the embedded mode the in-memory channel layer lives on the server's event
loop and is not thread-safe, so a worker thread hands the send to that loop.
In the Redis mode any process can send directly.
"""
import asyncio
import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

log = logging.getLogger(__name__)
_server_loop: asyncio.AbstractEventLoop | None = None


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


def group_send_now(group: str, message: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    loop = _server_loop
    if loop is not None and loop.is_running():
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not loop:
            asyncio.run_coroutine_threadsafe(layer.group_send(group, message), loop).result(timeout=10)
            return
    async_to_sync(layer.group_send)(group, message)


def broadcast_on_commit(group: str, message: dict[str, Any]) -> None:
    """Schedule a broadcast for after the surrounding transaction commits."""

    def send() -> None:
        try:
            group_send_now(group, message)
        except Exception:  # a lost push is repaired by the client's resync, never fatal
            log.exception("broadcast to %s failed", group)

    transaction.on_commit(send)
