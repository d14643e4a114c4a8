"""The durable approval gate (DESIGN.md §4): a request bound to the
node, the hash of its fully resolved arguments and a deadline; decided once."""
from __future__ import annotations

import hashlib
import json
import os
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from config.api import Conflict, Forbidden
from config.words import words
from tenants.models import Membership
from timeline.push import broadcast_on_commit, tenant_group
from timeline.services import event_append, events_batched, frame_record, summary_columns
from workflows.blueprints import blueprint_get
from workflows.executor import node_hand_over
from workflows.models import Node, NodeStatus, Run
from workflows.services import plan_replan, run_settle
from workflows.tools import Preview, tool_get
from workflows.transitions import node_transition, run_lock

from .matrix import (
    DEFAULT_DEADLINE_SECONDS,
    approval_refusal,
    approval_route,
    approvals_group,
    rule_for,
)
from .models import ApprovalDecision, ApprovalReminder, ApprovalRequest, ApprovalStatus
from .selectors import approval_get, duration_text

A, N = ApprovalStatus, NodeStatus


def arguments_hash(arguments: dict[str, Any]) -> str:
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def deadline_seconds(tool: str, tenant_id: int | None = None) -> float:
    """How long an approval of `tool` may wait: the matrix row's deadline, unless the
    environment overrides it for every tool (the engine's tests use a 2 s deadline)."""
    override = os.environ.get("KEEL_APPROVAL_DEADLINE_SECONDS")
    if override:
        return float(override)
    rule = rule_for(tenant_id, tool) if tenant_id is not None else None
    return float(rule.deadline_seconds if rule else DEFAULT_DEADLINE_SECONDS)


def _preview(tenant_id: int, tool_name: str, arguments: dict[str, Any],
             params: dict[str, Any] | None = None) -> Preview:
    """What the approver reads, as the tool declares it (a sentence, a diff, measures)."""
    tool = tool_get(tool_name)
    if tool.preview is None:
        return Preview(summary=words(gettext_noop("Run the step “%(step)s”."), step=tool_name.replace("_", " ")))
    return tool.preview(tenant_id, arguments, params or {})


def _broadcast(tenant_id: int, approval_id: int, status: str, **extra: Any) -> None:
    message = {"type": "approval.changed", "approval": str(approval_id), "status": status, **extra}
    # The tenant group is the contract other pages listen on; the inbox listens on its own.
    broadcast_on_commit(tenant_group(tenant_id), message)
    broadcast_on_commit(approvals_group(tenant_id), message)


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
    preview = _preview(run.tenant_id, node.tool, arguments, run.params)
    summary, diff, measures = preview.summary, preview.diff, preview.measures
    # A summary given as words is stored as meaning, its English beside it (search, logs, the API's `summary`).
    summary, summary_words = summary_columns(summary)
    route = approval_route(tenant_id=run.tenant_id, tool=node.tool, measures=measures)
    with events_batched():  # one transaction; its events and counts written together at the end
        # The run's lock first, as every writer of the run takes it (workflows.transitions.run_lock):
        # the run settled below then sees a sibling step's completion that committed first, and
        # that completion, waiting, sees this step awaiting approval — else each saw the other
        # still running and the run stayed `running` with nothing left to run.
        run_lock(run)
        if ApprovalRequest.objects.filter(node=node, status=A.PENDING).exists():
            return None
        approval = ApprovalRequest.objects.create(
            tenant_id=run.tenant_id, run=run, node=node, tool=node.tool, arguments=arguments,
            arguments_hash=arguments_hash(arguments), summary=summary, summary_words=summary_words, diff=diff,
            requested_by_id=run.created_by_id,
            deadline=timezone.now() + timedelta(seconds=deadline_seconds(node.tool, run.tenant_id)),
            measures=measures, allowed_roles=route.roles, needs_role=route.needs_role, routing_reason=route.reason,
            routing_reason_words=route.reason_words)
        if not node_transition(node, N.AWAITING_APPROVAL, expected=N.READY, reason="waiting for an approver"):
            transaction.set_rollback(True)
            return None
        event_append(conversation_id=run.conversation_id, run_id=run.id, type="approval.requested",
                     data={"approval": str(approval.id), "node": node.key, "summary": summary,
                           "deadline": approval.deadline.isoformat(), "needs_role": route.needs_role,
                           "routing": route.reason})
        if node.activity_id:
            frame_record(activity_id=node.activity_id, kind="approval", name="approval requested", status="waiting",
                         summary=summary_words or summary, payload={"approval": str(approval.id), "arguments": arguments,
                                                   "arguments_hash": approval.arguments_hash})
        _broadcast(run.tenant_id, approval.id, approval.status)
        run_settle(run)
    return None


