"""The durable approval gate (DESIGN.md §4, seed 000 §7): a request bound to the
node, the hash of its fully resolved arguments and a deadline; decided once."""
from __future__ import annotations

import hashlib
import json
import os
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from config.api import Conflict, Forbidden, NotFound
from tenants.models import Membership
from timeline.push import broadcast_on_commit, tenant_group
from timeline.services import event_append, frame_record
from workflows.models import Node, NodeStatus, Run
from workflows.services import nodes_dispatch_on_commit, plan_replan, run_settle
from workflows.transitions import node_transition

from .models import ApprovalDecision, ApprovalRequest, ApprovalStatus

A, N = ApprovalStatus, NodeStatus


def arguments_hash(arguments: dict[str, Any]) -> str:
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def deadline_seconds(tool: str) -> float:
    return float(os.environ.get("KEEL_APPROVAL_DEADLINE_SECONDS", 24 * 3600))


def _preview(tenant_id: int, tool: str, arguments: dict[str, Any]) -> tuple[str, dict | None]:
    """What the approver reads: a business sentence and, for an import, the diff."""
    if tool == "import_template":
        from payroll.services import import_diff

        diff = import_diff(tenant_id=tenant_id, template_id=int(arguments["template_id"]),
                           group_name=arguments["group_name"])
        template = diff.get("template", {})
        name = template.get("name", "the matched template")
        return f"Import template “{name}” into a new group “{arguments['group_name']}”.", diff
    return f"Run {tool.replace('_', ' ')}.", None


def approval_granted(*, node: Node, arguments: dict[str, Any]) -> int | None:
    """The id of an approved request for exactly these arguments, if any."""
    return (ApprovalRequest.objects.filter(node=node, status=A.APPROVED, arguments_hash=arguments_hash(arguments))
            .values_list("id", flat=True).first())


def approval_gate(*, node: Node, run: Run, arguments: dict[str, Any]) -> int | None:
    """Return the approval that lets `node` run, or open one and move the node
    ready → awaiting_approval (returning None)."""
    granted = approval_granted(node=node, arguments=arguments)
    if granted:
        return granted
    summary, diff = _preview(run.tenant_id, node.tool, arguments)
    with transaction.atomic():
        if ApprovalRequest.objects.filter(node=node, status=A.PENDING).exists():
            return None
        approval = ApprovalRequest.objects.create(
            tenant_id=run.tenant_id, run=run, node=node, tool=node.tool, arguments=arguments,
            arguments_hash=arguments_hash(arguments), summary=summary, diff=diff, requested_by_id=run.created_by_id,
            deadline=timezone.now() + timedelta(seconds=deadline_seconds(node.tool)))
        if not node_transition(node, N.AWAITING_APPROVAL, expected=N.READY, reason="waiting for an approver"):
            transaction.set_rollback(True)
            return None
        event_append(conversation_id=run.conversation_id, run_id=run.id, type="approval.requested",
                     data={"approval": str(approval.id), "node": node.key, "summary": summary,
                           "deadline": approval.deadline.isoformat()})
        if node.activity_id:
            frame_record(activity_id=node.activity_id, kind="approval", name="approval requested", status="waiting",
                         summary=summary, payload={"approval": str(approval.id), "arguments": arguments,
                                                   "arguments_hash": approval.arguments_hash})
        broadcast_on_commit(tenant_group(run.tenant_id), {"type": "approval.changed", "approval": str(approval.id),
                                                          "status": approval.status})
        run_settle(run)
    return None


def _decision_conflict(approval: ApprovalRequest) -> Conflict:
    approval.refresh_from_db()
    return Conflict(f"This approval was already {approval.status}.", code="already_decided", extra={
        "status": approval.status,
        "decided_by": approval.decided_by.username if approval.decided_by else None,
        "decided_at": approval.decided_at.isoformat() if approval.decided_at else None,
        "comment": approval.comment})


def approval_get_for(membership: Membership, approval_id: int) -> ApprovalRequest:
    approval = ApprovalRequest.objects.select_related("run", "node").filter(
        id=approval_id, tenant_id=membership.tenant_id).first()
    if approval is None:
        raise NotFound("No such approval.")
    return approval


def approval_decide(*, membership: Membership, approval_id: int, verdict: str, comment: str = "",
                    replan: bool = False) -> ApprovalRequest:
    """Approve or reject once. A later or concurrent decision is recorded and refused (409)."""
    approval = approval_get_for(membership, approval_id)
    if not membership.can_approve:
        raise Forbidden("Only approvers and tenant admins may decide approvals.", code="not_an_approver")
    if verdict not in (A.APPROVED, A.REJECTED):
        raise ValueError(verdict)
    if verdict == A.APPROVED and approval.status == A.PENDING:
        stale = _stale_reason(approval)
        if stale:
            _supersede(approval, membership, stale)
            raise Conflict(f"The situation changed since this was requested ({stale}); "
                           "a fresh snapshot is being taken and a new approval will be requested.",
                           code="preconditions_changed", extra={"status": A.SUPERSEDED})
    with transaction.atomic():
        won = ApprovalRequest.objects.filter(id=approval.id, status=A.PENDING).update(
            status=verdict, decided_by=membership.user, decided_at=timezone.now(), comment=comment[:2000],
            replan=replan and verdict == A.REJECTED)
        ApprovalDecision.objects.create(approval=approval, user=membership.user, verdict=verdict,
                                        accepted=bool(won), comment=comment[:2000])
        run = approval.run
        if not won:
            event_append(conversation_id=run.conversation_id, run_id=run.id, type="approval.decision_refused",
                         data={"approval": str(approval.id), "by": membership.user.username, "verdict": verdict})
        else:
            # The decision and what it sets in motion commit together, or not at all.
            approval.refresh_from_db()
            _decision_apply(approval, membership, comment)
    if not won:
        raise _decision_conflict(approval)
    return approval


