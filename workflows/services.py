"""Writes of the workflow engine: start a run, promote ready nodes, settle the
run's status, dispatch after commit, replan locally, answer a question.
The Scheduler (DESIGN.md §2) is `nodes_promote` + `ready_dispatch_on_commit`."""
from __future__ import annotations

import logging
import os
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from config.api import Conflict, DomainError, Forbidden
from config.ids import new_id
from config.words import Stored, is_words, localised, words, words_english
from tenants.models import Membership
from timeline.models import Activity
from timeline.services import (
    activity_close,
    activity_open,
    conversation_create,
    event_append,
    events_batched,
    frame_record,
)

from .blueprints import (
    Door,
    blueprint_get,
    blueprint_nodes,
    blueprint_start_check,
    goal_words,
    params_validate,
)
from .dispatch import dispatch_is_held, nodes_dispatch_on_commit, run_plan_send_on_commit
from . import sql
from .gate import gate
from .models import RUN_TERMINAL, Control, Node, NodeStatus, Plan, Run, RunStatus, ToolCall
from .selectors import run_act_allowed, run_get_for
from .tools import TOOLS, Replacement, compensation_tools, is_compensation
from .transitions import node_transition, node_transitions_recorded, run_lock, run_transition

log = logging.getLogger(__name__)
N, R = NodeStatus, RunStatus
ACTIVE = (N.READY, N.IN_PROGRESS)


RUN_SUMMARIES = {
    R.COMPLETED: gettext_noop("The setup is complete."), R.FAILED: gettext_noop("The run failed."),
    R.BLOCKED: gettext_noop("The run is blocked."), R.ROLLED_BACK: gettext_noop("This run's changes were undone."),
    R.STOPPED: gettext_noop("The run was stopped."), R.CANCELLED: gettext_noop("The run was cancelled."),
}
INITIAL_PLAN = gettext_noop("initial plan")


def reason_text(reason: Stored) -> str:
    """A reason for a text column (a status reason, a plan's reason): words in English."""
    return words_english(reason) if is_words(reason) else (reason or "")


def lease_seconds() -> float:
    return float(os.environ.get("KEEL_LEASE_SECONDS", getattr(settings, "KEEL_LEASE_SECONDS", 30)))


@events_batched()
def run_start(*, membership: Membership, blueprint: str, params: dict[str, Any],
              conversation_id: int | None = None, caps: dict[str, int] | None = None,
              door: str = Door.RUNS) -> Run:
    """Plan a run from a blueprint (plan v1) and dispatch its first ready nodes after commit."""
    run = run_create(membership=membership, blueprint=blueprint, params=params, conversation_id=conversation_id,
                     caps=caps, door=door)
    _run_plan(run)
    return run


@events_batched()
def run_create(*, membership: Membership, blueprint: str, params: dict[str, Any],
               conversation_id: int | None = None, caps: dict[str, int] | None = None,
               door: str = Door.RUNS) -> Run:
    """The run's first records (the run and its Activity), planned later by `run_plan`:
    a chat message answers once these are committed and a worker plans.

    `door` says where the start comes from; the blueprint's declaration decides (403) before
    anything is written. A caller that names none is held to runs/'s rule, the strictest:
    a domain that forgets its door can start no more than any member could from the API."""
    blueprint_start_check(blueprint, role=membership.role, door=door)
    params = params_validate(blueprint, params)
    spec = blueprint_get(blueprint)
    named = (params.get(spec["titled_by"]) if "titled_by" in spec else None) or ""
    if conversation_id is None:
        title = named or spec["title"]
        conversation = conversation_create(tenant_id=membership.tenant_id, user_id=membership.user_id, title=title)
        conversation_id = conversation.id
    # Every node passes through at most ~4 transitions on a good day; the cap stops a
    # run that loops (replans, retries) long before it can run away.
    caps = {"transition_cap": 10 * len(blueprint_nodes(blueprint, params)) + 40, **(caps or {})}
    # The run and its activity point at each other: both ids are chosen here and the
    # foreign keys are checked at commit, which spares an UPDATE of the new run.
    activity_id = new_id()
    run = Run.objects.create(tenant_id=membership.tenant_id, conversation_id=conversation_id,
                             created_by_id=membership.user_id, blueprint=blueprint, params=params,
                             control=Control.EXECUTOR, activity_id=activity_id, **caps)
    title = spec["title"]
    activity = activity_open(conversation_id=conversation_id, kind=Activity.Kind.RUN, run_id=run.id,
                             title=f"{title}: {named}".strip(": "),
                             summary=words(gettext_noop("Started %(what)s."),
                                           what=localised(title.lower(), spec.get("title_zh"))),
                             id=activity_id)
    run.activity = activity
    return run


