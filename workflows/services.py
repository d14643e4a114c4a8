"""Writes of the workflow engine: start a run, promote ready nodes, settle the
run's status, dispatch after commit, replan locally, answer a question.
The Scheduler of seed 001 is `nodes_promote` + `nodes_dispatch_on_commit`."""
from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from config.api import Conflict, DomainError
from config.ids import new_id
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

from .blueprints import BLUEPRINTS, blueprint_get, blueprint_nodes, params_validate
from .dispatch import nodes_dispatch_on_commit
from .models import RUN_TERMINAL, Control, Node, NodeStatus, Plan, Run, RunStatus
from .selectors import run_get_for
from .tools import compensation_tools
from . import sql
from .transitions import node_transition, node_transitions_recorded, run_transition

N, R = NodeStatus, RunStatus
ACTIVE = (N.READY, N.IN_PROGRESS)


RUN_SUMMARIES = {
    R.COMPLETED: "The setup is complete.", R.FAILED: "The run failed.", R.BLOCKED: "The run is blocked.",
    R.ROLLED_BACK: "The change was rolled back to the snapshot.", R.STOPPED: "The run was stopped.",
}


def lease_seconds() -> float:
    return float(os.environ.get("KEEL_LEASE_SECONDS", getattr(settings, "KEEL_LEASE_SECONDS", 30)))


@events_batched()
def run_start(*, membership: Membership, blueprint: str, params: dict[str, Any],
              conversation_id: int | None = None, caps: dict[str, int] | None = None) -> Run:
    """Plan a run from a blueprint (plan v1) and dispatch its first ready nodes after commit."""
    params = params_validate(blueprint, params)
    if conversation_id is None:
        title = params.get("group_name") or BLUEPRINTS[blueprint]["title"]
        conversation = conversation_create(tenant_id=membership.tenant_id, user_id=membership.user_id, title=title)
        conversation_id = conversation.id
    specs = blueprint_nodes(blueprint, params)
    # Every node passes through at most ~4 transitions on a good day; the cap stops a
    # run that loops (replans, retries) long before it can run away.
    caps = {"transition_cap": 10 * len(specs) + 40, **(caps or {})}
    # The run and its activity point at each other: both ids are chosen here and the
    # foreign keys are checked at commit, which spares an UPDATE of the new run.
    activity_id = new_id()
    run = Run.objects.create(tenant_id=membership.tenant_id, conversation_id=conversation_id,
                             created_by_id=membership.user_id, blueprint=blueprint, params=params,
                             control=Control.EXECUTOR, activity_id=activity_id, **caps)
    title = blueprint_get(blueprint)["title"]
    activity = activity_open(conversation_id=conversation_id, kind=Activity.Kind.RUN, run_id=run.id,
                             title=f"{title}: {params.get('group_name', '')}".strip(": "),
                             summary=f"Started {title.lower()}.", id=activity_id)
    run.activity = activity
    _plan_write(run, version=1, reason="initial plan", specs=specs, activity_id=activity.id)
    event_append(conversation_id=conversation_id, run_id=run.id, type="run.started",
                 data={"blueprint": blueprint, "plan_version": 1, "nodes": [s["key"] for s in specs]})
    nodes_dispatch_on_commit(nodes_promote(run))
    return run


def _plan_write(run: Run, *, version: int, reason: str, specs: list[dict[str, Any]], activity_id: int) -> None:
    Node.objects.bulk_create([
        Node(run=run, plan_version=version, key=s["key"], position=s["position"], goal=s["goal"], tool=s["tool"],
             depends_on=s["depends_on"], run_when=s.get("run_when", "completed"), arguments=s["arguments"],
             acceptance=s.get("acceptance", []))
        for s in specs
    ])
    graph = [{"key": s["key"], "tool": s["tool"], "depends_on": s["depends_on"],
              "run_when": s.get("run_when", "completed")} for s in specs]
    Plan.objects.create(run=run, version=version, reason=reason, graph=graph)
    frame_record(activity_id=activity_id, kind="plan", name=f"plan v{version}",
                 summary=f"Plan v{version}: {len(specs)} steps ({reason}).",
                 payload={"version": version, "reason": reason, "graph": graph})


def active_nodes(run_id: int):
    return Node.objects.filter(run_id=run_id, retired_in__isnull=True)


