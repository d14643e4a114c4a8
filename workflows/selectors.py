from typing import Any

from django.utils.translation import gettext as _

from config.api import NotFound
from tenants.models import Membership

from .models import RUN_FINAL, Node, Run, StateCoordinate


def run_get_for(membership: Membership, run_id: int) -> Run:
    run = Run.objects.filter(id=run_id, tenant_id=membership.tenant_id).first()
    if run is None:
        raise NotFound(_("No such run."))
    return run


def node_acceptance(node: Node) -> list[dict]:
    """Each acceptance criterion of the step and whether its receipt met it (None: not
    checked yet), then any further check the tool made."""
    results = {r["criterion"]: r for r in node.acceptance_results or []}
    rows = [{"criterion": c, "met": results[c]["met"] if c in results else None,
             "detail": results.get(c, {}).get("detail", "")} for c in node.acceptance]
    rows += [{"criterion": c, "met": r["met"], "detail": r.get("detail", "")}
             for c, r in results.items() if c not in node.acceptance]
    return rows


def run_holding(*, tenant_id: int, key: str, value: object) -> Run | None:
    """The run that holds a record: one not ended for good (a failed or blocked run may be
    retried, so it keeps what it took, as RUN_FINAL says) whose state names the record under
    `key` (the coordinate a tool produced: the claim it created, say). Its approval and its
    preconditions were read off that record, so the record changes only through the run."""
    return (Run.objects.filter(tenant_id=tenant_id, coordinates__key=key, coordinates__value=str(value))
            .exclude(status__in=RUN_FINAL).order_by("-created_at").first())


def record_run_value(*, tenant_id: int, key: str, value: object, wanted: str) -> tuple[Run, Any] | None:
    """What the newest run that names a record under `key` recorded under `wanted`, from its
    newest plan version: (run, value), or None when no such run recorded it. A page about the
    record reads what the run found (a check's verdict) before the record itself holds it."""
    return record_run_values(tenant_id=tenant_id, key=key, values=[value], wanted=wanted).get(str(value))


def record_run_values(*, tenant_id: int, key: str, values: list[object], wanted: str) -> dict[str, tuple[Run, Any]]:
    """record_run_value for many records in one query (a page listing them): by each record's
    value as text, only those some run recorded `wanted` for."""
    values = [str(value) for value in values]
    if not values:
        return {}
    records: dict[int, set[str]] = {}  # the runs that name these records, and which they name
    for run_id, value in StateCoordinate.objects.filter(tenant_id=tenant_id, key=key, value__in=values
                                                        ).values_list("run_id", "value"):
        records.setdefault(run_id, set()).add(str(value))
    rows = (StateCoordinate.objects.filter(tenant_id=tenant_id, key=wanted, run_id__in=records)
            .select_related("run").order_by("-run__created_at", "-plan_version", "-id"))
    found: dict[str, tuple[Run, Any]] = {}
    for row in rows:
        for record in records[row.run_id]:
            found.setdefault(record, (row.run, row.value))
    return found


def runs_for(membership: Membership):
    return Run.objects.filter(tenant_id=membership.tenant_id)


# What a person may do to a run that is not theirs. Answering its question and changing what it
# is for ("call it X") say the starter's intent, so they are the starter's alone; cancelling and
# retrying are also for approvers and tenant admins, who look after the tenant's runs (and a
# cancel is how a record a run holds is let go).
RUN_ACTS_FOR_APPROVERS = frozenset({"cancel", "retry"})


def run_act_allowed(membership: Membership, run: Run, act: str) -> bool:
    """May `membership` answer, change, cancel or retry `run`? One rule for every door (the
    API, the pages, the chat): the services check it, the pages ask it to show their controls."""
    if run.tenant_id != membership.tenant_id:
        return False
    return run.created_by_id == membership.user_id or (act in RUN_ACTS_FOR_APPROVERS and membership.can_approve)


def run_control_allowed(membership: Membership, run: Run) -> bool:
    """Cancel and retry: whoever started the run, approvers and tenant admins."""
    return run_act_allowed(membership, run, "cancel")


def runs_filtered(membership: Membership, *, blueprint: str = "", status: str = ""):
    """The tenant's runs, newest first, optionally of one blueprint and one status."""
    runs = runs_for(membership).order_by("-created_at", "-id")
    if blueprint:
        runs = runs.filter(blueprint=blueprint)
    if status:
        runs = runs.filter(status=status)
    return runs