def _decision_conflict(approval: ApprovalRequest) -> Conflict:
    approval.refresh_from_db()
    return Conflict(_("This approval was already %(status)s.") % {"status": approval.get_status_display().lower()},
                    code="already_decided", extra={
        "status": approval.status,
        "decided_by": approval.decided_by.username if approval.decided_by else None,
        "decided_at": approval.decided_at.isoformat() if approval.decided_at else None,
        "comment": approval.comment})


def approval_decide(*, membership: Membership, approval_id: int, verdict: str, comment: str = "",
                    replan: bool = False) -> ApprovalRequest:
    """Approve or reject once. A later or concurrent decision is recorded and refused (409)."""
    approval = approval_get(membership, approval_id)
    if verdict not in (A.APPROVED, A.REJECTED):
        raise ValueError(verdict)
    if not membership.can_approve:
        raise Forbidden(_("Only approvers and tenant admins may decide approvals."), code="not_an_approver")
    if approval.status != A.PENDING:
        # Decided or expired: recorded and refused with the first decision, whoever asks.
        _refusal_record(approval, membership, verdict, comment, "already " + approval.status,
                        event="approval.decision_refused")
        raise _decision_conflict(approval)
    refusal = approval_refusal(approval, membership, verdict)
    if refusal:
        code, message = refusal
        _refusal_record(approval, membership, verdict, comment, message, event="approval.refused", code=code)
        raise Forbidden(message, code=code, extra={"needs_role": approval.needs_role})
    if verdict == A.APPROVED:
        stale = _stale_reason(approval)
        if stale and _superseded_before(approval, stale):
            _supersede(approval, membership, stale, again=True)
            raise Conflict(_("The situation changed again for the same reason (%(stale)s), so the run stopped instead "
                             "of asking a third time.") % {"stale": stale},
                           code="preconditions_changed", extra={"status": A.SUPERSEDED, "run_stopped": True})
        if stale:
            _supersede(approval, membership, stale)
            raise Conflict(_("The situation changed since this was requested (%(stale)s); a fresh snapshot is being taken and a new approval will be requested.")
                           % {"stale": stale},
                           code="preconditions_changed", extra={"status": A.SUPERSEDED})
    with events_batched():  # one transaction; its events and counts written together at the end
        # The run's lock before the approval's: a cancel holds the run's and then withdraws the
        # approval; taken the other way round, each waited for the other (a deadlock).
        run_lock(approval.run)
        # allowed_roles in the WHERE: a matrix edit that re-routed the request after the
        # check above makes this a lost race, not an approval the matrix no longer allows.
        decision = {"status": verdict, "decided_by": membership.user, "decided_at": timezone.now(),
                    "comment": comment[:2000], "replan": replan and verdict == A.REJECTED,
                    "decided_role": membership.role}
        won = ApprovalRequest.objects.filter(id=approval.id, status=A.PENDING,
                                             allowed_roles=approval.allowed_roles).update(**decision)
        ApprovalDecision.objects.create(approval=approval, user=membership.user, verdict=verdict,
                                        accepted=bool(won), comment=comment[:2000])
        run = approval.run
        if not won:
            event_append(conversation_id=run.conversation_id, run_id=run.id, type="approval.decision_refused",
                         data={"approval": str(approval.id), "by": membership.user.username, "verdict": verdict})
        else:
            # The decision and what it sets in motion commit together, or not at all.
            for name, value in decision.items():  # the row as the compare-and-set wrote it
                setattr(approval, name, value)
            if verdict == A.APPROVED:
                event_append(conversation_id=run.conversation_id, run_id=run.id, type="approval.rechecked",
                             data={"approval": str(approval.id), "node": approval.node.key,
                                   "by": membership.user.username, "role": membership.role,
                                   "allowed_roles": approval.allowed_roles,
                                   "preconditions": "the records this step touches are as snapshotted; "
                                                    "its name is still reserved"})
            _decision_apply(approval, membership, comment)
    if not won:
        raise _decision_conflict(approval)
    return approval


