"""Who may read an employee's ID and bank numbers, and how everyone else sees them: the last
four characters, enough to tell two accounts apart, never enough to use one."""
from __future__ import annotations

from tenants.models import Membership, Role

MASK = "••••"


def masked(value: str) -> str:
    """"•••• 1234" for "6222021234": the last four kept. A value of four characters or fewer
    keeps none (its last four would be all of it); an empty value stays empty."""
    value = (value or "").strip()
    if not value:
        return ""
    if len(value) <= 4:
        return MASK
    return f"{MASK} {value[-4:]}"


def sensitive_visible(user, tenant_id: int, deciding: bool = False) -> bool:
    """Whether `user` reads the raw numbers of `tenant_id`'s employees: its admins; with
    `deciding`, also an approver deciding a month (they sign off the bank file's accounts)."""
    if user is None or not getattr(user, "is_authenticated", False):
        return False
    membership = Membership.objects.filter(user_id=user.pk, tenant_id=tenant_id).only("role").first()
    if membership is None:
        return False
    if membership.role == Role.ADMIN:
        return True
    return deciding and membership.can_approve


def shown(value: str, *, visible: bool) -> str:
    """The value as this reader sees it: raw when `visible`, else masked."""
    return value if visible else masked(value)
