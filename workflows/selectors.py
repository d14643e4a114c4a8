from config.api import NotFound
from tenants.models import Membership

from .models import Node, Run


def run_get_for(membership: Membership, run_id: int) -> Run:
    run = Run.objects.filter(id=run_id, tenant_id=membership.tenant_id).first()
    if run is None:
        raise NotFound("No such run.")
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


def runs_for(membership: Membership):
    return Run.objects.filter(tenant_id=membership.tenant_id)
