import socket

from django.db import transaction
from django.utils import timezone

from tenants.models import Membership

from .models import WiringCheck
from .push import broadcast_on_commit, tenant_group


@transaction.atomic
def wiring_check_start(*, membership: Membership) -> WiringCheck:
    """Record a wiring check and hand it to a worker once the row is committed."""
    from .tasks import wiring_check_run

    check = WiringCheck.objects.create(tenant=membership.tenant, requested_by=membership.user)
    transaction.on_commit(lambda: wiring_check_run.delay(check.id))
    return check


@transaction.atomic
def wiring_check_complete(*, check_id: int) -> bool:
    """Mark the check done (once) and push the news to the tenant's sockets."""
    now = timezone.now()
    updated = WiringCheck.objects.filter(id=check_id, completed_at__isnull=True).update(
        completed_at=now, worker=socket.gethostname()
    )
    if not updated:
        return False  # gone, or a redelivery after it was done
    check = WiringCheck.objects.get(id=check_id)
    broadcast_on_commit(tenant_group(check.tenant_id), {
        "type": "wiring.done",
        "check_id": str(check.id),
        "completed_at": now.isoformat(),
        "worker": check.worker,
    })
    return True
