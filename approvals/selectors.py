from tenants.models import Membership

from .models import ApprovalRequest


def approvals_for(membership: Membership, status: str | None = None):
    approvals = ApprovalRequest.objects.filter(tenant_id=membership.tenant_id).select_related(
        "run", "node", "requested_by", "decided_by")
    return approvals.filter(status=status) if status else approvals
