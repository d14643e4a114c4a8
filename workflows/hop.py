"""A step finished: its outcome recorded (completed or failed), its successors promoted,
the one to run in place claimed or all dispatched, the run settled — by the hop's
statements (workflows.sql) where they can, else in one transaction. Everything here is
safe to run twice: a lost compare-and-set writes nothing and says so in the log."""
from __future__ import annotations

import logging
import os
from collections.abc import Callable
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from timeline.services import events_batch_open, events_batched, events_pending, events_take, events_written

from . import call_sql, sql
from .liveness import worker_name
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


def in_place_enabled() -> bool:
    # When a node leaves exactly one ready successor, run it on this worker
    # without a broker hop; the sweeper still covers a crash in between.
    return os.environ.get("KEEL_IN_PLACE", "1") != "0"


_fast_tools: tuple[int, list[str]] = (-1, [])


def fast_tools() -> list[str]:
    """Tools the hot path may claim: no approval gate and no compensation (both ask the gate)."""
    global _fast_tools
    if _fast_tools[0] != len(TOOLS):  # tools register at start-up (and in tests)
        _fast_tools = (len(TOOLS), sorted(name for name, tool in TOOLS.items()
                                          if not tool.needs_approval and not is_compensation(name)))
    return _fast_tools[1]


# The outcome is recorded: a completion and its hop, or a failure.


_LOST = object()  # an outcome's compare-and-set lost: nothing was written


_NOT_ALONE = object()


def finish(node, run, to: str, reason: str, me: str, result_ref: str = "",
                 acceptance_results: list[dict] | None = None) -> int | sql.Claimed | None:
    """Complete or fail a node, promote its successors and claim the one to run in
    place: a completion outside a transaction while nothing else of its run is active,
    in one statement (_complete_hop); else in one transaction: two or three
    statements, then the cap count and the events."""
    now = timezone.now()
    if to == N.COMPLETED and not transaction.get_connection().in_atomic_block:
        step = _complete_hop(node, run, me, reason, result_ref, acceptance_results, now)
        if step is not _NOT_ALONE:
            return step

    def write() -> int | sql.Claimed | None | object:
        with events_batched():
            run_status, won = sql.nodes_finish(run.id, [{"id": node.id, "to": to, "reason": reason,
                                                         "result_ref": result_ref,
                                                         "acceptance_results": acceptance_results}],
                                               me=me, now=now)
            if not won:
                return _LOST  # someone else finished it: nothing written
            run.status = run_status
            node.status, node.status_reason, node.result_ref = to, reason, result_ref
            node_transitions_recorded(run, [(node.key, node.plan_version, N.IN_PROGRESS, to, reason)])
            return _promote(run, [node.key], me, now)

    step = recorded(write, node, to)
    if step is _LOST:
        not_recorded(node, to, me)
        return None
    return step


def _complete_hop(node, run, me: str, reason: str, result_ref: str, acceptance_results: list[dict] | None,
                  now) -> int | sql.Claimed | None | object:
    """A step with effects completed and its hop taken in one statement that commits by
    itself (sql.complete_hop): _NOT_ALONE when another node of its run is active, a
    successor waits on one, or no successor goes on (the run's last step: it completes
    in the transaction that settles the run), and nothing was written — and when its
    compare-and-set lost on the statement's snapshot: the transaction then decides
    under the run's lock, and says so if it is lost indeed. Never a silent return."""
    changes = [(node.key, node.plan_version, N.IN_PROGRESS, N.COMPLETED, reason)]
    node_transitions_checked(changes)
    in_place = in_place_enabled()
    hop = recorded(lambda: sql.complete_hop(node=node, run=run, me=me, reason=reason, result_ref=result_ref,
                                             acceptance_results=acceptance_results, now=now,
                                             claim_for=_claim_for(me, now) if in_place else None,
                                             events=(run.conversation_id, node_status_events(run, changes))),
                    node, N.COMPLETED)
    if hop is None or not hop.won:
        return _NOT_ALONE
    run.status = hop.run_status
    node.status, node.status_reason, node.result_ref = N.COMPLETED, reason, result_ref
    return _promoted(run, hop.promotion, True, in_place, now)


