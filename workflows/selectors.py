from config.api import NotFound
from tenants.models import Membership

from .models import Run


def run_get_for(membership: Membership, run_id: int) -> Run:
    run = Run.objects.filter(id=run_id, tenant_id=membership.tenant_id).first()
    if run is None:
        raise NotFound("No such run.")
    return run


def runs_for(membership: Membership):
    return Run.objects.filter(tenant_id=membership.tenant_id)
