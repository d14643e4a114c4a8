"""What the payroll tools share: the id schema, and the retry of a step that met a busy row."""
from __future__ import annotations

from typing import Any

from config.api import Conflict
from workflows.tools import ToolBusy, ToolContext


ID = {"type": "string", "pattern": "^[0-9]{1,19}$"}


def retried_when_busy(fn):
    """A 409 "still in progress" for our own idempotency key is not a failure: an earlier
    attempt (a killed worker) holds it until its lease runs out. The engine retries."""
    def call(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            return fn(ctx, arguments)
        except Conflict as err:
            if err.code == "idempotency_in_progress":
                raise ToolBusy(err.message) from None
            raise
    call.__name__ = call.__qualname__ = fn.__name__
    call.__module__ = fn.__module__
    return call
