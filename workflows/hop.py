"""A step finished: its outcome recorded (completed or failed), its successors promoted,
the one to run in place claimed or all dispatched, the run settled — by the hop's
statements (workflows.sql) where they can, else in one transaction. Everything here is
safe to run twice: a lost compare-and-set writes nothing and says so in the log."""
from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from timeline.services import events_batched, events_pending, events_take, events_written

from . import call_sql, sql
from .models import RUN_TERMINAL, Node, NodeStatus, Run, RunStatus
from .services import lease_seconds, ready_dispatch_on_commit, run_settle
from .tools import TOOLS, is_compensation
from .transitions import (
    cap_overrun,
    counts_pending,
    counts_take,
    node_status_events,
    node_transitions_checked,
    node_transitions_recorded,
)

# A step's story is told in one log, whichever module writes its line.
log = logging.getLogger("workflows.executor")
N = NodeStatus


_in_place_since: ContextVar[float | None] = ContextVar("keel_in_place_since", default=None)


@contextmanager
def in_place_budget() -> Iterator[None]:
    """One message's work (executor.steps_execute): the successors it runs in place, for at
    most KEEL_IN_PLACE_SECONDS (1) of it."""
    token = _in_place_since.set(time.monotonic())
    try:
        yield
    finally:
        _in_place_since.reset(token)


def in_place_enabled() -> bool:
    """When a node leaves exactly one ready successor, run it on this worker without a
    broker hop (the sweeper still covers a crash in between) — until the message's work
    has taken KEEL_IN_PLACE_SECONDS: then the successor goes through the broker, behind
    whatever waits there. A slot that chained in place for good held one run to its end
    while every other run queued behind it: after a broker outage, only the first run per
    worker slot moved again at once, the rest only as whole runs finished."""
    if os.environ.get("KEEL_IN_PLACE", "1") == "0":
        return False
    since = _in_place_since.get()
    return since is None or time.monotonic() - since < float(os.environ.get("KEEL_IN_PLACE_SECONDS", "1"))


_fast_tools: tuple[int, list[str]] = (-1, [])


def fast_tools() -> list[str]:
    """Tools the hot path may claim: no approval gate and no compensation (both ask the gate)."""
    global _fast_tools
    if _fast_tools[0] != len(TOOLS):  # tools register at start-up (and in tests)
        _fast_tools = (len(TOOLS), sorted(name for name, tool in TOOLS.items()
                                          if not tool.needs_approval and not is_compensation(name)))
    return _fast_tools[1]


# The outcome is recorded: a completion and its hop, or a failure.


Step = int | sql.Claimed | None  # what runs next on this worker: a node id, a node claimed for it, or nothing


@dataclass
class Finished:
    """A step's outcome for finish: `to` (completed, failed, blocked) and why, its result and
    acceptance. `call`: a plain tool's call, recorded with the completion (its result);
    `ready`: the node is not claimed yet (a plain node's hop claims and completes it at once)."""

    node: Node
    to: str = N.COMPLETED
    reason: str = "accepted"
    result_ref: str = ""
    acceptance_results: list | None = None
    call: dict | None = None
    ready: bool = False


def finish(run: Run, finished: list[Finished], me: str, *, alone: bool = True) -> Step:
    """The one way a step finishes: its outcome recorded, its successors promoted, the one to
    run in place claimed (returned) or all dispatched, the run settled. A single completion
    outside a transaction while nothing else of its run is active (`alone`: as far as its
    caller knows) is one statement that commits by itself (_hop_alone). Otherwise, or when
    that statement writes nothing (another node of the run active, a successor waiting on
    one, the run's last step), one transaction that decides under the run's lock
    (_hop_in_transaction). Several outcomes of one run (a fan-out's chunk) share one
    transaction. An outcome whose compare-and-set lost is written nowhere and said in the log."""
    now = timezone.now()
    first = finished[0]
    if (len(finished) == 1 and alone and not transaction.get_connection().in_atomic_block
            and (first.call is not None or first.to == N.COMPLETED)):
        written, step = _hop_alone(run, first, me, now)
        if written:
            return step
    lost: list[Node] = []

    def write() -> Step:
        with events_batched():
            lost[:], step = _hop_in_transaction(run, finished, me, now)
            return step

    step = recorded(write, first.node, first.to)
    for node in lost:
        # A plain node's hop (`ready`): another worker ran the same message's node first (a
        # rival run of a side-effect-free tool); else someone moved the node this worker held.
        not_recorded(node, first.to, me)
    return step


def _changes(f: Finished) -> list[tuple[str, int, str, str, str]]:
    """The node's status changes of an outcome, checked against the table."""
    changes = [(f.node.key, f.node.plan_version, N.READY, N.IN_PROGRESS, "claimed")] if f.ready else []
    changes.append((f.node.key, f.node.plan_version, N.IN_PROGRESS, f.to, f.reason))
    node_transitions_checked(changes)
    return changes


