"""The Executor and Validator (DESIGN.md §2): claim a ready node with a lease, run
its tool through the pipeline, accept it by its business receipt, and hand the
next ready nodes to the scheduler. Everything here is safe to run twice."""
from __future__ import annotations

import logging
import os
import time
from datetime import timedelta

from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext_noop

from config.api import DomainError
from config.words import Stored, words, words_english
from timeline.services import activity_close, event_append, events_batched, events_written, frame_record

from . import hop, sql
from .blueprints import criterion_words
from .dispatch import dispatch_is_held, nodes_dispatch_on_commit, nodes_spread
from .faults import fault_point
from .gate import gate
from .hop import fast_tools
from .learners import learners_call
from .liveness import (
    HANDED_OVER,
    LEASE_EXPIRED,
    LET_GO_DEFERRED,
    LET_GO_RETRY,
    reclaim_cause,
    worker_name,
)
from .models import RUN_TERMINAL, Node, NodeStatus, Run
from .pipeline import (
    ProvenanceBlocked,
    arguments_resolve,
    idempotency_key_for,
    provenance_block_record,
    tool_call_execute,
)
from .services import (
    active_nodes,
    lease_seconds,
    plan_replan,
    run_settle,
)
from .tools import (
    TOOLS,
    TRANSIENT_ERRORS,
    Acceptance,
    NeedsInput,
    ToolBlocked,
    ToolBusy,
    ToolContext,
    is_compensation,
    tool_get,
)
from .transitions import cap_overrun, node_transition, node_transitions_checked, node_transitions_recorded, run_lock

log = logging.getLogger(__name__)
N = NodeStatus


# 1. A step arrives (a node id, a claimed node, a fan-out's chunk). The hot path (workflows/sql.py,
# no ORM query) takes what it can; the general path the rest (gates, compensations, expired leases).


def steps_execute(step: hop.Step, *, plain: bool = False) -> None:
    """Run a step and, in place, the successors it leaves to this worker: a node id
    (claimed here if it is ours to run; `plain`: see node_execute) or a node already
    claimed. In place for a while only (hop.in_place_budget): then through the broker, so
    no run waits behind another's whole chain."""
    with hop.in_place_budget():
        while step is not None:
            step = claimed_execute(step) if isinstance(step, sql.Claimed) else node_execute(step, plain=plain)
            plain = False


def node_execute(node_id: int, *, plain: bool = False) -> hop.Step:
    """Run one node if it is ours to run. Returns a successor to run in place, if
    any: its id, or the successor itself already claimed (the hot path). `plain`:
    the node is known to run a side-effect-free tool with nothing to accept."""
    taken, step = _hot_path_run(node_id, plain)
    if taken:
        return step
    # Not ready, gated, a compensation, an expired lease, done or gone: the general path decides.
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
                _stop(node, run, N.BLOCKED, me, expected=N.READY, reason=str(block),
                      settle_reason=f"step {node.key} refused: {block}")
                return None
            if tool.approval_required(run.tenant_id, arguments):
                approval_id = gate().request(node=node, run=run, arguments=arguments)
                if approval_id is None:
                    return None  # now awaiting approval: no worker slot, no broker message held
        claimed = node_claim([node.id], me, tools=[node.tool])
        if not claimed:
            return None
        node, run = claimed[0].node, claimed[0].run
    elif node.status == N.IN_PROGRESS and node.lease_owner.startswith(HANDED_OVER):
        # Claimed for us by whoever made it ready (an approver's request): take the lease.
        if not _take_over(node, me):
            return None
        if tool.needs_approval:
            arguments, consumed = arguments_resolve(node, run)
            if tool.approval_required(run.tenant_id, arguments):
                approval_id = gate().granted(node=node, arguments=arguments)
                if approval_id is None:  # never run a gated step without an approval of exactly these arguments
                    return hop.finish(run, [hop.Finished(node, N.BLOCKED, "no approval covers these arguments any more")],
                                      me)
    elif node.status == N.IN_PROGRESS and node.lease_expires_at and node.lease_expires_at < timezone.now():
        if not _reclaim(node, run, me):
            return None
        if tool.needs_approval:
            arguments, consumed = arguments_resolve(node, run)
            if tool.approval_required(run.tenant_id, arguments):
                approval_id = gate().granted(node=node, arguments=arguments)
    else:
        return None  # done, waiting, or someone else's lease

    if approval_id is None and is_compensation(tool.name):
        approval_id = gate().for_compensation(node=node)
    return _execute_claimed(node, run, tool, me, approval_id, arguments, consumed)


