from unittest import mock

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser, User
from django.test import Client

from console.consumers import TenantConsumer
from timeline.models import WiringCheck
from timeline.services import wiring_check_complete


def test_it_dispatches_the_check_only_after_commit(demo, django_capture_on_commit_callbacks):
    client = Client()
    client.login(username="alice", password="keel-demo")
    with mock.patch("timeline.services.app.send_task") as send:
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            response = client.post("/api/v1/wiring-checks/")
            assert send.call_count == 0  # nothing reaches the broker before the row is committed
        assert response.status_code == 201
        for callback in callbacks:
            callback()
    send.assert_called_once_with("timeline.tasks.wiring_check_run", args=[int(response.json()["id"])])


def test_it_completes_a_check_once(demo):
    alice = User.objects.get(username="alice")
    check = WiringCheck.objects.create(tenant=alice.membership.tenant, requested_by=alice)
    assert wiring_check_complete(check_id=check.id) is True
    assert wiring_check_complete(check_id=check.id) is False  # a redelivery changes nothing
    check.refresh_from_db()
    assert check.completed_at is not None and check.worker


def test_it_hides_another_tenants_check(demo):
    alice = User.objects.get(username="alice")
    check = WiringCheck.objects.create(tenant=alice.membership.tenant, requested_by=alice)
    oscar = Client()
    oscar.login(username="oscar", password="keel-demo")
    assert oscar.get(f"/api/v1/wiring-checks/{check.id}/").status_code == 404


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_it_refuses_an_anonymous_socket():
    communicator = WebsocketCommunicator(TenantConsumer.as_asgi(), "/ws/tenant/")
    communicator.scope["user"] = AnonymousUser()
    connected, code = await communicator.connect()
    assert not connected and code == 4403