def _won(run: Run, f: Finished, hop: sql.InlineHop, result_ref: str) -> None:
    run.status = hop.run_status
    f.node.status, f.node.status_reason, f.node.result_ref = f.to, f.reason, result_ref


def _hop_alone(run: Run, f: Finished, me: str, now) -> tuple[bool, Step]:
    """A completion and its hop in one statement that commits by itself, its events and count
    with it (sql.inline_hop for a plain call, sql.complete_hop for a step with effects).
    (False, None): it wrote nothing — another node of its run is active, a successor waits on
    one, no successor goes on (the run's last step completes in the transaction that settles
    the run), or its compare-and-set lost on the statement's snapshot: the transaction then
    decides under the run's lock, and says so if it is lost indeed."""
    changes = _changes(f)
    in_place = in_place_enabled()
    claim_for = _claim_for(me, now) if in_place else None
    events = (run.conversation_id, node_status_events(run, changes))
    if f.call is not None:
        hop = recorded(lambda: sql.inline_hop(ready=f.ready, anyway=False, node=f.node, run=run, now=now, me=me,
                                              reason=f.reason, claim_for=claim_for, count=len(changes),
                                              events=events, **f.call),
                       f.node, f.to)
    else:
        hop = recorded(lambda: sql.complete_hop(node=f.node, run=run, me=me, reason=f.reason, result_ref=f.result_ref,
                                                acceptance_results=f.acceptance_results, now=now,
                                                claim_for=claim_for, events=events),
                       f.node, f.to)
    if hop is None or not hop.won:
        return False, None
    _won(run, f, hop, str(hop.call_id) if f.call is not None else f.result_ref)
    return True, _promoted(run, hop.promotion, True, in_place, now)


def _hop_in_transaction(run: Run, finished: list[Finished], me: str, now) -> tuple[list[Node], Step]:
    """The outcomes recorded in the open events batch, then the promotion after the run's
    lock (_promote); returns the nodes whose compare-and-set lost, and the step to run next.
    A single plain call: one statement (sql.inline_hop, which claims a `ready` node too),
    promoting on its own snapshot when it may. Else the calls recorded (a chunk's) and the
    outcomes written by sql.nodes_finish, which takes the run's lock first."""
    f = finished[0]
    if len(finished) == 1 and f.call is not None:
        return _plain_hop_in_transaction(run, f, me, now)
    rows = []
    for f in finished:
        ref = f.result_ref if f.call is None else str(call_sql.inline_call_record(node=f.node, run=run, now=now,
                                                                                  **f.call))
        rows.append({"id": f.node.id, "to": f.to, "reason": f.reason, "result_ref": ref,
                     "acceptance_results": f.acceptance_results if f.call is None else []})
    run.status, won = sql.nodes_finish(run.id, rows, me=me, now=now)
    done = [(f, row) for f, row in zip(finished, rows) if row["id"] in won]
    # Nodes someone else finished keep their call rows: the same idempotency key, harmless.
    lost = [f.node for f in finished if f.node.id not in won]
    for f, row in done:
        f.node.status, f.node.status_reason, f.node.result_ref = f.to, f.reason, row["result_ref"]
    node_transitions_recorded(run, [(f.node.key, f.node.plan_version, N.IN_PROGRESS, f.to, f.reason)
                                    for f, _ in done])
    if not done:
        return lost, None
    return lost, _promote(run, [f.node.key for f, _ in done], me, now)


def _plain_hop_in_transaction(run: Run, f: Finished, me: str, now) -> tuple[list[Node], Step]:
    changes = _changes(f)
    # The batch's events so far go first (None: it holds another conversation's, it writes them all).
    pending = events_pending(run.conversation_id)
    events = None if pending is None else (run.conversation_id, pending + node_status_events(run, changes))
    in_place = in_place_enabled()
    hop = recorded(lambda: sql.inline_hop(ready=f.ready, anyway=True, node=f.node, run=run, now=now, me=me,
                                          reason=f.reason, claim_for=_claim_for(me, now) if in_place else None,
                                          count=counts_pending(run.id) + len(changes), events=events, **f.call),
                   f.node, f.to)
    if not hop.won:  # nothing written: someone else claimed or finished it
        return [f.node], None
    _won(run, f, hop, str(hop.call_id))
    if hop.promotion is None:  # completed only: the promotion follows the run's lock
        node_transitions_recorded(run, changes)
        return [], _promote(run, [f.node.key], me, now)
    if events is None:
        node_transitions_recorded(run, changes, counted=True)
    else:
        events_take(run.conversation_id)  # the statement wrote them
    counts_take(run.id)  # and counted them
    return [], _promoted(run, hop.promotion, events is not None, in_place, now)


# PostgreSQL rolled the whole transaction (or statement) back: a deadlock with another
# writer, a serialization failure. Nothing of it was written: it may be tried again.
_ROLLED_BACK = frozenset({"40P01", "40001"})
RECORD_TRIES = 3