def claimed_execute(claimed: sql.Claimed) -> hop.Step:
    """Run a node this worker has claimed, and finish it."""
    node, run, me = claimed.node, claimed.run, worker_name()
    tool = tool_get(node.tool)
    call = _inline_run(node, run, tool)
    if call is None:  # not plain, or its tool failed: the general path runs it (and records a failure)
        return _execute_claimed(node, run, tool, me, None, None, None)
    return hop.finish(run, [hop.Finished(node, call=call)], me, alone=not claimed.busy)


def nodes_execute(node_ids: list[int]) -> list[hop.Step]:
    """A chunk of a fan-out (or of what a reconnect resumes). Side-effect-free nodes are
    claimed in one statement and completed in one transaction per run; of the others, one
    runs here when nothing else does and the rest go to other slots, a message each.
    Returns the steps to continue with in place."""
    inline, me = [name for name in fast_tools() if TOOLS[name].inline], worker_name()
    claimed = node_claim(node_ids, me, tools=inline)
    taken = {c.node.id for c in claimed}
    steps: list[hop.Step] = []
    by_run: dict[int, tuple[Run, list[hop.Finished]]] = {}
    for c in claimed:
        tool = tool_get(c.node.tool)
        call = _inline_run(c.node, c.run, tool)
        if call is None:
            steps.append(c)  # runs through claimed_execute
        else:
            by_run.setdefault(c.run.id, (c.run, []))[1].append(hop.Finished(c.node, call=call))
    for run, finished in by_run.values():
        steps.append(hop.finish(run, finished, me, alone=False))  # one transaction a run
    rest = [node_id for node_id in node_ids if node_id not in taken]
    here = 0 if steps else 1
    if len(rest) > here and nodes_spread(rest[here:]):  # the broker does not answer: all run here
        rest = rest[:here]
    return steps + rest


def node_hand_over(node: Node, run: Run) -> None:
    """Claim this node, just made ready in the current transaction, for the worker its
    message goes to (its lease named HANDED_OVER), and send the message once the
    transaction commits; the worker takes the claim over instead of claiming it again.
    The claim commits with what made the node ready (an approver's decision): the
    hand-over waits for no broker round trip and no transaction of its own. The lease
    covers a lost message (the sweeper reclaims it when it runs out)."""
    if dispatch_is_held():
        return
    me = f"{HANDED_OVER}{worker_name()}"[:120]
    if node_claim([node.id], me, tools=[node.tool]):
        nodes_dispatch_on_commit([node.id])


# 2. The claim: a lease on a ready node, by compare-and-set, or a lease taken over.