def plain_hop(node, run, me: str, call: dict, *, ready: bool, alone: bool) -> int | sql.Claimed | None:
    """A plain inline node's hop: its call recorded and the node completed — `ready`:
    claimed too — its successors promoted, the one to run in place claimed, the hop
    counted and its events written. `alone` (no other node of the run was active) and
    outside a transaction, that is one statement, a transaction of its own: no BEGIN,
    no COMMIT round trip (sql.inline_hop). Otherwise, or when that statement finds the
    run no longer alone or nothing to go on with (it then writes nothing), a transaction:
    the same statement, which promotes only when its snapshot allows, else a promotion
    after the run's lock, and the run settled with it."""
    if alone and not transaction.get_connection().in_atomic_block:
        step = _plain_hop_once(node, run, me, call, ready=ready, anyway=False)
        if step is not _NOT_ALONE:
            return step

    def write() -> int | sql.Claimed | None | object:
        with events_batched():
            return _plain_hop_once(node, run, me, call, ready=ready, anyway=True)

    step = recorded(write, node, N.COMPLETED)
    if step is _LOST:
        # `ready`: another worker ran the same message's node first (a rival run of a
        # side-effect-free tool); else someone moved the node this worker held.
        not_recorded(node, N.COMPLETED, me)
        return None
    return step


def _plain_hop_once(node, run, me: str, call: dict, *, ready: bool, anyway: bool) -> int | sql.Claimed | None | object:
    now = timezone.now()
    changes = [(node.key, node.plan_version, N.READY, N.IN_PROGRESS, "claimed")] if ready else []
    changes.append((node.key, node.plan_version, N.IN_PROGRESS, N.COMPLETED, "accepted"))
    node_transitions_checked(changes)
    batched = events_batch_open()
    if batched:  # the batch's events so far go first (None: it holds another conversation's, it writes them all)
        pending = events_pending(run.conversation_id)
        events = None if pending is None else (run.conversation_id, pending + node_status_events(run, changes))
        count = counts_pending(run.id) + len(changes)
    else:
        events, count = (run.conversation_id, node_status_events(run, changes)), len(changes)
    in_place = in_place_enabled()
    hop = recorded(lambda: sql.inline_hop(ready=ready, anyway=anyway, node=node, run=run, now=now, me=me,
                                           reason="accepted", claim_for=_claim_for(me, now) if in_place else None,
                                           count=count, events=events, **call),
                    node, N.COMPLETED)
    if not hop.won:
        # Nothing written: (not `anyway`) the run is not alone, or someone else claimed or
        # finished it — the transaction then decides under the run's lock (`anyway`: lost).
        return _LOST if anyway else _NOT_ALONE
    run.status = hop.run_status
    node.status, node.status_reason, node.result_ref = N.COMPLETED, "accepted", str(hop.call_id)
    if hop.promotion is None:  # completed only (`anyway`): the promotion follows the run's lock
        node_transitions_recorded(run, changes)
        return _promote(run, [node.key], me, now)
    if not batched:  # it committed with its events and counts: nothing is left to write unless the run settles
        return _promoted(run, hop.promotion, True, in_place, now)
    with events_batched():  # joins the caller's batch
        if events is None:
            node_transitions_recorded(run, changes, counted=True)
        else:
            events_take(run.conversation_id)  # the statement wrote them
        counts_take(run.id)  # and counted them
        return _promoted(run, hop.promotion, events is not None, in_place, now)


def finish_many(items: list[tuple[sql.Claimed, dict]]) -> int | sql.Claimed | None:
    """Complete independent claimed nodes of one run in one transaction."""
    run, me, now = items[0][0].run, worker_name(), timezone.now()
    lost: list[Node] = []

    def write() -> int | sql.Claimed | None:
        finished = []
        with events_batched():
            for c, call in items:
                ref = str(call_sql.inline_call_record(node=c.node, run=run, now=now, **call))
                finished.append({"id": c.node.id, "to": N.COMPLETED, "reason": "accepted", "result_ref": ref,
                                 "acceptance_results": []})
            run_status, won = sql.nodes_finish(run.id, finished, me=me, now=now)
            run.status = run_status
            won_set = set(won)
            done = [c.node for c, _ in items if c.node.id in won_set]
            lost[:] = [c.node for c, _ in items if c.node.id not in won_set]
            # Nodes someone else finished keep their call rows: the same idempotency key, harmless.
            node_transitions_recorded(run, [(n.key, n.plan_version, N.IN_PROGRESS, N.COMPLETED, "accepted")
                                            for n in done])
            if not done:
                return None
            return _promote(run, [n.key for n in done], me, now)

    step = recorded(write, items[0][0].node, N.COMPLETED)
    for node in lost:
        not_recorded(node, N.COMPLETED, me)
    return step


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
    node is now (issue 30)."""
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


def _promote(run: Run, finished_keys: list[str], me: str, now) -> int | sql.Claimed | None:
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
              now) -> int | sql.Claimed | None:
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
    claimed: int | sql.Claimed | None = won
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