def nodes_promote(run: Run) -> list[int]:
    """pending → ready for every node whose dependencies allow it. Returns the ready ids."""
    if run.status in RUN_TERMINAL:
        return []
    if sql.enabled():  # one statement instead of two queries and two more per node
        promoted, _ = sql.successors_promote(run.id, None, now=timezone.now())
        node_transitions_recorded(run, [(p.key, p.plan_version, N.PENDING, N.READY, "dependencies met")
                                        for p in promoted])
        return [p.id for p in promoted]
    pending = list(active_nodes(run.id).filter(status=N.PENDING))
    if not pending:
        return []
    needed = {key for node in pending for key in node.depends_on}
    status_of = dict(active_nodes(run.id).filter(key__in=needed).values_list("key", "status"))
    ready = []
    for node in pending:
        node.run = run  # spares node_transition a query
        deps = [status_of.get(k) for k in node.depends_on]
        if node.run_when == "failed":
            ok = any(s == N.FAILED for s in deps)
        else:
            ok = all(s == N.COMPLETED for s in deps)
        if ok and node_transition(node, N.READY, reason="dependencies met", dispatched_at=timezone.now()):
            ready.append(node.id)
    return ready


def run_settle(run: Run, *, reason: str = "") -> None:
    """Derive the run's status from its active nodes and move it there."""
    run.refresh_from_db(fields=["status", "status_reason", "control"])
    if run.status in RUN_TERMINAL:
        return
    # Aggregates, not rows: a run may have thousands of nodes.
    states = set(active_nodes(run.id).order_by().values_list("status", flat=True).distinct())
    if states & set(ACTIVE):
        target, control = R.RUNNING, Control.EXECUTOR
    elif N.AWAITING_APPROVAL in states:
        target, control = R.AWAITING_APPROVAL, Control.APPROVAL
    elif N.AWAITING_INPUT in states:
        target, control = R.AWAITING_INPUT, Control.USER
    elif active_nodes(run.id).filter(tool__in=list(compensation_tools()), status=N.COMPLETED).exists():
        target, control = R.ROLLED_BACK, Control.ORCHESTRATOR
        reason = reason or "the import failed; the snapshot taken before it was restored"
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
        activity_close(activity_id=run.activity_id, status=target,
                       summary=f"{RUN_SUMMARIES[target]}" + (f" ({reason})" if reason and target != R.COMPLETED else ""))


@transaction.atomic
def plan_replan(*, run: Run, replace: list[str], reason: str, params_update: dict[str, Any] | None = None) -> int:
    """Local replan: a new plan version replaces only the named nodes; completed
    nodes outside them keep their receipts and coordinates."""
    run = Run.objects.select_for_update(no_key=True).get(id=run.id)
    version = run.plan_version + 1
    params = {**run.params, **(params_update or {})}
    specs = [s for s in blueprint_nodes(run.blueprint, params) if s["key"] in replace]
    active_nodes(run.id).filter(key__in=replace).update(retired_in=version)
    Run.objects.filter(id=run.id).update(plan_version=version, params=params)
    run.plan_version, run.params = version, params
    _plan_write(run, version=version, reason=reason, specs=specs, activity_id=run.activity_id)
    event_append(conversation_id=run.conversation_id, run_id=run.id, type="plan.replanned",
                 data={"plan_version": version, "replaced": replace, "reason": reason})
    if run.status == R.BLOCKED:
        run_transition(run, R.RUNNING, reason=f"replanned: {reason}", control=Control.EXECUTOR)
    nodes_dispatch_on_commit(nodes_promote(run))
    run_settle(run)
    return version


@transaction.atomic
def node_input_answer(*, membership: Membership, run_id: int, answer: str) -> Run:
    """The user's answer resumes the run at the node that was awaiting input."""
    run = run_get_for(membership, run_id)
    node = active_nodes(run.id).filter(status=N.AWAITING_INPUT).first()
    if node is None:
        raise Conflict("This run is not waiting for an answer.", code="not_awaiting_input")
    answer = (answer or "").strip()
    if not answer:
        raise DomainError("The answer is empty.")
    arguments = {**node.arguments, "answer": answer}
    if not node_transition(node, N.READY, expected=N.AWAITING_INPUT, reason="the user answered",
                           arguments=arguments, question=None, dispatched_at=timezone.now()):
        raise Conflict("The question was answered already.", code="already_answered")
    event_append(conversation_id=run.conversation_id, run_id=run.id, type="input.answered",
                 data={"node": node.key})
    nodes_dispatch_on_commit([node.id])
    run_settle(run)
    return run