def _hot_path_run(node_id: int, plain: bool) -> tuple[bool, hop.Step]:
    """A hop in as few statements as the node allows. Known `plain` (its tool
    side-effect-free, nothing to accept): it is read, its tool run, and it is claimed
    and completed — its call recorded, its successors promoted, the one to run in place
    claimed — in one statement, a transaction of its own while nothing else of its run
    is active (hop.finish); a rival run of the same node writes nothing. Any
    other node is claimed first, with its event and its count, in one statement that
    commits before its tool runs (its effects must not run in a transaction); if it
    proves plain, it then completes as above. A crash before the claim commits leaves
    the node ready (the late-acked message comes back; the sweeper covers a lost one);
    after it, the lease runs out and the sweeper hands the node out again. Returns
    (whether it took the node, the step to run next); not taken: the node was not ours
    to claim here (or its claim stopped the run at its cap), the general path decides."""
    me = worker_name()
    if plain:
        read = sql.node_ready_read(node_id, tools=fast_tools())
        if read is None:
            return False, None
        call = _inline_run(read.node, read.run, tool_get(read.node.tool))
        if call is not None:
            return True, hop.finish(read.run, [hop.Finished(read.node, call=call, ready=True)], me,
                                    alone=not read.busy)
        # It was not plain after all, or its tool failed: claimed at once as any other node.
    claimed = node_claim([node_id], me, alone=not transaction.get_connection().in_atomic_block)
    if not claimed:
        return False, None
    node, run = claimed[0].node, claimed[0].run
    tool = tool_get(node.tool)
    call = _inline_run(node, run, tool)
    if call is not None:  # plain after all: completed in one statement more
        return True, hop.finish(run, [hop.Finished(node, call=call)], me)
    return True, _execute_claimed(node, run, tool, me, None, None, None)


def node_claim(node_ids: list[int], me: str, *, tools: list[str] | None = None,
               alone: bool = False) -> list[sql.Claimed]:
    """The one way a step is claimed: ready → in_progress for those of `node_ids` still
    ready, of a live run and with one of `tools` (default: those the hot path may run),
    with the lease of `me`, their Activities, transitions, events and count. `alone` (a
    single node, outside a transaction): one statement that commits by itself, its event
    and count with it; past the run's cap the run stops there and nothing is claimed.
    Otherwise in the caller's transaction, or one of its own: its events and count at the
    end of its batch. Returns the nodes won."""
    now = timezone.now()
    lease, tools = now + timedelta(seconds=lease_seconds()), fast_tools() if tools is None else tools
    if alone:
        claim = sql.node_claim_alone(node_ids[0], me=me, lease=lease, now=now, tools=tools)
        if claim is None:
            return []
        node, run = claim.claimed.node, claim.claimed.run
        node_transitions_checked([(node.key, node.plan_version, N.READY, N.IN_PROGRESS, "claimed")])
        events_written(run.conversation_id, claim.events, now)
        if not claim.within_cap:
            with events_batched():
                cap_overrun(run.id)
            return []  # the run stopped there: the step's tool does not run
        return [claim.claimed]
    with events_batched():
        claimed = sql.nodes_claim(node_ids, me=me, lease=lease, now=now, tools=tools)
        for c in claimed:
            node_transitions_recorded(c.run, [(c.node.key, c.node.plan_version, N.READY, N.IN_PROGRESS, "claimed")])
    return claimed


def _take_over(node: Node, me: str) -> bool:
    """Compare-and-set on the handed-over lease: exactly one worker takes it."""
    taken = Node.objects.filter(id=node.id, status=N.IN_PROGRESS, lease_owner=node.lease_owner).update(
        lease_owner=me, lease_expires_at=timezone.now() + timedelta(seconds=lease_seconds()))
    if taken:
        node.lease_owner = me
    return bool(taken)


def _reclaim(node: Node, run: Run, me: str) -> bool:
    """Take over an expired lease. Compare-and-set on the old lease. A deferral ("not
    yet": the system of record still held the request's key) let its lease go to wait, so
    its takeover goes on with the same attempt; any other takeover (a crash, a lease its
    live worker outlived, a retry, a lost hand-over) is a new attempt."""
    waited = node.lease_owner.startswith(LET_GO_DEFERRED)
    cause = reclaim_cause(node.lease_owner)  # before the transaction: it may ask Redis
    with transaction.atomic():
        taken = Node.objects.filter(id=node.id, status=N.IN_PROGRESS, lease_expires_at=node.lease_expires_at).update(
            lease_owner=me, attempts=F("attempts") + (0 if waited else 1),
            lease_expires_at=timezone.now() + timedelta(seconds=lease_seconds()))
        if taken:
            event_append(conversation_id=run.conversation_id, run_id=run.id, type="node.reclaimed",
                         data={"node": node.key, "previous_owner": node.lease_owner, "owner": me, "cause": cause})
    if taken and cause == LEASE_EXPIRED:
        log.warning("step %s (node %s): its lease ran out while its worker %s may still be running it; "
                    "taken over by %s", node.key, node.id, node.lease_owner, me)
    return bool(taken)


