"""The approval matrix: per tenant, which role may approve which tool, with
limits that route a large change to a stronger role, and the four-eyes rule. A limit
is kept per measure the tool declares (`Tool.measures`: the domain's words and unit), so
the matrix compares sizes it never names.

`approval_refusal` is the one place that says whether a person may approve a
request; `approval_decide` enforces it and the inbox card only displays it.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from config.api import Forbidden, Unprocessable
from config.forms import InvalidNumber, number_parse
from config.words import Stored, words, words_english, words_render
from tenants.models import Membership, Role, Tenant
from timeline.push import broadcast_on_commit
from workflows.tools import MONEY, TOOLS, Measure, tool_title

from .models import ApprovalRequest, ApprovalRule, ApprovalStatus

DECIDING_ROLES = (Role.APPROVER, Role.ADMIN)  # the roles that may decide anything at all
DEFAULT_DEADLINE_SECONDS = 24 * 3600
# How a role is named inside a sentence, and at its start.
ROLE_WORDS = {Role.APPROVER: gettext_noop("an approver"), Role.ADMIN: gettext_noop("a tenant admin")}
ROLE_WORDS_FIRST = {Role.APPROVER: gettext_noop("An approver"), Role.ADMIN: gettext_noop("A tenant admin")}


def measures_of(tool_name: str) -> list[Measure]:
    """What the tool declares its previews measure: the only sizes its matrix row may limit."""
    return list(TOOLS[tool_name].measures) if tool_name in TOOLS else []


def default_rule(tool_name: str) -> dict[str, Any]:
    """A tool's default matrix row: what the tool declares (`Tool.approval_rule`), else any approver."""
    declared = dict(TOOLS[tool_name].approval_rule) if tool_name in TOOLS else {}
    if "limits" in declared:
        declared["limits"] = {name: str(limit) for name, limit in declared["limits"].items() if limit is not None}
    return declared or {"roles": list(DECIDING_ROLES)}


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


def limit_of(rule: ApprovalRule | None, measure: Measure) -> Decimal | None:
    return None if rule is None else _decimal((rule.limits or {}).get(measure.name))


def amount_shown(measure: Measure, value: Decimal, currency: str = "") -> str:
    """12 · 600,000.00 CNY: a count as a whole number, money with two decimals and its currency."""
    if measure.unit == MONEY:
        return f"{value:,.2f} {currency}".strip()
    return f"{value.normalize():,f}"


@dataclass(frozen=True)
class LimitShown:
    """One measure's limit on the matrix page, in the reader's language."""
    measure: Measure
    label: str       # "Headcount limit", as the domain words the measure
    unit: str        # the currency, or what the count counts
    field: str       # the form field: "<measure>_limit"
    value: str       # the limit as typed ("" = no limit)
    step: str        # the number input's step


@dataclass(frozen=True)
class MatrixRow:
    rule: ApprovalRule
    limits: list[LimitShown]
    title: str = ""  # the tool's short name, in the reader's language (its declared `title`)


def matrix_rows(membership: Membership) -> list[MatrixRow]:
    """The matrix page: each rule with the limits of the measures its tool declares, and only those."""
    rows = []
    for rule in rules_for(membership):
        shown = []
        for measure in measures_of(rule.tool):
            limit = limit_of(rule, measure)
            if measure.unit == MONEY:
                unit = measure.currency or _("in the currency of each request")
            else:
                unit = _(measure.unit) if measure.unit else ""
            shown.append(LimitShown(
                measure=measure, label=_("%(measure)s limit") % {"measure": _(measure.label)}, unit=unit,
                field=f"{measure.name}_limit", step="0.01" if measure.unit == MONEY else "1",
                value="" if limit is None else f"{limit.normalize():f}"))  # 500000, as typed
        rows.append(MatrixRow(rule=rule, limits=shown, title=tool_title(rule.tool)))
    return rows


@dataclass(frozen=True)
class Route:
    roles: list[str]
    needs_role: str
    reason: str                   # English, for search and logs
    reason_words: dict[str, Any]  # the same as meaning (config.words), rendered for each reader
    over_limit: bool = False      # the size is above one of the rule's limits


def approval_route(*, tenant_id: int, tool: str, measures: dict[str, Any]) -> Route:
    """Who may approve `tool` at this size, by the tenant's matrix (no row: any approver).

    Each measure the tool declares is compared with the rule's limit for it, if any."""
    rule = rule_for(tenant_id, tool)
    roles = [r for r in (rule.roles if rule else DECIDING_ROLES) if r in DECIDING_ROLES] or [Role.ADMIN]
    over, limited = [], False
    for measure in measures_of(tool):
        limit = limit_of(rule, measure)
        if limit is None:
            continue
        limited = True
        value = _decimal(measures.get(measure.name))
        if value is None:
            continue
        currency = str(measures.get("currency") or "") if measure.unit == MONEY else ""
        comparable = not (measure.currency and currency and currency != measure.currency)
        if value > limit or not comparable:
            key = (gettext_noop("%(measure)s of %(value)s is above the limit of %(limit)s") if comparable else
                   gettext_noop("%(measure)s of %(value)s cannot be compared with the limit of %(limit)s"))
            over.append(words(key, measure=words(measure.label), value=amount_shown(measure, value, currency),
                              limit=amount_shown(measure, limit, measure.currency or currency)))
    if over:
        roles = [rule.above_limit_role]
    needs = Role.APPROVER if Role.APPROVER in roles else roles[0]
    if over:
        over_words = _joined(over, gettext_noop("%(first)s; %(second)s"))
        reason = words(gettext_noop("%(over)s: needs %(role)s."), over=over_words,
                       role=words(ROLE_WORDS.get(needs, needs)))
    elif limited:
        reason = words(gettext_noop("Within the matrix's limits: %(roles)s may approve."), roles=_roles_words(roles))
    else:
        reason = words(gettext_noop("%(roles)s may approve."), roles=_roles_words(roles, first=True))
    return Route(roles=list(roles), needs_role=needs, reason=words_english(reason), reason_words=reason,
                 over_limit=bool(over))


