from config.api import DomainError, NotFound
from tenants.models import Membership

from .models import Conversation, Event, WiringCheck


def wiring_check_get(membership: Membership, check_id: int) -> WiringCheck:
    check = WiringCheck.objects.filter(tenant_id=membership.tenant_id, id=check_id).first()
    if check is None:
        raise NotFound("No such wiring check.")
    return check


def conversation_get_for(membership: Membership, conversation_id: int) -> Conversation:
    conversation = Conversation.objects.filter(tenant_id=membership.tenant_id, id=conversation_id).first()
    if conversation is None:
        raise NotFound("No such conversation.")
    return conversation


def events_after(conversation: Conversation, after: str | int | None, limit: int = 500):
    try:
        after = int(after or 0)
    except (TypeError, ValueError):
        raise DomainError("`after` must be a whole number (the last sequence number you saw).")
    return Event.objects.filter(conversation=conversation, seq__gt=after).order_by("seq")[:limit]
