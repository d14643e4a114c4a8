"""Tenant-scoped reads for the approver's desk: the queue, one card, a run's history."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from config.api import NotFound
from config.words import words_render
from tenants.models import Membership, Role
from timeline.models import Event
from workflows.cards import card_rows
from workflows.selectors import run_get_for
from workflows.tools import TOOLS

from .matrix import approval_refusal
from .models import ApprovalDecision, ApprovalReminder, ApprovalRequest, ApprovalStatus


def approvals_for(membership: Membership, status: str | None = None) -> QuerySet[ApprovalRequest]:
    approvals = ApprovalRequest.objects.filter(tenant_id=membership.tenant_id).select_related(
        "run", "node", "requested_by", "decided_by").order_by("deadline", "created_at")
    return approvals.filter(status=status) if status else approvals


def approval_get(membership: Membership, approval_id: int) -> ApprovalRequest:
    approval = approvals_for(membership).filter(id=approval_id).first()
    if approval is None:
        raise NotFound(_("No such approval."))  # another tenant's id answers the same
    return approval


def duration_text(seconds: float) -> str:
    """4 min, 2 h 5 min, 3 d — how people say a wait."""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return _("%(s)d s") % {"s": seconds}
    minutes = seconds // 60
    if minutes < 60:
        return _("%(m)d min") % {"m": minutes}
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return _("%(h)d h %(m)d min") % {"h": hours, "m": minutes} if minutes else _("%(h)d h") % {"h": hours}
    days, hours = divmod(hours, 24)
    return _("%(d)d d %(h)d h") % {"d": days, "h": hours} if hours else _("%(d)d d") % {"d": days}


def waited_seconds(approval: ApprovalRequest, now: datetime | None = None) -> float:
    """How long it waited: until its decision (or expiry), or until now while pending."""
    end = approval.decided_at or (approval.deadline if approval.status == ApprovalStatus.EXPIRED else None)
    return max(0.0, ((end or now or timezone.now()) - approval.created_at).total_seconds())


def person(user) -> str:
    return (user.get_full_name() or user.username) if user else ""


def summary_described(approval: ApprovalRequest) -> str:
    """The card's summary in the reader's language, as the tool words it; else as stored."""
    tool = TOOLS.get(approval.tool)
    stored = words_render(approval.summary_words or approval.summary)
    if approval.summary_words or tool is None or tool.summary_describe is None:
        return stored  # words: what the approver was told when it was asked, in this reader's language
    try:
        return tool.summary_describe(approval.tenant_id, approval.arguments, approval.diff) or stored
    except (KeyError, ValueError, TypeError):  # arguments of an older shape: as stored
        return stored


@dataclass
class Card:
    approval: ApprovalRequest
    waited: str
    due: str
    overdue: bool
    refusal: str            # why this viewer may not approve it, or ""
    can_decide: bool        # pending and the viewer may at least reject
    summary: str            # what it does, in the reader's language
    rows: list[dict[str, Any]]  # the card's typed rows (workflows.cards), rendered for the reader
    needs_label: str        # the role it needs, in the reader's language
    routing_reason: str     # why, in the reader's language
    reminder: Any
    first_decision: ApprovalDecision | None
    scope: dict[str, Any]
    withdrawn: bool = False  # superseded because its run was changed or cancelled, not its configuration


def approval_card(membership: Membership, approval: ApprovalRequest) -> Card:
    now = timezone.now()
    refusal = approval_refusal(approval, membership, ApprovalStatus.APPROVED)
    left = (approval.deadline - now).total_seconds()
    first = approval.decisions.filter(accepted=True).select_related("user").first()
    return Card(
        approval=approval, summary=summary_described(approval),
        rows=card_rows(approval),
        waited=duration_text(waited_seconds(approval, now)),
        due=(_("overdue") if left <= 0 else _("in %(duration)s")
            % {"duration": duration_text(left)}), overdue=left <= 0,
        refusal=refusal[1] if refusal else "",
        can_decide=approval.status == ApprovalStatus.PENDING and membership.can_approve,
        needs_label=str(Role(approval.needs_role).label).lower() if approval.needs_role in Role.values
        else approval.needs_role,
        routing_reason=approval.routing_reason_shown,
        reminder=ApprovalReminder.objects.filter(approval=approval).first(),
        first_decision=first, scope=approval.measures or {},
        withdrawn=approval.status == ApprovalStatus.SUPERSEDED and Event.objects.filter(
            run_id=approval.run_id, type="approval.withdrawn", data__approval=str(approval.id)).exists())


def reminders_for(membership: Membership) -> list[ApprovalReminder]:
    """In-app notices: reminders of approvals still pending that this member may act on."""
    if not membership.can_approve:
        return []
    reminders = (ApprovalReminder.objects.filter(approval__tenant_id=membership.tenant_id,
                                                 approval__status=ApprovalStatus.PENDING)
                 .select_related("approval").order_by("approval__deadline")[:50])
    # recipients is a short JSON list, filtered here.
    return [r for r in reminders if membership.user.username in r.recipients]


def approval_history(membership: Membership, run_id: int) -> dict[str, Any]:
    """Every approval of a run, every decision attempt, and the run's approval events."""
    run = run_get_for(membership, run_id)
    approvals = list(ApprovalRequest.objects.filter(run=run).select_related("node", "decided_by", "requested_by")
                     .order_by("created_at"))
    decisions = list(ApprovalDecision.objects.filter(approval__run=run).select_related("user", "approval")
                     .order_by("at", "id"))
    events = list(Event.objects.filter(run_id=run.id, type__startswith="approval.").order_by("seq"))
    return {"run": run, "approvals": approvals, "decisions": decisions, "events": events}
