"""The two state machines of a run — nodes and the run itself — and the one
function each that changes a status on the general path (DESIGN.md §4).

Each transition checks the allowed-transition table, has workflows.sql write it (the
compare-and-set UPDATE, WHERE status = <from>, and the Transition row), appends the
timeline event in the same transaction, and counts against the run's transition cap.
A lost race returns False and changes nothing: never a double execution. The hot
path's statements (workflows.sql) write theirs themselves; their changes are checked
against the same table here (node_transitions_checked)."""
from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from config.words import Stored, is_words, words_english
from timeline.services import batch_state, before_events_flush, event_append, event_pending

from .models import RUN_FINAL, RUN_TERMINAL, Node, NodeStatus, Run, RunStatus
from .sql import node_status_set, run_status_set, transitions_count, transitions_count_full
from .tools import TOOLS

N, R = NodeStatus, RunStatus

NODE_TRANSITIONS: dict[str, set[str]] = {
    N.PENDING: {N.READY, N.BLOCKED},
    N.READY: {N.IN_PROGRESS, N.AWAITING_APPROVAL, N.BLOCKED},
    N.IN_PROGRESS: {N.COMPLETED, N.FAILED, N.AWAITING_INPUT, N.BLOCKED},
    N.AWAITING_APPROVAL: {N.READY, N.BLOCKED},
    N.AWAITING_INPUT: {N.READY, N.BLOCKED},
    N.COMPLETED: set(),
    # Only run_retry takes these (a new logical attempt, by a person, with a reason).
    N.FAILED: {N.READY},
    N.BLOCKED: {N.READY},
}

RUN_TRANSITIONS: dict[str, set[str]] = {
    R.RUNNING: {R.AWAITING_APPROVAL, R.AWAITING_INPUT, R.COMPLETED, R.FAILED, R.BLOCKED, R.ROLLED_BACK, R.STOPPED,
                R.CANCELLED},
    R.AWAITING_APPROVAL: {R.RUNNING, R.AWAITING_INPUT, R.BLOCKED, R.STOPPED, R.FAILED, R.CANCELLED},
    R.AWAITING_INPUT: {R.RUNNING, R.AWAITING_APPROVAL, R.BLOCKED, R.STOPPED, R.FAILED, R.CANCELLED},
    # A local replan after a rejection, a retry or a cancel's compensation takes the run up again.
    R.BLOCKED: {R.RUNNING, R.CANCELLED},
    R.FAILED: {R.RUNNING, R.CANCELLED},  # a retry; a cancel that had nothing to undo
    R.COMPLETED: set(),
    R.ROLLED_BACK: set(),
    R.STOPPED: set(),
    R.CANCELLED: set(),
}


class TransitionNotAllowed(Exception):
    pass


def _assert_atomic() -> None:
    assert transaction.get_connection().in_atomic_block, "transitions run inside the caller's transaction"


def run_lock(run: Run) -> None:
    """The run's row lock, first in a transaction that changes one of its steps or decides
    for one (an approval, an expiry, an answer, a cancel): every writer takes its locks in
    the order a hop takes them — the run, its nodes (and approvals), then the conversation
    (an event's number) — so no two wait for each other in a circle and PostgreSQL never
    rolls one of them back; and what it reads after it (run_settle) includes
    every sibling's change that committed first. NO KEY UPDATE: it must not block the
    foreign-key checks other transactions take on the row. Refreshes `run.status`."""
    _assert_atomic()
    run.status = Run.objects.select_for_update(no_key=True).values_list("status", flat=True).get(id=run.id)


_COUNTS = "workflows.transition_counts"


def _deferred_counts() -> dict[int, int] | None:
    """The runs' transitions counted in the open events batch, to be written at its end
    (None: no batch is open). They live with the batch: one that fails takes them along."""
    state = batch_state()
    if state is None:
        return None
    if _COUNTS not in state:
        state[_COUNTS] = {}
        before_events_flush(_counts_flush)
    return state[_COUNTS]


def _count(run: Run) -> bool:
    """Count a transition against the cap — at the end of an events batch when one is
    open (the UPDATE locks the run row until commit), else now. False: counted now, it
    passed the cap (the caller stops the run once its own event is appended)."""
    counts = _deferred_counts()
    if counts is not None:
        counts[run.id] = counts.get(run.id, 0) + 1
        return True
    return transitions_count(run.id, 1)


def _counts_flush() -> None:
    counts = batch_state().pop(_COUNTS)  # counted after this (a stop's own event): flushed again
    for run_id, n in counts.items():
        if not transitions_count(run_id, n):
            cap_overrun(run_id)


def counts_pending(run_id: int) -> int:
    """What counts_take would hand over, left in the batch."""
    counts = (batch_state() or {}).get(_COUNTS)
    return counts.get(run_id, 0) if counts else 0


def counts_take(run_id: int) -> int:
    """The run's transitions counted in the open batch and not yet written, handed to
    a caller that writes them itself in a statement it runs anyway (the hot path's
    promotion, workflows.sql); they are no longer flushed at the end of the batch."""
    counts = (batch_state() or {}).get(_COUNTS)
    return counts.pop(run_id, 0) if counts else 0