@events_batched()
def run_plan(run_id: int) -> bool:
    """Plan v1 of a run made by `run_create` and dispatch its first ready nodes after commit.
    Once: a redelivery, or a run already planned or cancelled, changes nothing (False)."""
    run = Run.objects.select_for_update().filter(id=run_id).first()
    if run is None or run.status in RUN_TERMINAL or Plan.objects.filter(run_id=run_id).exists():
        return False
    _run_plan(run)
    return True


def run_plan_on_commit(run: Run) -> None:
    """Plan a run made by `run_create` on a worker once it is committed. In place, in the
    same transaction, while dispatch is held (a replay drives its sandbox run in process)
    and in the embedded mode (one process: a worker thread would only add a hop)."""
    if dispatch_is_held() or settings.EMBEDDED:
        _run_plan(run)
    else:
        run_plan_send_on_commit(run.id)


def _run_plan(run: Run) -> None:
    specs = blueprint_nodes(run.blueprint, run.params)
    _plan_write(run, version=1, reason=words(INITIAL_PLAN), specs=specs, activity_id=run.activity_id)
    event_append(conversation_id=run.conversation_id, run_id=run.id, type="run.started",
                 data={"blueprint": run.blueprint, "plan_version": 1, "nodes": [s["key"] for s in specs]})
    ready_dispatch_on_commit(nodes_promote(run))


def _plan_write(run: Run, *, version: int, reason: Stored, specs: list[dict[str, Any]], activity_id: int,
                diff: dict[str, Any] | None = None) -> None:
    """`reason` as words (or prose): the plan's `reason` column keeps its English, the diff
    and the frame keep its meaning."""
    Node.objects.bulk_create([
        Node(run=run, plan_version=version, key=s["key"], position=s["position"], goal=s["goal"],
             goal_words=goal_words(s), tool=s["tool"], depends_on=s["depends_on"],
             run_when=s.get("run_when", "completed"), arguments=s["arguments"], acceptance=s.get("acceptance", []))
        for s in specs
    ])
    graph = [{"key": s["key"], "tool": s["tool"], "depends_on": s["depends_on"],
              "run_when": s.get("run_when", "completed")} for s in specs]
    Plan.objects.create(run=run, version=version, reason=reason_text(reason)[:500], graph=graph, diff=diff)
    frame_record(activity_id=activity_id, kind="plan", name=f"plan v{version}",
                 summary=words(gettext_noop("Plan v%(version)s: %(steps)s steps (%(reason)s)."),
                               version=version, steps=len(specs), reason=reason),
                 payload={"version": version, "reason": reason, "graph": graph, "diff": diff})


def active_nodes(run_id: int):
    return Node.objects.filter(run_id=run_id, retired_in__isnull=True)


def nodes_promote(run: Run) -> list[sql.Promoted]:
    """pending → ready for every node whose dependencies allow it. Returns the nodes made
    ready (their id, key, tool, plan version and acceptance criteria, at least)."""
    if run.status in RUN_TERMINAL:
        return []
    promoted = sql.successors_promote(run.id, None, now=timezone.now()).promoted
    node_transitions_recorded(run, [(p.key, p.plan_version, N.PENDING, N.READY, "dependencies met")
                                    for p in promoted])
    return promoted


def ready_dispatch_on_commit(ready: list[Node] | list[sql.Promoted]) -> None:
    """Send nodes just made ready to the workers after commit, each message saying
    whether its node is plain (Tool.plain_for: read, then claimed as it completes)."""
    plain = {node.id for node in ready if (tool := TOOLS.get(node.tool)) is not None and tool.plain_for(node)}
    # (A tool no longer registered is not plain: its worker says why it cannot run it.)
    nodes_dispatch_on_commit([node.id for node in ready], plain=plain)


