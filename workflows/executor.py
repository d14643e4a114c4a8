"""The Executor and Validator of seed 001: claim a ready node with a lease, run
its tool through the pipeline, accept it by its business receipt, and hand the
next ready nodes to the scheduler. Everything here is safe to run twice."""
from __future__ import annotations

import logging
import os
import socket
import threading
from datetime import timedelta

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from config.api import DomainError
from timeline.models import Activity
from timeline.services import (
    activity_close,
    activity_open,
    event_append,
    events_batched,
    frame_record,
)

from .dispatch import nodes_dispatch_on_commit
from .gate import gate
from .models import RUN_TERMINAL, Node, NodeStatus, Run
from .pipeline import (
    ProvenanceBlocked,
    arguments_resolve,
    provenance_block_record,
    tool_call_execute,
)
from .services import lease_seconds, nodes_promote, run_settle
from .tools import Acceptance, NeedsInput, ToolBlocked, ToolBusy, ToolContext, is_compensation, tool_get
from .transitions import node_transition

log = logging.getLogger(__name__)
N = NodeStatus


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident() % 100000}"


def in_place_enabled() -> bool:
    # When a node leaves exactly one ready successor, run it on this worker
    # without a broker hop; the sweeper still covers a crash in between.
    return os.environ.get("KEEL_IN_PLACE", "1") != "0"


def node_execute(node_id: int) -> int | None:
    """Run one node if it is ours to run. Returns a successor to run in place, if any."""
    node = Node.objects.select_related("run").filter(id=node_id).first()
    if node is None or node.retired_in is not None:
        return None
    run = node.run
    if run.status in RUN_TERMINAL:
        return None
    tool = tool_get(node.tool)
    me = worker_name()
    approval_id = None
    arguments = consumed = None

    if node.status == N.READY:
        if tool.needs_approval:
            try:
                arguments, consumed = arguments_resolve(node, run)
            except ProvenanceBlocked as block:
                provenance_block_record(node=node, run=run, block=block)
                with transaction.atomic():
                    if node_transition(node, N.BLOCKED, expected=N.READY, reason=str(block), worker=me):
                        run_settle(run, reason=f"step {node.key} refused: {block}")
                return None
            approval_id = gate().request(node=node, run=run, arguments=arguments)
            if approval_id is None:
                return None  # now awaiting approval: no worker slot, no broker message held
        if tool.inline:
            return _execute_inline(node, run, tool, me)
        if not _claim(node, run, me):
            return None
    elif node.status == N.IN_PROGRESS and node.lease_expires_at and node.lease_expires_at < timezone.now():
        if not _reclaim(node, run, me):
            return None
        if tool.needs_approval:
            arguments, consumed = arguments_resolve(node, run)
            approval_id = gate().granted(node=node, arguments=arguments)
    else:
        return None  # done, waiting, or someone else's lease

    if approval_id is None and is_compensation(tool.name):
        approval_id = gate().for_compensation(node=node)
    return _execute_claimed(node, run, tool, me, approval_id, arguments, consumed)


def _execute_inline(node: Node, run: Run, tool, me: str) -> int | None:
    """Claim, run and complete a side-effect-free node in one transaction."""
    with events_batched():
        if not _claim(node, run, me):
            return None
        return _execute_claimed(node, run, tool, me, None, None, None)


def _claim(node: Node, run: Run, me: str) -> bool:
    with events_batched():
        activity = node.activity_id or activity_open(
            conversation_id=run.conversation_id, kind=Activity.Kind.NODE, run_id=run.id, node_key=node.key,
            title=f"node {node.key}", summary=node.goal).id
        return node_transition(node, N.IN_PROGRESS, expected=N.READY, reason="claimed", worker=me,
                               attempts=F("attempts") + 1, lease_owner=me, activity_id=activity,
                               lease_expires_at=timezone.now() + timedelta(seconds=lease_seconds()))


def _reclaim(node: Node, run: Run, me: str) -> bool:
    """Take over an expired lease (its worker died). Compare-and-set on the old lease."""
    with transaction.atomic():
        taken = Node.objects.filter(id=node.id, status=N.IN_PROGRESS, lease_expires_at=node.lease_expires_at).update(
            lease_owner=me, attempts=F("attempts") + 1,
            lease_expires_at=timezone.now() + timedelta(seconds=lease_seconds()))
        if taken:
            event_append(conversation_id=run.conversation_id, run_id=run.id, type="node.reclaimed",
                         data={"node": node.key, "previous_owner": node.lease_owner, "owner": me})
        return bool(taken)