def cap_overrun(run_id: int) -> None:
    """A count would pass the run's transition cap: the run stops there."""
    transitions_count_full(run_id)
    _cap_reached(Run.objects.get(id=run_id))


def _cap_reached(run: Run) -> None:
    run.refresh_from_db(fields=["status"])
    if run.status not in RUN_TERMINAL:
        run_transition(run, R.STOPPED, reason="transition cap reached", counted=False)


def node_transition(node: Node, to: str, *, expected: str | None = None, reason: str = "", worker: str = "",
                    **fields: Any) -> bool:
    """Move `node` from `expected` (default: its status as loaded) to `to`."""
    _assert_atomic()
    frm = expected or node.status
    if to not in NODE_TRANSITIONS[frm]:
        raise TransitionNotAllowed(f"node {node.key}: {frm} → {to} is not an allowed transition")
    now = timezone.now()
    if to == N.IN_PROGRESS:
        fields.setdefault("started_at", now)
    if to in (N.COMPLETED, N.FAILED, N.BLOCKED):
        fields.setdefault("finished_at", now)
    if not node_status_set(node, frm, to, reason=reason, worker=worker, fields=fields):
        return False  # another worker or request got there first
    node.status, node.status_reason = to, reason
    for name, value in fields.items():
        setattr(node, name, value)
    run = node.run if Node.run.is_cached(node) else Run.objects.only("id", "conversation_id", "status").get(
        id=node.run_id)
    # Counted before its event: with no batch open both are written now, and the run's
    # lock (the count's UPDATE) must come before the conversation's (the event's number),
    # the order a hop takes them — else this and a sibling step's hop deadlock, and
    # PostgreSQL rolls one of them back.
    within = _count(run)
    event_append(conversation_id=run.conversation_id, run_id=run.id, type="node.status",
                 data={"node": node.key, "plan_version": node.plan_version, "from": frm, "to": to,
                       "reason": reason})
    if not within:
        _cap_reached(run)
    return True


def node_transitions_recorded(run: Run, changes: list[tuple[str, int, str, str, str]], *,
                              counted: bool = False) -> None:
    """The hot path's half of node_transition: the compare-and-set UPDATEs and the
    Transition rows were written by workflows.sql's statements, in this transaction;
    this checks them against the table and appends their timeline events and counts
    (unless the statement counted them too).
    changes: (node key, plan version, from, to, reason), in the order they happened."""
    _assert_atomic()
    node_transitions_checked(changes)
    for event in node_status_events(run, changes):
        within = counted or _count(run)
        event_append(**event)
        if not within:
            _cap_reached(run)


def node_status_events(run: Run, changes: list[tuple[str, int, str, str, str]]) -> list[dict[str, Any]]:
    """The node.status events of changes as node_transitions_recorded lists them, pending
    (timeline.event_pending): for a statement that writes them itself."""
    return [event_pending(conversation_id=run.conversation_id, run_id=run.id, type="node.status",
                          data={"node": key, "plan_version": plan_version, "from": frm, "to": to, "reason": reason})
            for key, plan_version, frm, to, reason in changes]


def node_transitions_checked(changes: list[tuple[str, int, str, str, str]]) -> None:
    """Each change (node key, plan version, from, to, reason) is one the table allows."""
    for key, _, frm, to, _ in changes:
        if to not in NODE_TRANSITIONS[frm]:
            raise TransitionNotAllowed(f"node {key}: {frm} → {to} is not an allowed transition")


def run_transition(run: Run, to: str, *, expected: str | None = None, reason: Stored = "", counted: bool = True,
                   **fields: Any) -> bool:
    """`reason` may be words (config.words): the status columns keep its English, the
    run.status event its meaning (what the conversation tells the reader)."""
    _assert_atomic()
    meaning, reason = reason, (words_english(reason) if is_words(reason) else (reason or ""))
    frm = expected or run.status
    if frm == to:
        return False
    if to not in RUN_TRANSITIONS[frm]:
        raise TransitionNotAllowed(f"run: {frm} → {to} is not an allowed transition")
    if to in RUN_TERMINAL:
        fields.setdefault("finished_at", timezone.now())
    if not run_status_set(run, frm, to, reason=reason, fields=fields):
        return False
    run.status, run.status_reason = to, reason
    for name, value in fields.items():
        setattr(run, name, value)
    event_append(conversation_id=run.conversation_id, run_id=run.id, type="run.status",
                 data={"from": frm, "to": to, "reason": meaning, "control": fields.get("control", run.control)})
    if to in RUN_FINAL:
        _holds_release(run)
    if counted and not _count(run):
        _cap_reached(run)
    return True


def _holds_release(run: Run) -> None:
    """Give back what the run's tools hold (a reserved name, claimed records), in the
    transaction that ends the run: a crash between the two cannot leak a hold."""
    for name in set(Node.objects.filter(run_id=run.id).values_list("tool", flat=True)):
        tool = TOOLS.get(name)
        if tool is not None and tool.release is not None:
            tool.release(run.tenant_id, run.id)
