"""Celery tasks of the HR plane: thin — fetch by id, call the supervisor."""
from datetime import timedelta

from celery import shared_task
from django.utils import timezone

from . import supervisor
from .models import OutboxEvent


@shared_task(acks_late=True, reject_on_worker_lost=True)
def tan_event_consume(event_id: int) -> None:
    supervisor.tan_event_consume(event_id)


@shared_task
def outbox_sweep() -> int:
    """The outbox's safety net: events whose hand-over was lost (a crash between commit and
    send, a flushed broker) are consumed here. Consuming is idempotent, so overlap is harmless."""
    settled = timezone.now() - timedelta(seconds=2)
    ids = list(OutboxEvent.objects.filter(consumed_at__isnull=True, created_at__lt=settled)
               .values_list("id", flat=True)[:100])
    for event_id in ids:
        supervisor.tan_event_consume(event_id)
    return len(ids)