def _decision_apply(approval: ApprovalRequest, membership: Membership, comment: str) -> None:
    run, node = approval.run, approval.node
    node.run = run  # one row, loaded once
    event_append(conversation_id=run.conversation_id, run_id=run.id, type=f"approval.{approval.status}",
                 data={"approval": str(approval.id), "node": node.key, "by": membership.user.username,
                       "comment": comment, "replan": approval.replan,
                       "waited_seconds": (approval.decided_at - approval.created_at).total_seconds()})
    _broadcast(run.tenant_id, approval.id, approval.status)
    if approval.status == A.APPROVED:
        if node_transition(node, N.READY, expected=N.AWAITING_APPROVAL, reason=f"approved by {membership.user}",
                           dispatched_at=timezone.now()):
            node_hand_over(node, run)  # claimed now for a worker, its message sent after the commit
        run_settle(run)
        return
    node_transition(node, N.BLOCKED, expected=N.AWAITING_APPROVAL,
                    reason=f"rejected by {membership.user}: {comment}".rstrip(": "))
    tool = tool_get(approval.tool)
    if approval.replan and tool.rejection_replan is not None:
        plan_replan(run=run, replace=blueprint_get(run.blueprint).get("replan_on_reject", [node.key]),
                    reason=f"rejected by {membership.user}; replanning without the rejected choice",
                    params_update=tool.rejection_replan(run.params, approval.arguments),
                    trigger={"kind": "rejection", "node": node.key})
    else:
        why = f"the approval was rejected by {membership.user}" + (f": {comment}" if comment else "")
        if tool.on_reject is not None:
            tool.on_reject(run.tenant_id, run.id, approval.arguments, membership.user_id, why)
        run_settle(run, reason=why)


def _stale_reason(approval: ApprovalRequest) -> str:
    """Preconditions again at decision time: what the tool says it needs still holds,
    and the approver's preview (the diff) is still what the change would do."""
    tool = tool_get(approval.tool)
    if tool.preconditions_check is not None:
        reason = tool.preconditions_check(approval.tenant_id, approval.run_id, approval.arguments)
        if reason:
            return reason
    if approval.diff is not None:
        preview = _preview(approval.tenant_id, approval.tool, approval.arguments, approval.run.params)
        if preview.diff != approval.diff:
            return "what the change would do is no longer what was shown"
    return ""


def _superseded_before(approval: ApprovalRequest, reason: str) -> bool:
    """Was an earlier card of this run's step superseded for this very cause? Re-asked once,
    the same cause again means a fresh plan will not help (the record was changed behind the
    run's back): asking again would loop, each approval superseded and asked anew."""
    return (ApprovalDecision.objects.filter(approval__run_id=approval.run_id, approval__node__key=approval.node.key,
                                            approval__status=A.SUPERSEDED, comment=f"superseded: {reason}")
            .exclude(approval_id=approval.id).exists())


def _supersede(approval: ApprovalRequest, membership: Membership, reason: str, *, again: bool = False) -> None:
    """pending → superseded (what the approval named has changed) and the step planned afresh;
    `again` (superseded before for the same cause): the step blocks and the run stops, saying why.
    The run's lock first and the events last, as a step's completion takes them: taken the
    other way round, a sibling's completion at that moment and this waited for each other,
    and PostgreSQL rolled one back — the approver's click a 500."""
    with events_batched():
        run_lock(approval.run)
        if not ApprovalRequest.objects.filter(id=approval.id, status=A.PENDING).update(status=A.SUPERSEDED):
            raise _decision_conflict(approval)
        ApprovalDecision.objects.create(approval=approval, user=membership.user, verdict=A.APPROVED, accepted=False,
                                        comment=f"superseded: {reason}")
        run, node = approval.run, approval.node
        event_append(conversation_id=run.conversation_id, run_id=run.id, type="approval.superseded",
                     data={"approval": str(approval.id), "node": node.key, "reason": reason})
        node_transition(node, N.BLOCKED, expected=N.AWAITING_APPROVAL, reason=f"superseded: {reason}")
        _broadcast(run.tenant_id, approval.id, A.SUPERSEDED)
        if again:
            run_settle(run, reason=words(gettext_noop("the approval was superseded twice for the same cause "
                                                      "(%(reason)s); stopped instead of asking a third time"),
                                         reason=reason))
            return
        plan_replan(run=run, replace=blueprint_get(run.blueprint).get("replan_on_stale", [node.key]), reason=reason,
                    trigger={"kind": "stale", "node": node.key})