def _execute_claimed(node, run, tool, me, approval_id, arguments, consumed) -> int | None:
    try:
        if arguments is None:
            arguments, consumed = arguments_resolve(node, run)
        call, output = tool_call_execute(node=node, run=run, arguments=arguments, consumed=consumed,
                                         approval_id=approval_id)
    except ProvenanceBlocked as block:
        provenance_block_record(node=node, run=run, block=block)
        return _finish(node, run, N.FAILED, str(block), me)
    except NeedsInput as question:
        with transaction.atomic():
            if node_transition(node, N.AWAITING_INPUT, expected=N.IN_PROGRESS, reason=question.question,
                               worker=me, question={"text": question.question, "options": question.options},
                               lease_owner="", lease_expires_at=None):
                event_append(conversation_id=run.conversation_id, run_id=run.id, type="input.requested",
                             data={"node": node.key, "question": question.question, "options": question.options})
                run_settle(run)
        return None
    except ToolBusy:
        # The same request is still held by an earlier attempt (its lease in the system of
        # record has not run out): keep the node ours but let the lease lapse soon, so the
        # sweeper brings it back and the replay then finds the receipt.
        Node.objects.filter(id=node.id, status=N.IN_PROGRESS, lease_owner=me).update(
            lease_expires_at=timezone.now() + timedelta(seconds=1))
        return None
    except ToolBlocked as err:  # acting now would be wrong: stop with the reason, change nothing
        return _finish(node, run, N.BLOCKED, str(err), me)
    except DomainError as err:
        return _finish(node, run, N.FAILED, err.message, me)
    except Exception as err:  # the tool's own failure: recorded, never a hang
        log.exception("node %s failed", node.key)
        return _finish(node, run, N.FAILED, str(err) or err.__class__.__name__, me)

    ctx = ToolContext(tenant_id=run.tenant_id, run_id=run.id, node_id=node.id, node_key=node.key,
                      user_id=run.created_by_id, call_id=call.id, idempotency_key=call.idempotency_key,
                      approval_id=approval_id, params=run.params)
    results = tool.accept(ctx, arguments, output) if tool.accept else []
    checked = {r.criterion for r in results}
    # A criterion the blueprint asks for that the tool did not check is not met: the
    # receipt decides completion, never the absence of a check.
    results += [Acceptance(c, False, "not checked against the receipt") for c in node.acceptance if c not in checked]
    failed = [r for r in results if not r.ok]
    outcome = [{"criterion": r.criterion, "met": r.ok, "detail": r.detail} for r in results]
    if results and node.activity_id:
        with transaction.atomic():
            frame_record(activity_id=node.activity_id, kind="validation", name="acceptance",
                         status="error" if failed else "ok",
                         summary="; ".join(f"{r.criterion}: {'met' if r.ok else 'not met'}" for r in results),
                         payload={"criteria": [r.__dict__ for r in results], "receipt_ref": str(call.id)})
    if failed:
        reason = "acceptance not met: " + "; ".join(f"{r.criterion} ({r.detail})" for r in failed)
        return _finish(node, run, N.FAILED, reason, me, result_ref=str(call.id), acceptance_results=outcome)
    return _finish(node, run, N.COMPLETED, "accepted", me, result_ref=str(call.id), acceptance_results=outcome)


def _finish(node, run, to: str, reason: str, me: str, result_ref: str = "",
            acceptance_results: list[dict] | None = None) -> int | None:
    next_id = None
    extra = {"acceptance_results": acceptance_results} if acceptance_results is not None else {}
    with events_batched():
        if not node_transition(node, to, expected=N.IN_PROGRESS, reason=reason, worker=me, result_ref=result_ref,
                               lease_owner="", lease_expires_at=None, **extra):
            return None  # someone else finished it
        if node.activity_id:
            activity_close(activity_id=node.activity_id, status=to)
        # Two parallel nodes finishing at once must not both miss their common
        # successor (each seeing the other still in progress): the run row's lock
        # makes the second wait, and then read the first one's committed status.
        # NO KEY UPDATE: it must not block the foreign-key checks (KEY SHARE) that
        # other transactions take on the run row at commit, or they deadlock.
        run.status = Run.objects.select_for_update(no_key=True).values_list("status", flat=True).get(id=run.id)
        ready = nodes_promote(run)
        if len(ready) == 1 and in_place_enabled():
            next_id = ready[0]
        else:
            nodes_dispatch_on_commit(ready)
        run_settle(run)
    return next_id
