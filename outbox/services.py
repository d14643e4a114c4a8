"""What a committed write owes the world after its commit, and how it gets there.

A write commits, then hands work to the broker (a step to run, a chat message to post, a
push). The broker may be down at that moment: the write is still committed, so the
answer must still say what was decided. Two guarantees, by what the follow-up is:

- `publish_on_commit(send, what, recovered_by=…)`: the database already holds what
  the message is about (a node that is ready, a run with no plan yet, an HR outbox
  row). A failed send is logged as what it is — the write committed, its publish
  pending, and who sends it once the broker answers — and never raised into the
  response.
- `outbox_put(task, [args, …])`: nothing else remembers the follow-up (a news message
  the chat owes its reader). A row is written in the write's own transaction and a
  worker runs the task from it, deleting the row in the same transaction
  (`outbox_deliver`): delivered exactly once, after any outage, whoever delivers it —
  the message sent on commit, the periodic sweep, or the drain when a worker's broker
  connection comes back (config.celery.on_broker_connect).
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import timedelta

from django.db import DatabaseError, transaction
from django.db.models import F
from django.utils import timezone

from config.celery import app

from .models import OutboxMessage

log = logging.getLogger(__name__)

DELIVER = "outbox.tasks.deliver"
DRAIN = "outbox.tasks.drain"
MAX_ATTEMPTS = 20  # a task that failed this often waits for a person (last_error), not for ever
DRAIN_GRACE_SECONDS = 1.0  # the sweep leaves younger rows to the message sent on their commit
DRAIN_BATCH = 500


def publish(send: Callable[[], None], what: str, *, recovered_by: str) -> bool:
    """Send now; on failure say what is true (committed, publish pending, who sends it)
    and return False instead of raising."""
    try:
        send()
        return True
    except Exception as err:  # whatever the broker's client raises: the write stands
        log.warning("%s: committed; its publish is pending (%s: %s); %s", what, type(err).__name__,
                    str(err).splitlines()[0] if str(err) else "", recovered_by)
        return False


def publish_on_commit(send: Callable[[], None], what: str, *, recovered_by: str) -> None:
    """`send` once the surrounding transaction commits (dropped with it on a rollback);
    a broker that does not answer never turns the committed write into an error."""
    transaction.on_commit(lambda: publish(send, what, recovered_by=recovered_by))


_held: ContextVar[bool] = ContextVar("keel_outbox_held", default=False)


@contextmanager
def outbox_held() -> Iterator[None]:
    """Nothing is owed to the workers inside: work driven here in process (a replay in a
    sandbox that is deleted once compared, an evaluation) tells nobody outside about itself."""
    token = _held.set(True)
    try:
        yield
    finally:
        _held.reset(token)


def outbox_is_held() -> bool:
    """Whether this context owes nothing (outbox_held): a statement that writes its own rows
    (timeline.sql's `owed`) asks before it owes anything."""
    return _held.get()


def outbox_put(task: str, calls: list[list]) -> list[int]:
    """Owe one call of `task` per args list: rows written in the current transaction
    (outside one, at once), delivered by a worker after the commit."""
    if not calls or _held.get():
        return []
    rows = OutboxMessage.objects.bulk_create([OutboxMessage(task=task, args=args) for args in calls])
    ids = [row.id for row in rows]
    outbox_send_on_commit(ids, f"{task} ×{len(ids)}")
    return ids


def outbox_send_on_commit(ids: list[int], what: str) -> None:
    """Ask a worker to deliver rows already written (by outbox_put, or by a statement of
    its own) once the transaction commits; if the broker does not answer, the rows wait for
    the sweep or the next reconnect's drain."""
    if ids:
        publish_on_commit(lambda: app.send_task(DELIVER, args=[ids]), what,
                          recovered_by="the outbox delivers it when a worker reaches the broker again")


def outbox_deliver(ids: list[int]) -> int:
    """Run each owed call that is still owed, deleting its row in the same transaction:
    whoever delivers it second finds no row (or a locked one, skipped). A call that
    raises is counted and left for the next sweep. Returns how many were delivered."""
    delivered = 0
    for message_id in ids:
        row = None
        try:
            with transaction.atomic():
                row = (OutboxMessage.objects.select_for_update(skip_locked=True)
                       .filter(id=message_id, attempts__lt=MAX_ATTEMPTS).first())
                if row is None:
                    continue  # delivered already, being delivered, or given up on
                app.tasks[row.task](*row.args)
                row.delete()
            delivered += 1
        except DatabaseError:
            raise  # the database is away: the rows wait, the sweep comes back
        except Exception as err:
            log.exception("outbox message %s (%s): its task failed; it is tried again by the next sweep",
                          message_id, row.task if row is not None else "?")
            OutboxMessage.objects.filter(id=message_id).update(attempts=F("attempts") + 1,
                                                               last_error=f"{type(err).__name__}: {err}"[:2000])
    return delivered


def outbox_drain(*, older_than: float = DRAIN_GRACE_SECONDS) -> int:
    """Deliver what is still owed, the oldest first (the sweep; a broker reconnect with 0)."""
    since = timezone.now() - timedelta(seconds=older_than)
    ids = list(OutboxMessage.objects.filter(created_at__lte=since, attempts__lt=MAX_ATTEMPTS)
               .order_by("id").values_list("id", flat=True)[:DRAIN_BATCH])
    return outbox_deliver(ids)
