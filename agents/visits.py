"""When a person last read a conversation: the chat opens at the newest message with a marker
before the news that arrived since the person's last visit, so what is new is seen first."""
from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from .models import ConversationVisit


def conversation_visit(*, user_id: int, conversation_id: int) -> datetime | None:
    """Record this visit; return when the person was last here (None: never)."""
    now = timezone.now()
    visit, created = ConversationVisit.objects.get_or_create(conversation_id=conversation_id, user_id=user_id,
                                                             defaults={"seen_at": now})
    if created:
        return None
    ConversationVisit.objects.filter(id=visit.id).update(seen_at=now)
    return visit.seen_at