# 3. The tool runs: inline when plain, else through the pipeline, its receipt checked.


def _inline_run(node, run, tool) -> dict | None:
    """Run the node's tool if it is plain for it (Tool.plain_for); None when it is not, or
    when it failed (the general path then runs it and records the failure)."""
    if not tool.plain_for(node):
        return None
    arguments = dict(node.arguments)
    ctx = ToolContext(tenant_id=run.tenant_id, run_id=run.id, node_id=node.id, node_key=node.key,
                      user_id=run.created_by_id, call_id=None, idempotency_key=idempotency_key_for(node),
                      approval_id=None, params=run.params)
    started = timezone.now()
    t0 = time.perf_counter()
    try:
        tool.input_validate(arguments)
        fault_point(f"{tool.name}.before")
        output = tool.fn(ctx, arguments)
        tool.output_validate(output)
        fault_point(f"{tool.name}.after")
    except Exception:
        return None
    latency = (time.perf_counter() - t0) * 1000
    summary = tool.summary(output) if tool.summary else words(gettext_noop("%(goal)s: done."),
                                                              goal=node.goal_meaning)
    return {"tool": tool, "arguments": arguments, "output": output, "idempotency_key": ctx.idempotency_key,
            "started": started, "latency_ms": latency, "summary": summary}


def _execute_claimed(node, run, tool, me, approval_id, arguments, consumed) -> int | None:
    try:
        if arguments is None:
            arguments, consumed = arguments_resolve(node, run)
        call, output = tool_call_execute(node=node, run=run, arguments=arguments, consumed=consumed,
                                         approval_id=approval_id)
    except ProvenanceBlocked as block:
        provenance_block_record(node=node, run=run, block=block)
        return hop.finish(run, [hop.Finished(node, N.FAILED, str(block))], me)
    except NeedsInput as question:
        kept = {"arguments": {**node.arguments, **question.keep}} if question.keep else {}
        return _stop(node, run, N.AWAITING_INPUT, me, reason=question.text, question=question.stored(),
                     lease_owner="", lease_expires_at=None, **kept,
                     event=("input.requested", {"node": node.key, "question": question.text,
                                                "words": question.question, "options": question.options}))
    except ToolBusy as busy:
        # The same request is still held by an earlier attempt (its lease in the system of
        # record has not run out): not a failure — wait, and the sweeper brings it back.
        return _defer(node, run, me, str(busy))
    except ToolBlocked as err:  # acting now would be wrong: stop with the reason, change nothing
        return hop.finish(run, [hop.Finished(node, N.BLOCKED, str(err))], me)
    except TRANSIENT_ERRORS as err:  # a timeout, a lost connection: again, later, up to a cap
        return _retry_later(node, run, tool, me, err, arguments)
    except DomainError as err:
        if err.code == IN_PROGRESS_CODE:
            return _defer(node, run, me, err.message)
        return _fail(node, run, tool, err.message, me, arguments, None)
    except Exception as err:  # the tool's own failure: recorded, never a hang
        log.exception("node %s failed", node.key)
        return _fail(node, run, tool, str(err) or err.__class__.__name__, me, arguments, None)

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
    if results and node.activity_id:  # one statement, a transaction by itself
        frame_record(activity_id=node.activity_id, kind="validation", name="acceptance",
                     status="error" if failed else "ok",
                     summary=_acceptance_summary(run, node, results),
                     payload={"criteria": [r.__dict__ for r in results], "receipt_ref": str(call.id)})
    if failed:
        # The reason is stored English (search, logs, the replan's why): a detail given as words reads in English.
        reason = "acceptance not met: " + "; ".join(
            f"{r.criterion} ({words_english(r.detail)})" if r.detail else r.criterion for r in failed)
        return _fail(node, run, tool, reason, me, arguments, output, result_ref=str(call.id),
                     acceptance_results=outcome)
    step = hop.finish(run, [hop.Finished(node, result_ref=str(call.id), acceptance_results=outcome)], me)
    if approval_id is not None and tool.experience is not None:
        learners_call(run.tenant_id)
    return step


