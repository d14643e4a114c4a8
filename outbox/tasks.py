"""Celery tasks: thin — the outbox's delivery and its sweep."""
from celery import shared_task

from config.celery import on_broker_connect

from .services import DELIVER, DRAIN, outbox_deliver, outbox_drain


@shared_task(name=DELIVER, acks_late=True, reject_on_worker_lost=True)
def deliver(ids: list[int]) -> int:
    return outbox_deliver(ids)


@shared_task(name=DRAIN)
def drain(older_than: float | None = None) -> int:
    """The sweep (beat), and the catch-up when a worker's broker connection comes back
    (every row, however young: the messages sent meanwhile may be lost with the broker)."""
    return outbox_drain() if older_than is None else outbox_drain(older_than=older_than)


on_broker_connect(DRAIN, kwargs={"older_than": 0})
