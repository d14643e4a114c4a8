"""The approval matrix: per tenant, which role may approve which tool, with
thresholds that route a large change to a stronger role, and the four-eyes rule.

`approval_refusal` is the one place that says whether a person may approve a
request; `approval_decide` enforces it and the inbox card only displays it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from config.api import Forbidden, Unprocessable
from tenants.models import Membership, Role, Tenant
from timeline.push import broadcast_on_commit
from workflows.tools import TOOLS

from .models import ApprovalRequest, ApprovalRule, ApprovalStatus

DECIDING_ROLES = (Role.APPROVER, Role.ADMIN)  # the roles that may decide anything at all
DEFAULT_DEADLINE_SECONDS = 24 * 3600


def default_rule(tool_name: str) -> dict[str, Any]:
    """A tool's default matrix row: what the tool declares (`Tool.approval_rule`), else any approver."""
    declared = dict(TOOLS[tool_name].approval_rule) if tool_name in TOOLS else {}
    if "monthly_gross_limit" in declared and declared["monthly_gross_limit"] is not None:
        declared["monthly_gross_limit"] = Decimal(str(declared["monthly_gross_limit"]))
    return declared or {"roles": list(DECIDING_ROLES)}
ROLE_LABEL = {Role.APPROVER: "an approver", Role.ADMIN: "a tenant admin"}


def approvals_group(tenant_id: int) -> str:
    """The inbox's websocket group (ASCII; see approvals/consumers.py)."""
    return f"approvals.{tenant_id}"


def rule_for(tenant_id: int, tool: str) -> ApprovalRule | None:
    return ApprovalRule.objects.filter(tenant_id=tenant_id, tool=tool).first()


def rules_for(membership: Membership) -> list[ApprovalRule]:
    """Every tool that asks for approval has a row; missing rows show the defaults, unsaved."""
    rows = {r.tool: r for r in ApprovalRule.objects.filter(tenant_id=membership.tenant_id)}
    for name, tool in sorted(TOOLS.items()):
        if tool.needs_approval and name not in rows:
            rows[name] = ApprovalRule(tenant_id=membership.tenant_id, tool=name,
                                      **default_rule(name))
    return [rows[k] for k in sorted(rows)]


@dataclass(frozen=True)
class Route:
    roles: list[str]
    needs_role: str
    reason: str
    over_limit: bool = False  # the size is above one of the rule's thresholds


def approval_route(*, tenant_id: int, tool: str, measures: dict[str, Any]) -> Route:
    """Who may approve `tool` at this size, by the tenant's matrix (no row: any approver)."""
    rule = rule_for(tenant_id, tool)
    roles = [r for r in (rule.roles if rule else DECIDING_ROLES) if r in DECIDING_ROLES] or [Role.ADMIN]
    over = []
    if rule is not None:
        headcount = measures.get("headcount")
        if rule.headcount_limit is not None and headcount is not None and headcount > rule.headcount_limit:
            over.append(f"{headcount} employees in scope is above the limit of {rule.headcount_limit}")
        gross = _decimal(measures.get("monthly_gross"))
        if rule.monthly_gross_limit is not None and gross is not None and gross > rule.monthly_gross_limit:
            over.append(f"a monthly gross of {gross:,.2f} {measures.get('currency', '')} is above the limit of "
                        f"{rule.monthly_gross_limit:,.2f}".replace("  ", " "))
        if over:
            roles = [rule.above_limit_role]
    needs = Role.APPROVER if Role.APPROVER in roles else roles[0]
    if over:
        reason = "; ".join(over) + f": needs {ROLE_LABEL.get(needs, needs)}."
    elif rule is not None and (rule.headcount_limit is not None or rule.monthly_gross_limit is not None):
        reason = f"Within the matrix's limits: {' or '.join(ROLE_LABEL.get(r, r) for r in roles)} may approve."
    else:
        reason = f"{' or '.join(ROLE_LABEL.get(r, r) for r in roles).capitalize()} may approve."
    return Route(roles=list(roles), needs_role=needs, reason=reason, over_limit=bool(over))


_OVER_HEADCOUNT = re.compile(r"^(?P<n>\d+) employees in scope is above the limit of (?P<limit>\d+)$")
_OVER_GROSS = re.compile(r"^a monthly gross of (?P<gross>[\d,.]+) ?(?P<currency>[A-Z]*) is above the limit of "
                         r"(?P<limit>[\d,.]+)$")


def _roles_shown(text: str) -> str | None:
    words = {"an approver": _("an approver"), "a tenant admin": _("a tenant admin")}
    roles = [words.get(part.strip().lower()) for part in text.split(" or ")]
    if not roles or None in roles:
        return None
    shown = roles[0]
    for role in roles[1:]:
        shown = _("%(first)s or %(second)s") % {"first": shown, "second": role}
    return shown


def routing_reason_shown(reason: str) -> str:
    """The stored routing reason (written in English when the approval was routed, by
    `approval_route`) in the reader's language; a sentence it does not know reads as stored."""
    text = (reason or "").strip()
    if text.startswith("Within the matrix's limits: ") and text.endswith(" may approve."):
        roles = _roles_shown(text.removeprefix("Within the matrix's limits: ").removesuffix(" may approve."))
        return _("Within the matrix's limits: %(roles)s may approve.") % {"roles": roles} if roles else reason
    if ": needs " in text and text.endswith("."):
        overs, _sep, needs = text[:-1].rpartition(": needs ")
        role = _roles_shown(needs)
        shown = []
        for over in overs.split("; "):
            if m := _OVER_HEADCOUNT.match(over):
                shown.append(_("%(n)s employees in scope is above the limit of %(limit)s") % m.groupdict())
            elif m := _OVER_GROSS.match(over):
                shown.append(_("a monthly gross of %(gross)s %(currency)s is above the limit of %(limit)s")
                             % m.groupdict())
            else:
                return reason
        return _("%(over)s: needs %(role)s.") % {"over": _("; ").join(shown), "role": role} if role else reason
    if text.endswith(" may approve."):
        roles = _roles_shown(text.removesuffix(" may approve."))
        return _("%(roles)s may approve.") % {"roles": roles[:1].upper() + roles[1:]} if roles else reason
    return reason


