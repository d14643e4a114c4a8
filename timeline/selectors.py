from config.api import NotFound
from tenants.models import Membership

from .models import WiringCheck


def wiring_check_get(membership: Membership, check_id: int) -> WiringCheck:
    check = WiringCheck.objects.filter(tenant_id=membership.tenant_id, id=check_id).first()
    if check is None:
        raise NotFound("No such wiring check.")
    return check