def approvals_expire_overdue(*, now: datetime | None = None) -> int:
    """pending → expired past the deadline, no request needed; the node and run block."""
    now = now or timezone.now()
    count = 0
    for approval in ApprovalRequest.objects.select_related("run", "node").filter(status=A.PENDING,
                                                                                   deadline__lt=now)[:200]:
        with events_batched():  # the run's lock first, the events last: as in _supersede
            run_lock(approval.run)
            if not ApprovalRequest.objects.filter(id=approval.id, status=A.PENDING).update(status=A.EXPIRED):
                continue
            count += 1
            run = approval.run
            reason = f"the approval expired at {approval.deadline:%Y-%m-%d %H:%M:%S} UTC without a decision"
            event_append(conversation_id=run.conversation_id, run_id=run.id, type="approval.expired",
                         data={"approval": str(approval.id), "node": approval.node.key, "reason": reason})
            node_transition(approval.node, N.BLOCKED, expected=N.AWAITING_APPROVAL, reason=reason)
            run_settle(run, reason=reason)
            _broadcast(run.tenant_id, approval.id, A.EXPIRED)
    return count


def approvals_withdraw(*, run: Run, reason: str) -> int:
    """pending → superseded for every open request of a cancelled run: no approver is
    left holding a card whose run is gone. Compare-and-set, so a decision that lands
    first keeps its result (and the cancel then sees the node it moved)."""
    count = 0
    for approval in ApprovalRequest.objects.filter(run_id=run.id, status=A.PENDING).select_related("node"):
        if not ApprovalRequest.objects.filter(id=approval.id, status=A.PENDING).update(status=A.SUPERSEDED):
            continue
        count += 1
        event_append(conversation_id=run.conversation_id, run_id=run.id, type="approval.withdrawn",
                     data={"approval": str(approval.id), "node": approval.node.key, "reason": reason})
        _broadcast(run.tenant_id, approval.id, A.SUPERSEDED)
    return count


def approval_for_compensation(*, node: Node) -> int | None:
    """A compensation (restore after a failed import) acts under the approval the
    approver gave the step it compensates: that approval named the snapshot."""
    return (ApprovalRequest.objects.filter(run_id=node.run_id, node__key__in=node.depends_on,
                                           node__retired_in__isnull=True, status=A.APPROVED)
            .order_by("-decided_at").values_list("id", flat=True).first())


def _refusal_record(approval: ApprovalRequest, membership: Membership, verdict: str, comment: str, why: str, *,
                    event: str, code: str = "") -> None:
    """A refused attempt is part of the record too: a decision row and a timeline event."""
    with transaction.atomic():
        ApprovalDecision.objects.create(approval=approval, user=membership.user, verdict=verdict, accepted=False,
                                        comment=f"refused: {why}" + (f" — {comment[:1800]}" if comment else ""))
        run = approval.run
        event_append(conversation_id=run.conversation_id, run_id=run.id, type=event,
                     data={"approval": str(approval.id), "by": membership.user.username, "role": membership.role,
                           "verdict": verdict, "reason": why, **({"code": code} if code else {})})


# --- Reminders ---------------------------------------------------------------------------------

def reminder_due_at(approval: ApprovalRequest) -> datetime:
    """When to remind: the matrix row's lead time before the deadline, but never in the
    first half of the wait (a 2-second deadline is reminded after one second)."""
    rule = rule_for(approval.tenant_id, approval.tool)
    lead = timedelta(seconds=rule.remind_before_seconds if rule else 2 * 3600)
    return approval.deadline - min(lead, (approval.deadline - approval.created_at) / 2)


