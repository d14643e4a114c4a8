"""Tenant-scoped reads. Every read of tenant data starts from a membership."""
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet
from django.utils.translation import gettext

from config.api import Forbidden, NotFound

from .models import Membership


# Where a request's user keeps the membership read for it (membership_of_request).
_READ = "_keel_membership"


def membership_of_request(user: AbstractBaseUser) -> Membership | None:
    """Read a logged-in user's membership once for the request (the language middleware
    does, first): membership_for_user then takes it from the user, no second query."""
    membership = _membership_read(user)
    setattr(user, _READ, membership)
    return membership


def _membership_read(user: AbstractBaseUser) -> Membership | None:
    return Membership.objects.select_related("tenant", "user").filter(user=user).first()


def membership_for_user(user: AbstractBaseUser | AnonymousUser) -> Membership:
    """The caller's membership; a user without one may not see any tenant data."""
    if not user.is_authenticated:
        raise Forbidden(gettext("Log in first."), code="not_authenticated")
    membership = getattr(user, _READ, False)
    if membership is False:  # not read for this request (an API token's user, a websocket, a task)
        membership = _membership_read(user)
    if membership is None:
        raise Forbidden(gettext("Your account belongs to no tenant; ask an admin to add you."), code="no_tenant")
    return membership


def members_for(membership: Membership) -> QuerySet[Membership]:
    return Membership.objects.filter(tenant_id=membership.tenant_id).select_related("user")


def member_get(membership: Membership, member_id: int) -> Membership:
    try:
        return members_for(membership).get(pk=member_id)
    except Membership.DoesNotExist:
        # Another tenant's id and a missing id answer the same: nothing leaks.
        raise NotFound(gettext("No such member."))
