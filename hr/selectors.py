"""Reads of the HR system of record, always within the caller's tenant."""
from __future__ import annotations

from django.db.models import Count, QuerySet
from django.utils.translation import gettext as _

from config.api import NotFound
from tenants.models import Membership
from workflows.models import Run

from .models import Match, OutboxEvent, Tan


def tans_for(membership: Membership) -> QuerySet[Tan]:
    return Tan.objects.filter(tenant_id=membership.tenant_id).annotate(match_count=Count("matches"))


def tan_get_for(membership: Membership, tan_id: int) -> Tan:
    tan = tans_for(membership).filter(id=tan_id).first()
    if tan is None:
        raise NotFound(_("No such TAN."), code="tan_not_found")
    return tan


def matches_for_tan(membership: Membership, tan_id: int) -> QuerySet[Match]:
    tan = tan_get_for(membership, tan_id)
    return Match.objects.filter(tenant_id=membership.tenant_id, tan=tan).select_related("candidate").order_by("rank")


def events_for_tan(membership: Membership, tan_id: int) -> QuerySet[OutboxEvent]:
    return OutboxEvent.objects.filter(tenant_id=membership.tenant_id, tan_id=tan_id).order_by("created_at")


def matching_run_for_tan(membership: Membership, tan_id: int) -> Run | None:
    return Run.objects.filter(tenant_id=membership.tenant_id, blueprint="candidate_matching",
                              params__tan_id=str(tan_id)).first()