def recorded(write: Callable[[], object], node, to: str):
    """`write()` — a statement that commits by itself, or a transaction — records a step's
    outcome `to`; run it until it commits. A step's outcome is never lost while its worker
    lives: one PostgreSQL rolled back whole is tried again; any other error is logged as
    what it is (the outcome not recorded: the step waits for its lease to run out) and
    raised. Inside a caller's transaction (which the error aborted) it is only raised: the
    caller's own error handling decides."""
    for attempt in range(1, RECORD_TRIES + 1):
        try:
            return write()
        except Exception as err:
            if transaction.get_connection().in_atomic_block:
                raise
            if attempt < RECORD_TRIES and getattr(err.__cause__, "sqlstate", None) in _ROLLED_BACK:
                log.warning("step %s (node %s): recording its outcome (%s) was rolled back (%s); recording it "
                            "again", node.key, node.id, to, str(err).splitlines()[0])
                continue
            log.error("step %s (node %s): its outcome (%s) was not recorded; the step runs again once its lease "
                      "runs out", node.key, node.id, to, exc_info=True)
            raise
    raise AssertionError("unreachable")


def not_recorded(node, to: str, me: str) -> None:
    """A step's outcome lost its compare-and-set: someone else moved the node first (a
    worker that took its lease over, a cancel). Never in silence: the log says what the
    node is now."""
    now = Node.objects.filter(id=node.id).values("status", "lease_owner", "retired_in").first()
    if now is None:
        state = "gone"
    else:
        state = now["status"] + (f", held by {now['lease_owner']}" if now["lease_owner"] else "") + (
            f", retired in plan v{now['retired_in']}" if now["retired_in"] else "")
    log.warning("step %s (node %s): its outcome (%s, by %s) was not recorded: the node is %s",
                node.key, node.id, to, me, state)


# 5. The run goes on: successors promoted, one claimed in place or all dispatched, the run settled.


def _claim_for(me: str, now) -> tuple[str, object, list[str]]:
    """A single successor the hot path may run is claimed in the promoting statement."""
    return me, now + timedelta(seconds=lease_seconds()), fast_tools()


def _promote(run: Run, finished_keys: list[str], me: str, now) -> Step:
    """Inside the completing transaction (the run row is locked): promote the
    successors, claim the single one in place or dispatch them all after commit,
    and settle the run unless it is plainly still running."""
    in_place = in_place_enabled()
    if run.status in RUN_TERMINAL:
        return _promoted(run, None, False, in_place, now)
    # The statement also counts the hop's transitions against the cap: those of this
    # batch so far (the completion) and its own (no separate UPDATE of the run).
    # And it writes the batch's events so far with its own (no statement of their own).
    pending = events_take(run.conversation_id)
    promotion = sql.successors_promote(run.id, finished_keys, now=now,
                                       claim_for=_claim_for(me, now) if in_place else None,
                                       count=counts_take(run.id),
                                       events=None if pending is None else (run.conversation_id, pending))
    return _promoted(run, promotion, pending is not None, in_place, now)


def _promoted(run: Run, promotion: sql.Promotion | None, written: bool, in_place: bool,
              now) -> Step:
    """What follows a promotion (None: none, the run is over) in its transaction, or
    after the statement that committed it: its changes checked, the successors
    dispatched after commit unless one runs in place, the events followed up
    (`written`: the statement wrote them) and the run settled unless it is plainly
    still running (what writes joins the transaction, or takes one of its own)."""
    promoted, busy, won = [], False, None
    if promotion is not None:
        promoted, busy, won = promotion.promoted, promotion.busy, promotion.claimed
        changes = [(p.key, p.plan_version, N.PENDING, N.READY, "dependencies met") for p in promoted]
        if won is not None:
            changes.append((won.node.key, won.node.plan_version, N.READY, N.IN_PROGRESS, "claimed"))
        if not written:
            node_transitions_recorded(run, changes, counted=True)
        else:  # the statement wrote their events: check them against the table all the same
            node_transitions_checked(changes)
        if not promotion.within_cap:
            with events_batched():  # joins the caller's batch; after a statement that committed, its own
                cap_overrun(run.id)  # the run stops here: nothing runs in place
            run.status, won = RunStatus.STOPPED, None
    if won is not None:
        won.busy = busy
    claimed: Step = won
    if won is None and len(promoted) == 1 and in_place and run.status not in RUN_TERMINAL:
        claimed = promoted[0].id  # a gated step: the general path asks the gate, on this worker
    if claimed is None and run.status not in RUN_TERMINAL:
        ready_dispatch_on_commit(promoted)
    if promotion is not None and written:
        # After the dispatch: what follows the events (their push) runs after the commit's
        # messages are sent, so the next step's worker waits for no push of this one.
        events_written(run.conversation_id, promotion.events, now)
    if not (run.status == RunStatus.RUNNING and (busy or promoted)):
        with events_batched():
            run_settle(run)
    return claimed
