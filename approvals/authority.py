"""What the system of record asks before an agent's write (DESIGN.md §4: it re-checks approval):
is there a decided, approved request, in this tenant, for this tool, whose
resolved arguments are exactly the ones being written?"""
from typing import Any

from django.utils.translation import gettext as _

from config.api import Forbidden
from tenants.models import Membership
from workflows.tools import TOOLS

from .models import ApprovalDecision, ApprovalRequest, ApprovalStatus


def approval_covers(*, tenant_id: int, approval_id: int | None, tool: str, arguments: dict[str, Any]) -> None:
    """Raise Forbidden unless approval `approval_id` authorises `tool` with `arguments`.

    `arguments` holds the write's own parameters (ids as ints); each must equal
    the value the approver saw in the approval's resolved arguments.
    """
    if approval_id is None:
        raise Forbidden(_("The agent may not run %(tool)s without a decided approval.") % {"tool": tool},
                        code="approval_required")
    approval = ApprovalRequest.objects.filter(id=approval_id, tenant_id=tenant_id).first()
    if approval is None or approval.status != ApprovalStatus.APPROVED:
        raise Forbidden(_("No approved request authorises this %(tool)s.") % {"tool": tool}, code="approval_required")
    _decider_check(approval, tool)
    # An approved step also authorises its declared compensation (restoring the very
    # snapshot the approver saw named in the step's arguments, say).
    compensation = TOOLS[approval.tool].compensation if approval.tool in TOOLS else None
    covered = {approval.tool} | ({compensation} if compensation else set())
    if tool not in covered:
        raise Forbidden(_("No approved request authorises this %(tool)s.") % {"tool": tool}, code="approval_required")
    resolved = approval.arguments
    for name, value in arguments.items():
        if str(resolved.get(name)) != str(value):
            raise Forbidden(_("The approval for %(tool)s was given for a different %(name)s.")
                            % {"tool": tool, "name": name},
                            code="approval_mismatch")


def _decider_check(approval, tool: str) -> None:
    """The decision itself again, at the write: the decider was someone other than the
    requester, of this tenant, and of a role the approval matrix allowed when they decided.
    An approval marked approved by any other path (a stray update, the admin site) fails here."""
    if approval.decided_by_id is None or approval.decided_by_id == approval.requested_by_id:
        raise Forbidden(_("The approval for this %(tool)s breaks the four-eyes rule: its requester decided it.")
                        % {"tool": tool},
                        code="four_eyes")
    decider = Membership.objects.filter(user_id=approval.decided_by_id, tenant_id=approval.tenant_id).first()
    allowed = approval.allowed_roles or ["approver", "admin"]
    if decider is None or approval.decided_role not in allowed:
        raise Forbidden(_("The approval for this %(tool)s was decided by someone the approval matrix did not allow.")
                        % {"tool": tool},
                        code="matrix_refused")
    if not ApprovalDecision.objects.filter(approval=approval, user_id=approval.decided_by_id, accepted=True,
                                           verdict="approved").exists():
        raise Forbidden(_("The approval for this %(tool)s has no recorded decision.") % {"tool": tool},
                        code="approval_required")