def _acceptance_summary(run: Run, node: Node, results: list[Acceptance]) -> Stored:
    """Each criterion checked, met or not, in the reader's language (the blueprint's
    "acceptance_zh"), one after the other."""
    checked = [words(gettext_noop("%(criterion)s: met") if r.ok else gettext_noop("%(criterion)s: not met"),
                     criterion=criterion_words(run.blueprint, node.key, r.criterion)) for r in results]
    summary = checked[-1]
    for earlier in reversed(checked[:-1]):
        summary = words(gettext_noop("%(first)s; %(rest)s"), first=earlier, rest=summary)
    return summary


# 4. The outcome is recorded: completed or failed through hop.finish (the step finished, the run goes
# on); here, what is not a plain finish: planned around, stopped, deferred, retried.


# DESIGN.md §4: a system of record refuses a request whose idempotency key is still
# held by an earlier attempt (a worker that died mid-write holds it until its lease
# runs out). That is "not yet", never "failed": the step waits and tries again.
IN_PROGRESS_CODE = "idempotency_in_progress"


def _defer(node, run, me: str, why: str) -> None:
    """Keep the node claimed but let its lease run out soon; the sweeper then hands it
    to a worker again (the reclaim path), which replays or takes over the key."""
    with transaction.atomic():
        # A second: the sweeper's next pass brings it back (each pass tries once, so a key
        # held for a minute costs a dozen cheap refusals, not a stuck step).
        # The lease names why it was let go, so a takeover is not mistaken for a crash.
        deferred = Node.objects.filter(id=node.id, status=N.IN_PROGRESS, lease_owner=me).update(
            lease_owner=f"{LET_GO_DEFERRED}{me}"[:120], lease_expires_at=timezone.now() + timedelta(seconds=1))
        if deferred:
            event_append(conversation_id=run.conversation_id, run_id=run.id, type="node.deferred",
                         data={"node": node.key, "reason": why})
    return None


def transient_retry_cap() -> int:
    return int(os.environ.get("KEEL_TRANSIENT_RETRIES", "3"))


def transient_backoff(retry: int) -> float:
    """Seconds before retry number `retry` (1, 2, …): exponential, capped."""
    base = float(os.environ.get("KEEL_RETRY_BACKOFF_SECONDS", "0.5"))
    return min(base * 2 ** (retry - 1), 30.0)


def _retry_later(node, run, tool, me: str, err: Exception, arguments) -> None:
    """A transient failure: keep the node claimed with a lease that runs out after the
    backoff; the sweeper then hands it to a worker again (the reclaim path, which counts
    the attempt), under the same idempotency key. Past the cap it is a failure."""
    why = f"{err.__class__.__name__}: {err}".rstrip(": ")
    done = Node.objects.values_list("retries", flat=True).get(id=node.id)
    cap = transient_retry_cap()
    if done >= cap:
        return _fail(node, run, tool, f"gave up after {done + 1} attempts ({why})", me, arguments, None)
    delay = transient_backoff(done + 1)
    with transaction.atomic():
        scheduled = Node.objects.filter(id=node.id, status=N.IN_PROGRESS, lease_owner=me).update(
            retries=F("retries") + 1, lease_owner=f"{LET_GO_RETRY}{me}"[:120],
            lease_expires_at=timezone.now() + timedelta(seconds=delay))
        if scheduled:
            event_append(conversation_id=run.conversation_id, run_id=run.id, type="node.retry_scheduled",
                         data={"node": node.key, "retry": done + 1, "cap": cap, "delay_seconds": delay,
                               "error": why})
            if node.activity_id:
                frame_record(activity_id=node.activity_id, kind="error", name=f"retry {done + 1} of {cap}",
                             status="error", level="warning",
                             summary=words(gettext_noop("%(goal)s: a passing failure; trying again in "
                                                        "%(delay)ss (%(retry)s of %(cap)s)."),
                                           goal=node.goal_meaning, delay=f"{delay:g}", retry=done + 1, cap=cap),
                             payload={"error": why, "retry": done + 1, "cap": cap, "delay_seconds": delay})
    return None


