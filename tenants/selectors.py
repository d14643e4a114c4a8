"""Tenant-scoped reads. Every read of tenant data starts from a membership."""
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet
from django.utils.translation import gettext

from config.api import Forbidden, NotFound

from .models import Membership


def membership_for_user(user: AbstractBaseUser | AnonymousUser) -> Membership:
    """The caller's membership; a user without one may not see any tenant data."""
    if not user.is_authenticated:
        raise Forbidden(gettext("Log in first."), code="not_authenticated")
    try:
        return Membership.objects.select_related("tenant", "user").get(user=user)
    except Membership.DoesNotExist:
        raise Forbidden(gettext("Your account belongs to no tenant; ask an admin to add you."), code="no_tenant")


def members_for(membership: Membership) -> QuerySet[Membership]:
    return Membership.objects.filter(tenant_id=membership.tenant_id).select_related("user")


def member_get(membership: Membership, member_id: int) -> Membership:
    try:
        return members_for(membership).get(pk=member_id)
    except Membership.DoesNotExist:
        # Another tenant's id and a missing id answer the same: nothing leaks.
        raise NotFound(gettext("No such member."))
