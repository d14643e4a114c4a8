"""The outbox: a committed write whose publish fails stays committed and says so; what it
owes is delivered once, whoever delivers it, and a rollback owes nothing."""
import logging
from unittest import mock

import pytest
from celery import shared_task
from django.db import transaction
from kombu.exceptions import OperationalError as BrokerDown

from config.celery import app
from outbox.models import OutboxMessage
from outbox.services import MAX_ATTEMPTS, outbox_deliver, outbox_drain, outbox_put, publish_on_commit
from tenants.models import Tenant

pytestmark = pytest.mark.django_db

CALLS: list[tuple] = []


@shared_task(name="outbox.tests.record")
def record(*args) -> None:
    if args and args[0] == "fail":
        raise ValueError("the task's own failure")
    CALLS.append(args)


@pytest.fixture(autouse=True)
def _calls():
    CALLS.clear()
    yield


def broker_down(*args, **kwargs):
    raise BrokerDown("Error 111 connecting to 127.0.0.1:6379. Connection refused.")


def test_it_keeps_the_write_when_the_publish_after_commit_fails(django_capture_on_commit_callbacks, caplog):
    with mock.patch.object(app, "send_task", side_effect=broker_down), \
            django_capture_on_commit_callbacks(execute=True), caplog.at_level(logging.WARNING):
        with transaction.atomic():
            Tenant.objects.create(slug="outage-co", name="Outage Co")
            publish_on_commit(lambda: app.send_task("x"), "tenant outage-co", recovered_by="the sweep sends it")
    assert Tenant.objects.filter(slug="outage-co").exists()
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "tenant outage-co: committed; its publish is pending (OperationalError" in said
    assert "the sweep sends it" in said


def test_it_writes_what_is_owed_with_the_write_and_delivers_it_once(django_capture_on_commit_callbacks):
    with mock.patch.object(app, "send_task") as send, django_capture_on_commit_callbacks(execute=True):
        with transaction.atomic():
            ids = outbox_put("outbox.tests.record", [[1], [2]])
    assert send.call_args.args[0] == "outbox.tasks.deliver" and send.call_args.kwargs["args"] == [ids]
    assert outbox_deliver(ids) == 2
    assert CALLS == [(1,), (2,)]
    # Delivered again (the message sent on commit and the sweep both came): nothing twice.
    assert outbox_deliver(ids) == 0 and outbox_drain(older_than=0) == 0
    assert CALLS == [(1,), (2,)]
    assert not OutboxMessage.objects.filter(id__in=ids).exists()


def test_a_rolled_back_write_owes_nothing(django_capture_on_commit_callbacks):
    with mock.patch.object(app, "send_task") as send, django_capture_on_commit_callbacks(execute=True):
        with pytest.raises(RuntimeError), transaction.atomic():
            outbox_put("outbox.tests.record", [[1]])
            raise RuntimeError("the write failed")
    assert not send.called and not OutboxMessage.objects.exists()


def test_what_the_broker_never_got_is_delivered_by_the_drain(django_capture_on_commit_callbacks):
    with mock.patch.object(app, "send_task", side_effect=broker_down), \
            django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        outbox_put("outbox.tests.record", [["news"]])
    assert outbox_drain() == 0  # younger than the grace: the message sent on commit may still come
    assert outbox_drain(older_than=0) == 1  # a reconnect's drain takes every row
    assert CALLS == [("news",)]


def test_a_task_that_fails_is_counted_and_left_for_the_next_sweep(caplog):
    ids = outbox_put("outbox.tests.record", [["fail"]])
    with caplog.at_level(logging.ERROR):
        assert outbox_deliver(ids) == 0
    row = OutboxMessage.objects.get(id=ids[0])
    assert row.attempts == 1 and row.last_error == "ValueError: the task's own failure"
    OutboxMessage.objects.filter(id=ids[0]).update(attempts=MAX_ATTEMPTS)
    assert outbox_drain(older_than=0) == 0  # given up on: left for a person, not retried for ever