# How many times one step may be replaced after failing, before the run fails.
FAILURE_REPLAN_CAP = 2


def _fail(node, run, tool, reason: str, me: str, arguments, output, **finish) -> hop.Step:
    """A step failed for good. If its tool says how to plan around the failure, replace it
    and its not-yet-run descendants (a local replan with its diff); else fail it."""
    replace, update = _failure_replan(node, run, tool, reason, arguments, output)
    if update is None:
        return hop.finish(run, [hop.Finished(node, N.FAILED, reason, **finish)], me)
    extra = {"acceptance_results": finish["acceptance_results"]} if finish.get("acceptance_results") else {}

    def write() -> bool:
        with events_batched():
            run_lock(run)  # first, as a hop takes it (see _stop)
            if not node_transition(node, N.FAILED, expected=N.IN_PROGRESS, reason=reason, worker=me,
                                   result_ref=finish.get("result_ref", ""), lease_owner="", lease_expires_at=None,
                                   **extra):
                return False
            if node.activity_id:
                activity_close(activity_id=node.activity_id, status=N.FAILED)
            plan_replan(run=run, replace=replace,
                        reason=words(gettext_noop("step %(step)s failed: %(reason)s"), step=node.key,
                                     reason=reason[:500]),
                        params_update=update, trigger={"kind": "failure", "node": node.key, "reason": reason[:500]})
            return True

    if not hop.recorded(write, node, N.FAILED):
        hop.not_recorded(node, N.FAILED, me)
    return None


def _failure_replan(node, run, tool, reason, arguments, output) -> tuple[list[str], dict | None]:
    """(nodes to replace, params update) — or ([], None): no local replan."""
    if tool.failure_replan is None or run.cancel_requested:
        return [], None
    if Node.objects.filter(run_id=run.id, key=node.key).count() > FAILURE_REPLAN_CAP:
        return [], None
    active = {n.key: n for n in active_nodes(run.id).only("key", "status", "depends_on")}
    replace, grew = [node.key], True
    while grew:  # the failed step and everything downstream of it
        grew = False
        for n in active.values():
            if n.key not in replace and set(n.depends_on) & set(replace):
                replace.append(n.key)
                grew = True
    if any(active[k].status not in (N.PENDING, N.READY) for k in replace if k != node.key):
        return [], None  # a descendant already ran: only a person's retry or the undo may follow
    try:
        update = tool.failure_replan(dict(run.params), dict(arguments or node.arguments), output, reason)
    except Exception:
        log.exception("failure replan of %s", node.key)
        return [], None
    return replace, update


def _stop(node, run, to: str, me: str, *, expected: str = N.IN_PROGRESS, reason: str, settle_reason: str = "",
          event: tuple[str, dict] | None = None, **fields) -> None:
    """A step stops outside a hop (it asks for input; a ready step is refused): its
    transition, `event` and the run settled, in one transaction that takes the run's lock
    first — the order a hop takes its locks (run, node, conversation). Taken after the
    step's event, the lock waited for a sibling's completion that held it and waited in
    turn for the conversation's: PostgreSQL broke the deadlock by rolling one of the two
    back, and that step's outcome was lost. Under the lock the settling also
    sees a sibling's completion that committed first."""
    def write() -> bool:
        with events_batched():
            run_lock(run)
            if not node_transition(node, to, expected=expected, reason=reason, worker=me, **fields):
                return False
            if event is not None:
                event_append(conversation_id=run.conversation_id, run_id=run.id, type=event[0], data=event[1])
            run_settle(run, reason=settle_reason)
            return True

    if not hop.recorded(write, node, to):
        hop.not_recorded(node, to, me)
    return None
