from approvals.models import ApprovalRequest, ApprovalStatus


def pending_approvals(request):
    """The top bar's Approvals count (pending requests of the caller's tenant) and,
    for approvers, how many of them have had a deadline reminder addressed to them."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or not hasattr(user, "membership"):
        return {"pending_approvals": 0, "approval_reminders": 0}
    membership = user.membership
    pending = ApprovalRequest.objects.filter(tenant_id=membership.tenant_id, status=ApprovalStatus.PENDING)
    reminders = 0
    if membership.can_approve:
        reminders = sum(1 for recipients in pending.filter(reminder__isnull=False)
                        .values_list("reminder__recipients", flat=True) if user.username in (recipients or []))
    return {"pending_approvals": pending.count(), "approval_reminders": reminders}
