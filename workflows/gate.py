"""The interface the engine asks before a sensitive node runs (DESIGN.md §4).

The engine defines it; the approvals app implements it and registers itself when
Django starts (approvals/apps.py). So the engine never imports the layer above it,
and a deployment without approvals would fail loudly at the first gated node rather
than run it unapproved."""
from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol


class Gate(Protocol):
    def granted(self, *, node, arguments: dict[str, Any]) -> int | None:
        """The id of a decided approval for exactly these arguments, if any."""

    def request(self, *, node, run, arguments: dict[str, Any]) -> int | None:
        """A granted approval's id, or open a request (node → awaiting_approval) and return None."""

    def for_compensation(self, *, node) -> int | None:
        """The approval a compensation acts under (the one its compensated step had)."""

    def expire_overdue(self, *, now: datetime) -> int:
        """Expire pending requests past their deadline; returns how many."""

    def withdraw(self, *, run, reason: str) -> int:
        """Take the run's pending requests off the approvers' desks (a cancel); returns how many."""


class _NoGate:
    def _refuse(self, **_: Any):
        raise RuntimeError("no approval gate is registered: a node that needs approval cannot run")

    granted = request = for_compensation = _refuse

    def expire_overdue(self, *, now: datetime) -> int:
        return 0

    def withdraw(self, *, run, reason: str) -> int:
        return 0


_gate: Gate = _NoGate()


def gate_register(gate: Gate) -> None:
    global _gate
    _gate = gate


def gate() -> Gate:
    return _gate