def _roles_words(roles: list[str], first: bool = False) -> dict[str, Any]:
    """"an approver or a tenant admin" as words ("An approver …" at a sentence's start)."""
    named = [words(ROLE_WORDS.get(r, r)) for r in roles]
    if first:
        named[0] = words(ROLE_WORDS_FIRST.get(roles[0], roles[0]))
    return _joined(named, gettext_noop("%(first)s or %(second)s"))


def _joined(parts: list[dict[str, Any]], pair_key: str) -> dict[str, Any]:
    joined = parts[0]
    for part in parts[1:]:
        joined = words(pair_key, first=joined, second=part)
    return joined


def routing_reason_shown(reason: Stored) -> str:
    """A stored routing reason in the reader's language (prose routed before words existed: as stored)."""
    return words_render(reason)


def _decimal(value: Any) -> Decimal | None:
    try:
        number = None if value is None or value == "" else Decimal(str(value))
    except InvalidOperation:
        return None
    return number if number is not None and number.is_finite() else None


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
        who = _("an approver") if approval.needs_role == Role.APPROVER else _("a tenant admin")
        return "matrix_refused", _("The approval matrix routes this to %(who)s (%(reason)s); your role may not "
                                   "approve it.") % {"who": who, "reason": approval.routing_reason_shown.rstrip(".。")}
    return None


# --- Editing the matrix ----------------------------------------------------------------------

LIMIT_MAX = Decimal("1e15")


def matrix_rule_update(*, membership: Membership, tool: str, roles: list[str], deadline_seconds: int,
                       remind_before_seconds: int, limits: dict[str, Any], above_limit_role: str) -> ApprovalRule:
    """A tenant admin changes one row; pending approvals of that tool are re-routed.

    `limits`: measure name → its limit as typed (blank or None: no limit), for the
    measures the tool declares. A bad one is refused and nothing changes."""
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
    declared = {m.name: m for m in measures_of(tool)}
    unknown = sorted(set(limits) - set(declared))
    if unknown:
        raise Unprocessable(_("%(tool)s measures no %(measure)s.") % {"tool": repr(tool), "measure": repr(unknown[0])},
                            code="unknown_measure")
    stored = {}
    for name, value in limits.items():
        limit = limit_parse(declared[name], value)
        if limit is not None:
            stored[name] = f"{limit.normalize():f}"
    with transaction.atomic():
        rule, _created = ApprovalRule.objects.update_or_create(
            tenant_id=membership.tenant_id, tool=tool,
            defaults={"roles": roles, "deadline_seconds": deadline_seconds,
                      "remind_before_seconds": remind_before_seconds, "limits": stored,
                      "above_limit_role": above_limit_role, "updated_by": membership.user})
        approvals_reroute(tenant_id=membership.tenant_id, tool=tool)
    return rule


def limit_parse(measure: Measure, value: Any) -> Decimal | None:
    """A limit as typed: blank is none; else 0 or more, whole for a count, cents at most for money."""
    if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
        value = str(value)
    places = 2 if measure.unit == MONEY else 0
    try:
        return number_parse(value, what=measure.name, minimum=0, maximum=LIMIT_MAX, places=places)
    except InvalidNumber:
        label = _(measure.label)
        if measure.unit == MONEY:
            message = _("The limit for “%(measure)s” must be an amount from 0 to %(max)s, with at most two decimals.")
        else:
            message = _("The limit for “%(measure)s” must be a whole number from 0 to %(max)s.")
        raise Unprocessable(message % {"measure": label, "max": f"{LIMIT_MAX:,f}"}, code="bad_limit") from None


def approvals_reroute(*, tenant_id: int, tool: str) -> int:
    """Apply the current matrix to the pending approvals of `tool` (a decided one stays as decided)."""
    changed = 0
    for approval in ApprovalRequest.objects.filter(tenant_id=tenant_id, tool=tool, status=ApprovalStatus.PENDING):
        route = approval_route(tenant_id=tenant_id, tool=tool, measures=approval.measures)
        if (route.roles, route.needs_role, route.reason_words) == (approval.allowed_roles, approval.needs_role,
                                                                   approval.routing_reason_words):
            continue
        # Only while still pending: a decision that lands first keeps the routing it was made under.
        if ApprovalRequest.objects.filter(id=approval.id, status=ApprovalStatus.PENDING).update(
                allowed_roles=route.roles, needs_role=route.needs_role, routing_reason=route.reason,
                routing_reason_words=route.reason_words):
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
