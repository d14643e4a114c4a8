"""The conversation websocket: tenant checks on connect, replay then live, each
sequence number once, and the business projection of events."""
from unittest import mock

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.db import transaction

from config.routing import websocket_urlpatterns
from timeline.push import EVENTS, conversation_group
from timeline.services import conversation_create, event_append, event_json, events_batched
from tests.demo import demo_ensure

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@sync_to_async
def demo_conversation() -> int:
    demo_ensure()
    alice = User.objects.get(username="alice")
    return conversation_create(tenant_id=alice.membership.tenant_id, user_id=alice.id, title="Shanghai Sales").id


@sync_to_async
def append(conversation_id: int, type_: str = "node.status", broadcast: bool = True, **data):
    with mock.patch("timeline.services.broadcast_many_on_commit") if not broadcast else _nothing():
        with transaction.atomic():
            return event_json(event_append(conversation_id=conversation_id, type=type_, data=data))


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


async def connect(username: str, path: str) -> tuple[WebsocketCommunicator, bool, int | None]:
    user = await sync_to_async(User.objects.get)(username=username)
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
    communicator.scope["user"] = user
    connected, _ = await communicator.connect()
    return communicator, connected, None


async def received_seqs(communicator: WebsocketCommunicator, until_seq: int) -> list[int]:
    seqs = []
    while not seqs or seqs[-1] < until_seq:
        message = await communicator.receive_json_from(timeout=5)
        if message["type"] == "timeline.event":
            seqs.append(message["event"]["seq"])
    return seqs


async def test_it_replays_what_was_missed_then_streams_live_events():
    conversation_id = await demo_conversation()
    for n in range(3):
        await append(conversation_id, node=f"step{n}", to="completed")
    ws, connected, _ = await connect("alice", f"/ws/conversations/{conversation_id}/")
    assert connected
    await ws.send_json_to({"after": 1})
    assert await received_seqs(ws, 3) == [2, 3]
    assert (await ws.receive_json_from(timeout=5)) == {"type": "resumed", "last_seq": 3}
    await append(conversation_id, node="verify", to="in_progress")
    assert await received_seqs(ws, 4) == [4]
    await ws.disconnect()


async def test_it_resumes_from_the_query_string_too():
    conversation_id = await demo_conversation()
    for n in range(2):
        await append(conversation_id, node=f"step{n}", to="completed")
    ws, connected, _ = await connect("alice", f"/ws/conversations/{conversation_id}/?after=1")
    assert connected
    assert await received_seqs(ws, 2) == [2]
    await ws.disconnect()


async def test_it_sends_each_sequence_number_once_across_duplicates_and_gaps():
    conversation_id = await demo_conversation()
    first = await append(conversation_id, node="interpret", to="completed")
    ws, _, _ = await connect("alice", f"/ws/conversations/{conversation_id}/")
    await ws.send_json_to({"after": 0})
    assert await received_seqs(ws, 1) == [1]
    await ws.receive_json_from(timeout=5)  # resumed
    # A duplicate push (a retried broadcast) is dropped…
    await get_channel_layer().group_send(conversation_group(conversation_id), {"type": "timeline.event", "event": first})
    # …and a push that skips numbers (two lost broadcasts) makes the server read the gap.
    await append(conversation_id, broadcast=False, node="match", to="completed")
    await append(conversation_id, broadcast=False, node="snapshot", to="completed")
    await append(conversation_id, node="import", to="awaiting_approval")
    assert await received_seqs(ws, 4) == [2, 3, 4]
    assert await ws.receive_nothing(timeout=0.3)
    await ws.disconnect()


async def test_another_tenants_conversation_is_closed_with_4404():
    conversation_id = await demo_conversation()
    ws, connected, _ = await connect("oscar", f"/ws/conversations/{conversation_id}/")
    assert connected  # accepted only to say why
    closed = await ws.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": 4404}


async def test_a_business_user_never_receives_developer_detail():
    conversation_id = await demo_conversation()
    await append(conversation_id, "node.reclaimed", node="match", previous_owner="worker-7@host",
                 owner="worker-9@host", prompt="Extract payroll-group requirements as JSON")
    for username, sees in (("alice", False), ("dora", True)):
        ws, _, _ = await connect(username, f"/ws/conversations/{conversation_id}/?after=0")
        message = await ws.receive_json_from(timeout=5)
        assert message["event"]["data"]["node"] == "match"
        assert ("owner" in message["event"]["data"]) is sees
        assert ("Extract payroll-group" in str(message)) is sees
        await ws.disconnect()


@sync_to_async
def demo_run() -> tuple[int, int]:
    from workflows.services import run_start
    from tests.helpers import membership, no_broker

    demo_ensure()
    with no_broker():
        run = run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                        params={"request": "monthly payroll for Shanghai sales", "group_name": "Shanghai Sales"})
    return run.id, run.conversation_id


async def test_a_run_stream_is_its_conversations_stream_and_closed_to_other_tenants():
    run_id, _ = await demo_run()
    ws, _, _ = await connect("alice", f"/ws/runs/{run_id}/?after=0")
    first = await ws.receive_json_from(timeout=5)
    assert first["event"]["seq"] == 1 and first["event"]["run"] == str(run_id)
    await ws.disconnect()
    ws, _, _ = await connect("oscar", f"/ws/runs/{run_id}/")
    assert await ws.receive_output(timeout=5) == {"type": "websocket.close", "code": 4404}


async def test_a_transactions_events_arrive_as_one_message_and_leave_as_frames_in_order():
    conversation_id = await demo_conversation()
    ws, _, _ = await connect("alice", f"/ws/conversations/{conversation_id}/")
    await ws.send_json_to({"after": 0})
    assert (await ws.receive_json_from(timeout=5)) == {"type": "resumed", "last_seq": 0}

    @sync_to_async
    def three_in_one_transaction():
        with events_batched():  # as the engine writes a hop
            for node in ("match", "snapshot", "import"):
                event_append(conversation_id=conversation_id, type="node.status", data={"node": node, "to": "ready"})

    sent = []
    layer = get_channel_layer()
    real_send = layer.group_send

    async def spy(group, message):
        sent.append(message["type"])
        await real_send(group, message)

    with mock.patch.object(layer, "group_send", spy):
        await three_in_one_transaction()
        assert await received_seqs(ws, 3) == [1, 2, 3]
    assert sent == [EVENTS]  # one message to the group, three frames to the browser
    await ws.disconnect()