def run_settle(run: Run, *, reason: str = "") -> None:
    """Derive the run's status from its active nodes and move it there."""
    run.refresh_from_db(fields=["status", "status_reason", "control", "cancel_requested"])
    if run.status in RUN_TERMINAL and not (run.cancel_requested and run.status in (R.FAILED, R.BLOCKED)):
        return
    # Aggregates, not rows: a run may have thousands of nodes.
    states = set(active_nodes(run.id).order_by().values_list("status", flat=True).distinct())
    compensations = active_nodes(run.id).filter(tool__in=list(compensation_tools()))
    if states & set(ACTIVE):
        target, control = R.RUNNING, Control.EXECUTOR
    elif (blocked_compensation := compensations.filter(status=N.BLOCKED).first()) is not None:
        # Undoing would have deleted someone else's work: stop, say why, delete nothing.
        target, control = R.BLOCKED, Control.ORCHESTRATOR
        reason = reason or f"the undo stopped: {blocked_compensation.status_reason}"
    elif run.cancel_requested:
        target, control = R.CANCELLED, Control.ORCHESTRATOR
        reason = reason or (f"cancelled by {run.cancel_requested.get('by')}: {run.cancel_requested.get('reason')}"
                            .rstrip(": "))
    elif N.AWAITING_APPROVAL in states:
        target, control = R.AWAITING_APPROVAL, Control.APPROVAL
    elif N.AWAITING_INPUT in states:
        target, control = R.AWAITING_INPUT, Control.USER
    elif compensations.filter(status=N.COMPLETED).exists():
        failed = active_nodes(run.id).filter(status=N.FAILED).exclude(tool__in=list(compensation_tools())).first()
        replacement = _undo_replan(run, failed) if failed is not None else None
        if replacement is not None and replacement.params_update is not None:
            _replan_after_undo(run, failed, replacement)  # settles the run itself
            return
        target, control = R.ROLLED_BACK, Control.ORCHESTRATOR
        reason = reason or (f"step {failed.key} failed ({failed.status_reason}); this run's changes were undone"
                            if failed else "this run's changes were undone")
        if replacement is not None:
            reason = words(gettext_noop("%(reason)s; %(why)s"), reason=reason, why=replacement.why)
    elif N.FAILED in states:
        target, control = R.FAILED, Control.ORCHESTRATOR
    elif N.BLOCKED in states:
        target, control = R.BLOCKED, Control.ORCHESTRATOR
    else:
        target, control = R.COMPLETED, Control.ORCHESTRATOR
    if target == run.status:
        return
    if target == R.FAILED and not reason:
        failed = active_nodes(run.id).filter(status=N.FAILED).first()
        reason = f"step {failed.key} failed: {failed.status_reason}" if failed else "a step failed"
    if target == R.BLOCKED and not reason:
        blocked = active_nodes(run.id).filter(status=N.BLOCKED).first()
        reason = f"step {blocked.key} is blocked: {blocked.status_reason}" if blocked else "a step is blocked"
    run_transition(run, target, reason=reason if target != R.RUNNING else "", control=control)
    if target in RUN_TERMINAL and run.activity_id:
        summary = words(RUN_SUMMARIES[target])
        if reason and target != R.COMPLETED:
            summary = words(gettext_noop("%(summary)s (%(reason)s)"), summary=summary, reason=reason)
        activity_close(activity_id=run.activity_id, status=target, summary=summary)


# How many times one step may be tried again after its undo, before the run stays rolled back.
UNDO_REPLAN_CAP = 2


def _undo_replan(run: Run, failed: Node) -> Replacement | None:
    """Ask the failed step's domain what to try now that the run's undo has committed
    (e.g. the next-best template after an import that could not be verified), or None."""
    tool = TOOLS.get(failed.tool)
    if tool is None or tool.undo_replan is None or run.cancel_requested:
        return None
    if failed.key not in blueprint_get(run.blueprint).get("replan_after_undo", []):
        return None
    if Node.objects.filter(run_id=run.id, key=failed.key).count() > UNDO_REPLAN_CAP:
        return None
    output = (ToolCall.objects.filter(id=int(failed.result_ref), run_id=run.id).values_list("result", flat=True)
              .first() if failed.result_ref.isdigit() else None)
    not_met = [r["criterion"] for r in failed.acceptance_results or [] if not r.get("met")]
    try:
        return tool.undo_replan(run.tenant_id, run.id, dict(run.params), output, not_met)
    except Exception:
        log.exception("undo replan of %s", failed.key)
        return None


