"""Reads of the expense system of record, always within the caller's tenant."""
from __future__ import annotations

from collections import Counter

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from config.api import NotFound
from tenants.models import Membership
from workflows.models import Run
from workflows.selectors import run_holding

from expenses.models import ExpenseClaim, IdempotencyRecord


def claims_for(membership: Membership) -> QuerySet[ExpenseClaim]:
    return (ExpenseClaim.objects.filter(tenant_id=membership.tenant_id)
            .select_related("claimant").prefetch_related("invoices"))


def claim_get_for(membership: Membership, claim_id: int) -> ExpenseClaim:
    claim = claims_for(membership).filter(id=claim_id).first()
    if claim is None:
        raise NotFound(_("No such expense claim."), code="claim_not_found")
    return claim


def claim_holder(claim: ExpenseClaim) -> Run | None:
    """The run that created the claim and has not ended for good: the claim changes only through it."""
    return run_holding(tenant_id=claim.tenant_id, key="application_id", value=claim.id)


def claims_created_under(tenant_id: int, keys: list[str]) -> dict[str, int]:
    """How many claims each idempotency key created (the metrics' duplicate side effects):
    a key's record is written once with its claim, so a key counts at most once."""
    return dict(Counter(IdempotencyRecord.objects.filter(tenant_id=tenant_id, operation="claim_create", key__in=keys)
                        .values_list("key", flat=True)))
