"""Reads of the expense system of record, always within the caller's tenant."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from config.api import NotFound
from tenants.models import Membership
from workflows.models import Run
from workflows.selectors import record_run_values, run_holding

from expenses.models import ExpenseClaim, IdempotencyRecord, PolicyVerdict


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


@dataclass
class PolicyShown:
    """The policy verdict a claim page shows: the claim's own once it is submitted, else the one
    the run that holds it reached (a check runs before the submit, which waits for approval)."""

    verdict: str
    label: str
    limit: Any = None
    source: str = ""
    run: Run | None = None


def claim_policy(claim: ExpenseClaim) -> PolicyShown | None:
    return claims_policy([claim])[claim.id]


def claims_policy(claims: list[ExpenseClaim]) -> dict[int, PolicyShown | None]:
    """Each claim's PolicyShown (a page of them: the runs' checks read in one go)."""
    unchecked = [c for c in claims if not c.policy_verdict]
    checks = record_run_values(tenant_id=unchecked[0].tenant_id, key="application_id", values=[c.id for c in unchecked],
                               wanted="policy_check") if unchecked else {}
    shown: dict[int, PolicyShown | None] = {}
    for claim in claims:
        if claim.policy_verdict:
            shown[claim.id] = PolicyShown(verdict=claim.policy_verdict, label=claim.get_policy_verdict_display(),
                                          limit=claim.policy_limit, source=claim.policy_source)
            continue
        run, check = checks.get(str(claim.id), (None, None))
        good = isinstance(check, dict) and check.get("verdict") in PolicyVerdict.values
        shown[claim.id] = PolicyShown(verdict=check["verdict"], label=PolicyVerdict(check["verdict"]).label,
                                      limit=check.get("limit"), source=check.get("source") or "",
                                      run=run) if good else None
    return shown


def claims_created_under(tenant_id: int, keys: list[str]) -> dict[str, int]:
    """How many claims each idempotency key created (the metrics' duplicate side effects):
    a key's record is written once with its claim, so a key counts at most once."""
    return dict(Counter(IdempotencyRecord.objects.filter(tenant_id=tenant_id, operation="claim_create", key__in=keys)
                        .values_list("key", flat=True)))