def _replan_after_undo(run: Run, failed: Node, replacement: Replacement) -> int:
    """Replace the failed step, what the undo took back and what never ran (the blueprint's
    `replan_after_undo`), in the transaction that completes the undo: the run never ends
    in between, so what it reserved (a group's name) stays its own."""
    undo = active_nodes(run.id).filter(tool__in=list(compensation_tools()), status=N.COMPLETED).first()
    active = set(active_nodes(run.id).values_list("key", flat=True))
    replace = [k for k in blueprint_get(run.blueprint)["replan_after_undo"] if k in active]
    return plan_replan(run=run, replace=replace, reason=replacement.why,
                       params_update=replacement.params_update,
                       trigger={"kind": "failure_after_undo", "node": failed.key,
                                "reason": failed.status_reason[:500],
                                "undo": {"node": undo.key, "receipt_ref": undo.result_ref} if undo else None})


@transaction.atomic
def plan_replan(*, run: Run, replace: list[str], reason: Stored, params_update: dict[str, Any] | None = None,
                trigger: dict[str, Any] | None = None) -> int:
    """Local replan: a new plan version replaces only the named nodes; completed
    nodes outside them keep their receipts and coordinates. The version records its
    diff against the previous one: kept, removed (with the status they ended in),
    added, why (words, or prose: stored as it comes), and what triggered it."""
    if not is_words(reason):
        reason = (reason or "")[:500]
    run = Run.objects.select_for_update(no_key=True).get(id=run.id)
    version = run.plan_version + 1
    params = {**run.params, **(params_update or {})}
    specs = [s for s in blueprint_nodes(run.blueprint, params) if s["key"] in replace]
    before = list(active_nodes(run.id).order_by("position").values_list("key", "status"))
    active_nodes(run.id).filter(key__in=replace).update(retired_in=version)
    diff = {"from_version": run.plan_version, "why": reason, "trigger": trigger or {"kind": "replan"},
            "kept": [{"key": k, "status": st} for k, st in before if k not in replace],
            "removed": [{"key": k, "status": st} for k, st in before if k in replace],
            "added": [s["key"] for s in specs],
            "params_changed": sorted((params_update or {}).keys()),
            # what they were: a replay (or a person) can go back to the params the run began with
            "params_before": {k: run.params[k] for k in sorted(params_update or {}) if k in run.params}}
    Run.objects.filter(id=run.id).update(plan_version=version, params=params)
    run.plan_version, run.params = version, params
    _plan_write(run, version=version, reason=reason, specs=specs, activity_id=run.activity_id, diff=diff)
    event_append(conversation_id=run.conversation_id, run_id=run.id, type="plan.replanned",
                 data={"plan_version": version, "replaced": replace, "reason": reason,
                       "kept": [k["key"] for k in diff["kept"]], "added": diff["added"]})
    if run.status in (R.BLOCKED, R.FAILED):
        run_transition(run, R.RUNNING, reason=words(gettext_noop("replanned: %(reason)s"), reason=reason),
                       control=Control.EXECUTOR)
    ready_dispatch_on_commit(nodes_promote(run))
    run_settle(run)
    return version


@transaction.atomic
def node_input_answer(*, membership: Membership, run_id: int, answer: str) -> Run:
    """The user's answer resumes the run at the node that was awaiting input."""
    run = run_get_for(membership, run_id)
    _act_check(membership, run, "answer")
    run_lock(run)  # before the node's, as every writer takes them (transitions.run_lock): a cancel holds it
    node = active_nodes(run.id).filter(status=N.AWAITING_INPUT).first()
    if node is None:
        raise Conflict(gettext("This run is not waiting for an answer."), code="not_awaiting_input")
    answer = (answer or "").strip()
    if not answer:
        raise DomainError(gettext("The answer is empty."))
    arguments = {**node.arguments, "answer": answer}
    if not node_transition(node, N.READY, expected=N.AWAITING_INPUT, reason="the user answered",
                           arguments=arguments, question=None, dispatched_at=timezone.now()):
        raise Conflict(gettext("The question was answered already."), code="already_answered")
    event_append(conversation_id=run.conversation_id, run_id=run.id, type="input.answered",
                 data={"node": node.key})
    nodes_dispatch_on_commit([node.id])
    run_settle(run)
    return run


# --- Run control: cancel and retry, by a person, with a reason ---------------------------------

# The refusal of each act, as words (config.words): the chat says it to the person in their language.
ACT_REFUSALS = {
    "answer": gettext_noop("Only %(starter)s, who started this run, may answer its question."),
    "change": gettext_noop("Only %(starter)s, who started this run, may change it."),
    "cancel": gettext_noop("Only %(starter)s, who started this run, an approver or a tenant admin may cancel it."),
    "retry": gettext_noop("Only %(starter)s, who started this run, an approver or a tenant admin may retry it."),
}