def approval_recipients(approval: ApprovalRequest) -> list[Membership]:
    """Who can act on it: members whose role the matrix allows, except the requester."""
    roles = approval.allowed_roles or ["approver", "admin"]
    return list(Membership.objects.filter(tenant_id=approval.tenant_id, role__in=roles)
                .exclude(user_id=approval.requested_by_id).select_related("user").order_by("user__username"))


def approval_reminders_send(*, now: datetime | None = None) -> int:
    """Remind the approvers of every pending approval whose reminder time has come. Once each."""
    now = now or timezone.now()
    sent = 0
    candidates = (ApprovalRequest.objects.select_related("run", "node").filter(
        status=A.PENDING, deadline__gt=now, reminder__isnull=True).order_by("deadline")[:200])
    for approval in candidates:
        if reminder_due_at(approval) > now:
            continue
        recipients = approval_recipients(approval)
        try:
            with transaction.atomic():
                ApprovalReminder.objects.create(approval=approval,
                                                recipients=[m.user.username for m in recipients])
                run = approval.run
                left = max(0, int((approval.deadline - now).total_seconds()))
                event_append(conversation_id=run.conversation_id, run_id=run.id, type="approval.reminded",
                             data={"approval": str(approval.id), "node": approval.node.key,
                                   "to": [m.user.username for m in recipients], "seconds_left": left,
                                   "deadline": approval.deadline.isoformat()})
                broadcast_on_commit(approvals_group(approval.tenant_id), {
                    "type": "approval.reminded", "approval": str(approval.id), "summary": approval.summary,
                    "seconds_left": left})
                # One email per language: each approver reads it in the language chosen in the console.
                by_language: dict[str, list[str]] = {}
                for m in recipients:
                    if m.user.email:
                        by_language.setdefault(m.language or settings.LANGUAGE_CODE, []).append(m.user.email)
                for language, emails in by_language.items():
                    transaction.on_commit(
                        lambda a=approval, e=emails, s=left, lang=language: _reminder_email(a, e, s, lang))
        except IntegrityError:
            continue  # another sweeper sent it first
        sent += 1
    return sent


def _reminder_email(approval: ApprovalRequest, emails: list[str], seconds_left: int,
                    language: str | None = None) -> None:
    """The reminder, in `language` (the recipients' console language), its summary too (stored as words)."""
    with translation.override(language or settings.LANGUAGE_CODE):
        due = duration_text(seconds_left)
        requester = approval.requested_by.get_full_name() or str(approval.requested_by)
        subject = _("Keel: an approval is due in %(due)s") % {"due": due}
        body = _("%(summary)s\n\nRequested by %(requester)s for run %(run)s. It expires at %(deadline)s UTC; after "
                 "that the run stops and has to be started again.\n\nDecide it in the approvals inbox: "
                 "%(link)s") % {"summary": approval.summary_shown, "requester": requester, "run": approval.run_id,
                                "deadline": f"{approval.deadline:%Y-%m-%d %H:%M}",
                                "link": f"{settings.KEEL_BASE_URL}/approvals/{approval.id}/"}
    send_mail(subject=subject, message=body, from_email=settings.DEFAULT_FROM_EMAIL, recipient_list=emails,
              fail_silently=True)


class ApprovalGate:
    """The engine's gate (workflows.gate.Gate), implemented by this app's services."""

    def granted(self, *, node: Node, arguments: dict[str, Any]) -> int | None:
        return approval_granted(node=node, arguments=arguments)

    def request(self, *, node: Node, run: Run, arguments: dict[str, Any]) -> int | None:
        return approval_gate(node=node, run=run, arguments=arguments)

    def for_compensation(self, *, node: Node) -> int | None:
        return approval_for_compensation(node=node)

    def expire_overdue(self, *, now: datetime) -> int:
        return approvals_expire_overdue(now=now)

    def withdraw(self, *, run: Run, reason: str) -> int:
        return approvals_withdraw(run=run, reason=reason)
