"""The inbox's websocket: approvers and admins of the tenant only."""
import pytest
from channels.testing import WebsocketCommunicator

from approvals.matrix import approvals_group
from tests.demo import demo_ensure
from config.asgi import application
from timeline.push import group_send_now
from tests.helpers import membership

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def connect(username: str):
    from asgiref.sync import sync_to_async
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    user = await sync_to_async(get_user_model().objects.get)(username=username)
    await sync_to_async(client.force_login)(user)
    cookie = client.cookies["sessionid"].value
    communicator = WebsocketCommunicator(application, "/ws/approvals/",
                                         headers=[(b"cookie", f"sessionid={cookie}".encode()),
                                                  (b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1")])
    connected, code = await communicator.connect()
    return communicator, connected, code


async def test_it_pushes_approval_changes_to_the_tenants_approvers():
    from asgiref.sync import sync_to_async

    await sync_to_async(demo_ensure)()
    tenant_id = (await sync_to_async(membership)("bob")).tenant_id
    bob, connected, _ = await connect("bob")
    assert connected
    await sync_to_async(group_send_now)(approvals_group(tenant_id), {"type": "approval.changed", "approval": "1",
                                                                     "status": "pending"})
    assert (await bob.receive_json_from(timeout=5))["approval"] == "1"
    await bob.disconnect()


async def test_it_refuses_a_business_user():
    from asgiref.sync import sync_to_async

    await sync_to_async(demo_ensure)()
    alice, connected, code = await connect("alice")
    assert not connected and code == 4403