def _act_check(membership: Membership, run: Run, act: str) -> None:
    """403 unless the person may do `act` to the run (selectors.run_act_allowed)."""
    if not run_act_allowed(membership, run, act):
        starter = run.created_by.get_full_name() or run.created_by.username
        raise Forbidden(words(ACT_REFUSALS[act], starter=starter), code="not_allowed", extra={"act": act})


def _effects_done(run: Run) -> bool:
    """Did any step of the run reach the system of record with a write it may have to undo?"""
    writers = [t.name for t in TOOLS.values() if t.side_effects and not t.read_only and not is_compensation(t.name)]
    return ToolCall.objects.filter(run_id=run.id, tool__in=writers).exists()


@events_batched()
def run_cancel(*, membership: Membership, run_id: int, reason: str) -> Run:
    """Stop the run: withdraw its open approvals, block its open steps, undo what it wrote
    (its compensation, by its own receipts), then end it `cancelled`. The run's lock first
    and the events at the end, as every writer takes them (transitions.run_lock): its event
    written first, the cancel held the conversation while it waited for a step that a
    worker taking over its lease held, which waited for the conversation in turn."""
    reason = (reason or "").strip()[:500]
    run = run_get_for(membership, run_id)
    _act_check(membership, run, "cancel")
    # The run row's lock: a concurrent retry, cancel or settle waits for us.
    run = Run.objects.select_for_update(no_key=True).get(id=run.id)
    if run.status not in (R.RUNNING, R.AWAITING_APPROVAL, R.AWAITING_INPUT, R.FAILED, R.BLOCKED):
        raise Conflict(gettext("This run has already ended (%(status)s).") % {"status": run.status},
                       code="run_finished",
                       extra={"status": run.status})
    if run.cancel_requested:
        raise Conflict(gettext("This run is being cancelled already."), code="already_cancelling")
    who = membership.user.username
    now = timezone.now()
    Run.objects.filter(id=run.id, cancel_requested__isnull=True).update(
        cancel_requested={"by": who, "reason": reason, "at": now.isoformat()})
    run.cancel_requested = {"by": who, "reason": reason}
    event_append(conversation_id=run.conversation_id, run_id=run.id, type="run.cancel_requested",
                 data={"by": who, "role": membership.role, "reason": reason})
    gate().withdraw(run=run, reason=f"the run was cancelled by {who}")
    compensations = set(compensation_tools())
    for node in active_nodes(run.id).exclude(tool__in=list(compensations)).exclude(
            status__in=[N.COMPLETED, N.FAILED, N.BLOCKED]):
        _node_cancel(node, run, who, reason, now)
    if _effects_done(run):
        for node in active_nodes(run.id).filter(tool__in=list(compensations),
                                                status__in=[N.PENDING, N.FAILED, N.BLOCKED]):
            node.run = run
            # An undo that failed or stopped before runs again as a new logical attempt.
            again = {} if node.status == N.PENDING else {"attempt": node.attempt + 1, "finished_at": None}
            if node_transition(node, N.READY, reason=f"cancelled by {who}: undoing this run's changes",
                               dispatched_at=now, **again):
                nodes_dispatch_on_commit([node.id])
    run_settle(run)
    return run


REVISABLE = (R.AWAITING_APPROVAL, R.AWAITING_INPUT, R.FAILED, R.BLOCKED)