def _decision_apply(approval: ApprovalRequest, membership: Membership, comment: str) -> None:
    run, node = approval.run, approval.node
    event_append(conversation_id=run.conversation_id, run_id=run.id, type=f"approval.{approval.status}",
                 data={"approval": str(approval.id), "node": node.key, "by": membership.user.username,
                       "comment": comment, "replan": approval.replan,
                       "waited_seconds": (approval.decided_at - approval.created_at).total_seconds()})
    broadcast_on_commit(tenant_group(run.tenant_id), {"type": "approval.changed", "approval": str(approval.id),
                                                      "status": approval.status})
    if approval.status == A.APPROVED:
        if node_transition(node, N.READY, expected=N.AWAITING_APPROVAL, reason=f"approved by {membership.user}",
                           dispatched_at=timezone.now()):
            nodes_dispatch_on_commit([node.id])
        run_settle(run)
        return
    node_transition(node, N.BLOCKED, expected=N.AWAITING_APPROVAL,
                    reason=f"rejected by {membership.user}: {comment}".rstrip(": "))
    if approval.replan:
        from workflows.blueprints import blueprint_get

        excluded = [*run.params.get("excluded_templates", []), str(approval.arguments.get("template_id", ""))]
        plan_replan(run=run, replace=blueprint_get(run.blueprint)["replan_on_reject"],
                    reason=f"rejected by {membership.user}; excluding that template",
                    params_update={"excluded_templates": excluded, "template_code": None})
    else:
        run_settle(run, reason=f"the approval was rejected by {membership.user}" + (f": {comment}" if comment else ""))


def _stale_reason(approval: ApprovalRequest) -> str:
    """Preconditions again at decision time: snapshot still current, template unchanged."""
    if approval.tool != "import_template":
        return ""
    from agents.models import StateCoordinate
    from payroll.services import configuration_checksum

    snapshot = StateCoordinate.objects.filter(run_id=approval.run_id, key="snapshot_id",
                                              value=approval.arguments.get("snapshot_id")).select_related("call").first()
    checksum = (snapshot.call.result or {}).get("checksum") if snapshot else None
    if checksum and checksum != configuration_checksum(tenant_id=approval.tenant_id):
        return "the payroll configuration changed after the snapshot"
    _, diff = _preview(approval.tenant_id, approval.tool, approval.arguments)
    if approval.diff is not None and diff != approval.diff:
        return "the template or the configuration changed"
    return ""


def _supersede(approval: ApprovalRequest, membership: Membership, reason: str) -> None:
    with transaction.atomic():
        if not ApprovalRequest.objects.filter(id=approval.id, status=A.PENDING).update(status=A.SUPERSEDED):
            raise _decision_conflict(approval)
        ApprovalDecision.objects.create(approval=approval, user=membership.user, verdict=A.APPROVED, accepted=False,
                                        comment=f"superseded: {reason}")
        run, node = approval.run, approval.node
        event_append(conversation_id=run.conversation_id, run_id=run.id, type="approval.superseded",
                     data={"approval": str(approval.id), "node": node.key, "reason": reason})
        node_transition(node, N.BLOCKED, expected=N.AWAITING_APPROVAL, reason=f"superseded: {reason}")
        from workflows.blueprints import blueprint_get

        plan_replan(run=run, replace=blueprint_get(run.blueprint)["replan_on_stale"], reason=reason)


def approvals_expire_overdue(*, now: datetime | None = None) -> int:
    """pending → expired past the deadline, no request needed; the node and run block."""
    now = now or timezone.now()
    count = 0
    for approval in ApprovalRequest.objects.select_related("run", "node").filter(status=A.PENDING,
                                                                                   deadline__lt=now)[:200]:
        with transaction.atomic():
            if not ApprovalRequest.objects.filter(id=approval.id, status=A.PENDING).update(status=A.EXPIRED):
                continue
            count += 1
            run = approval.run
            reason = f"the approval expired at {approval.deadline:%Y-%m-%d %H:%M:%S} UTC without a decision"
            event_append(conversation_id=run.conversation_id, run_id=run.id, type="approval.expired",
                         data={"approval": str(approval.id), "node": approval.node.key, "reason": reason})
            node_transition(approval.node, N.BLOCKED, expected=N.AWAITING_APPROVAL, reason=reason)
            run_settle(run, reason=reason)
            broadcast_on_commit(tenant_group(run.tenant_id), {"type": "approval.changed",
                                                              "approval": str(approval.id), "status": A.EXPIRED})
    return count


def approval_for_compensation(*, node: Node) -> int | None:
    """A compensation (restore after a failed import) acts under the approval the
    approver gave the step it compensates: that approval named the snapshot."""
    return (ApprovalRequest.objects.filter(run_id=node.run_id, node__key__in=node.depends_on,
                                           node__retired_in__isnull=True, status=A.APPROVED)
            .order_by("-decided_at").values_list("id", flat=True).first())