def _decimal(value: Any) -> Decimal | None:
    try:
        return None if value is None else Decimal(str(value))
    except InvalidOperation:
        return None


def approval_refusal(approval: ApprovalRequest, membership: Membership, verdict: str) -> tuple[str, str] | None:
    """(code, message) when `membership` may not give `verdict` on `approval`, else None.

    The matrix governs approving. Rejecting is always open to an approver or admin:
    a "no" changes nothing in the system of record.
    """
    if not membership.can_approve:
        return "not_an_approver", _("Only approvers and tenant admins may decide approvals.")
    if verdict != ApprovalStatus.APPROVED:
        return None
    if approval.requested_by_id == membership.user_id:
        return "four_eyes", _("You started this run, so you may not approve it: the four-eyes rule needs "
                               "someone else to approve it.")
    roles = approval.allowed_roles or list(DECIDING_ROLES)
    if membership.role not in roles:
        # The routing reason is stored text (as it was written when routed); the sentence around it is translated.
        who = _("an approver") if approval.needs_role == Role.APPROVER else _("a tenant admin")
        return "matrix_refused", _("The approval matrix routes this to %(who)s (%(reason)s); your role may not "
                                   "approve it.") % {"who": who, "reason": routing_reason_shown(approval.routing_reason).rstrip(".。")}
    return None


# --- Editing the matrix ----------------------------------------------------------------------

def matrix_rule_update(*, membership: Membership, tool: str, roles: list[str], deadline_seconds: int,
                       remind_before_seconds: int, headcount_limit: int | None,
                       monthly_gross_limit: Decimal | None, above_limit_role: str) -> ApprovalRule:
    """A tenant admin changes one row; pending approvals of that tool are re-routed."""
    if membership.role != Role.ADMIN:
        raise Forbidden(_("Only a tenant admin may change the approval matrix."), code="admin_required")
    if tool not in TOOLS or not TOOLS[tool].needs_approval:
        raise Unprocessable(_("%(tool)s is not a tool that asks for approval.") % {"tool": repr(tool)},
                            code="unknown_tool")
    roles = [r for r in DECIDING_ROLES if r in roles]
    if not roles:
        raise Unprocessable(_("Choose at least one role that may approve."), code="no_roles")
    if above_limit_role not in DECIDING_ROLES:
        raise Unprocessable(_("Above a limit, an approver or a tenant admin must approve."), code="bad_role")
    if deadline_seconds < 60:
        raise Unprocessable(_("A deadline shorter than a minute cannot be met by a person."), code="bad_deadline")
    if remind_before_seconds < 0 or remind_before_seconds >= deadline_seconds:
        raise Unprocessable(_("The reminder must come before the deadline."), code="bad_reminder")
    if headcount_limit is not None and headcount_limit < 0:
        raise Unprocessable(_("A headcount limit cannot be negative."), code="bad_limit")
    if monthly_gross_limit is not None and monthly_gross_limit < 0:
        raise Unprocessable(_("A monthly gross limit cannot be negative."), code="bad_limit")
    with transaction.atomic():
        rule, _created = ApprovalRule.objects.update_or_create(
            tenant_id=membership.tenant_id, tool=tool,
            defaults={"roles": roles, "deadline_seconds": deadline_seconds,
                      "remind_before_seconds": remind_before_seconds, "headcount_limit": headcount_limit,
                      "monthly_gross_limit": monthly_gross_limit, "above_limit_role": above_limit_role,
                      "updated_by": membership.user})
        approvals_reroute(tenant_id=membership.tenant_id, tool=tool)
    return rule


def approvals_reroute(*, tenant_id: int, tool: str) -> int:
    """Apply the current matrix to the pending approvals of `tool` (a decided one stays as decided)."""
    changed = 0
    for approval in ApprovalRequest.objects.filter(tenant_id=tenant_id, tool=tool, status=ApprovalStatus.PENDING):
        route = approval_route(tenant_id=tenant_id, tool=tool, measures=approval.measures)
        if (route.roles, route.needs_role, route.reason) == (approval.allowed_roles, approval.needs_role,
                                                             approval.routing_reason):
            continue
        # Only while still pending: a decision that lands first keeps the routing it was made under.
        if ApprovalRequest.objects.filter(id=approval.id, status=ApprovalStatus.PENDING).update(
                allowed_roles=route.roles, needs_role=route.needs_role, routing_reason=route.reason):
            changed += 1
            broadcast_on_commit(approvals_group(tenant_id), {"type": "approval.changed",
                                                             "approval": str(approval.id), "status": "pending"})
    return changed


def matrix_seed_defaults() -> None:
    """seed_demo: every tenant gets the default rows it does not have yet (edits survive a re-seed)."""
    for tenant in Tenant.objects.all():
        for name, tool in sorted(TOOLS.items()):
            if tool.needs_approval and tool.approval_rule:
                ApprovalRule.objects.get_or_create(tenant=tenant, tool=name, defaults=default_rule(name))