@events_batched()
def run_revise(*, membership: Membership, run_id: int, params_update: dict[str, Any], replace: list[str],
               reason: Stored) -> Run:
    """A change a person says while the run waits ("call it X", "use the other template"): the
    run's params take the change and a new plan version replaces the named steps and every
    step after them (the plan diff says why), the pending card is withdrawn (its approver sees
    it go, live) and the run goes on from the first replaced step, so only what the change
    needs is asked again. Refused, with nothing changed, when the run is not waiting (a step
    may be writing: say it again once it waits), has ended (propose a follow-up run instead),
    or a replaced step already wrote to a system of record (cancel the run instead). The run's
    lock first, as every writer takes it (transitions.run_lock)."""
    run = run_get_for(membership, run_id)
    _act_check(membership, run, "change")
    run = Run.objects.select_for_update(no_key=True).get(id=run.id)
    if run.status in RUN_TERMINAL - {R.FAILED, R.BLOCKED} or run.cancel_requested:
        raise Conflict(gettext("This run has already ended (%(status)s); start a new one for the change.")
                       % {"status": run.status}, code="run_finished", extra={"status": run.status})
    if run.status not in REVISABLE:
        raise Conflict(gettext("This run is working on a step right now; say the change again once it waits."),
                       code="busy", extra={"status": run.status})
    nodes = list(active_nodes(run.id))
    known = {n.key for n in nodes}
    unknown = sorted(set(replace) - known)
    if unknown or not replace:
        raise DomainError(gettext("This run has no step %(keys)s to change.") % {"keys": ", ".join(unknown) or "—"},
                          code="unknown_step")
    affected = set(replace)
    while True:  # every step after a replaced one decides again on what the change gives it
        more = {n.key for n in nodes if n.key not in affected and affected & set(n.depends_on)}
        if not more:
            break
        affected |= more
    writers = [t.name for t in TOOLS.values() if t.side_effects and not t.read_only and not is_compensation(t.name)]
    # A writer's call that began may have written (as _effects_done reads it for a cancel).
    if ToolCall.objects.filter(run_id=run.id, node__key__in=affected, node__retired_in__isnull=True,
                               tool__in=writers).exists():
        raise Conflict(gettext("This run has already written what the change would alter; cancel it and start "
                               "again instead."), code="already_written")
    who = membership.user.username
    gate().withdraw(run=run, reason=f"changed by {who}")
    run_transition(run, R.RUNNING, reason=words(gettext_noop("changed by %(who)s: %(reason)s"), who=who,
                                                 reason=reason), control=Control.EXECUTOR)
    ordered = [n.key for n in sorted(nodes, key=lambda n: n.position) if n.key in affected]
    plan_replan(run=run, replace=ordered, reason=reason, params_update=params_update,
                trigger={"kind": "change", "by": who})
    run.refresh_from_db()
    return run


def _node_cancel(node: Node, run: Run, who: str, reason: str, now) -> None:
    """Block one open step. A step whose tool is writing right now (a live lease) cannot be
    stopped half-way: the cancel is refused and the person tries again in a moment."""
    for _ in range(3):  # a worker or an approver may move the node under us: read again
        node.run = run
        tool = TOOLS.get(node.tool)
        if node.status == N.IN_PROGRESS and tool is not None and tool.side_effects and not tool.read_only and \
                node.lease_expires_at and node.lease_expires_at > now:
            raise Conflict(gettext("Step “%(goal)s” is writing to the system of record right now; cancel again in a moment.")
                           % {"goal": node.goal},
                           code="step_in_progress")
        if node_transition(node, N.BLOCKED, reason=f"cancelled by {who}" + (f": {reason}" if reason else ""),
                           lease_owner="", lease_expires_at=None):
            return
        node.refresh_from_db()
        if node.status in (N.COMPLETED, N.FAILED, N.BLOCKED):
            return
    raise Conflict(gettext("The run is changing too fast to cancel; try again."), code="busy")


@transaction.atomic
def run_retry(*, membership: Membership, run_id: int, reason: str) -> Run:
    """Run the failed or blocked step again as a new logical attempt: a new idempotency
    key, so the system of record does a new request instead of replaying the failure."""
    reason = (reason or "").strip()[:500]
    run = run_get_for(membership, run_id)
    _act_check(membership, run, "retry")
    run = Run.objects.select_for_update(no_key=True).get(id=run.id)
    if run.status not in (R.FAILED, R.BLOCKED):
        raise Conflict(gettext("Only a failed or blocked run can be retried; this one is %(status)s.")
                       % {"status": run.status},
                       code="not_retryable", extra={"status": run.status})
    node = active_nodes(run.id).filter(status__in=[N.FAILED, N.BLOCKED]).order_by("position").first()
    if node is None:
        raise Conflict(gettext("This run has no failed or blocked step to retry."), code="not_retryable")
    who = membership.user.username
    node.run = run
    if not node_transition(node, N.READY, reason=f"retried by {who}" + (f": {reason}" if reason else ""),
                           attempt=node.attempt + 1, question=None, dispatched_at=timezone.now(),
                           finished_at=None):
        raise Conflict(gettext("The step changed while you retried it; look again."), code="busy")
    event_append(conversation_id=run.conversation_id, run_id=run.id, type="run.retried",
                 data={"by": who, "role": membership.role, "reason": reason, "node": node.key,
                       "attempt": node.attempt})
    run_transition(run, R.RUNNING, reason=f"retried by {who}: {node.key}", control=Control.EXECUTOR)
    nodes_dispatch_on_commit([node.id])
    return run
