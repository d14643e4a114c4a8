from .models import ApprovalRequest, ApprovalStatus


def pending_approvals(request):
    """The top bar's Approvals count: pending requests of the caller's tenant."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or not hasattr(user, "membership"):
        return {"pending_approvals": 0}
    return {"pending_approvals": ApprovalRequest.objects.filter(
        tenant_id=user.membership.tenant_id, status=ApprovalStatus.PENDING).count()}
