from functools import cache

from django.utils.functional import SimpleLazyObject

from approvals.models import ApprovalRequest, ApprovalStatus
from config.menu import menu_entries


def menu(request):
    """The top bar's entries for the domains' pages (config.menu), as they registered them."""
    return {"menu_entries": menu_entries()}


def pending_approvals(request):
    """The top bar's Approvals count (pending requests of the caller's tenant) and,
    for approvers, how many of them have had a deadline reminder addressed to them.
    Counted only when a template shows them (a page's partials, refreshed on every
    chat message and run event, do not)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"pending_approvals": 0, "approval_reminders": 0}

    @cache
    def counts() -> tuple[int, int]:
        if not hasattr(user, "membership"):
            return 0, 0
        membership = user.membership
        pending = ApprovalRequest.objects.filter(tenant_id=membership.tenant_id, status=ApprovalStatus.PENDING)
        reminders = 0
        if membership.can_approve:
            reminders = sum(1 for recipients in pending.filter(reminder__isnull=False)
                            .values_list("reminder__recipients", flat=True) if user.username in (recipients or []))
        return pending.count(), reminders

    return {"pending_approvals": SimpleLazyObject(lambda: counts()[0]),
            "approval_reminders": SimpleLazyObject(lambda: counts()[1])}
