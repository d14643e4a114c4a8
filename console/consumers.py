import asyncio
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from approvals.matrix import approvals_group
from config.api import strict_int
from tenants.models import Membership
from timeline.models import Conversation
from timeline.push import conversation_group, tenant_group
from timeline.selectors import event_project, events_after
from timeline.services import event_json
from workflows.models import Run

REFUSED_NOT_MEMBER = 4403
REFUSED_NOT_FOUND = 4404


@database_sync_to_async
def scope_membership(scope) -> Membership | None:
    """The socket user's membership (None for an anonymous or tenant-less user): the
    one check every consumer makes before it joins a group."""
    user = scope.get("user")
    if user is None or not user.is_authenticated:
        return None
    return Membership.objects.filter(user=user).select_related("tenant").first()


class TenantConsumer(AsyncJsonWebsocketConsumer):
    """Tenant-wide notices (wiring checks, approval changes). Members only."""

    async def connect(self):
        membership = await scope_membership(self.scope)
        if membership is None:
            await self.close(code=4403)
            return
        self.group = tenant_group(membership.tenant_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code):
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def wiring_done(self, event):
        await self.send_json({k: v for k, v in event.items() if k != "type"} | {"type": "wiring.done"})

    async def approval_changed(self, event):
        # The tenant's approvals changed (requested, decided, expired): pages refresh their counts.
        await self.send_json({"type": "approval.changed", "approval": event.get("approval"),
                              "status": event.get("status")})



class ConversationConsumer(AsyncJsonWebsocketConsumer):
    """A conversation's timeline events, live, with resume.

    The client names the last sequence it saw ({"after": N} or ?after=N); the
    server replays what it missed from the database, then streams live events.
    Every event reaching this consumer was committed before it was sent, so the
    database is always at least as new as the push: when a live event is not the
    next number (a drop, a burst, a reordering), the gap is read from the
    database. Each sequence number goes out once per connection, in order.

    Events are projected per role: business users never get developer detail.
    `/ws/runs/<id>/` joins the run's conversation stream (one sequence, no gaps)."""

    async def connect(self):
        self.cursor: int | None = None
        self.lock = asyncio.Lock()
        self.membership = await scope_membership(self.scope)
        if self.membership is None:
            await self.accept()
            await self.close(code=REFUSED_NOT_MEMBER)
            return
        kwargs = self.scope["url_route"]["kwargs"]
        self.conversation_id = await self._conversation_id(kwargs.get("conversation_id"), kwargs.get("run_id"))
        await self.accept()
        if self.conversation_id is None:
            # Accepted first so the browser sees the reason: 4404 = not yours, or not there.
            await self.close(code=REFUSED_NOT_FOUND)
            return
        self.group = conversation_group(self.conversation_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        after = _query_after(self.scope.get("query_string", b""))
        if after is not None:
            await self._resume(after)

    async def disconnect(self, code):
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content, **kwargs):
        if isinstance(content, dict) and "after" in content:
            try:
                after = max(strict_int(content["after"] or 0), 0)
            except (TypeError, ValueError):
                await self.send_json({"type": "error", "detail": "`after` must be a whole number."})
                return
            await self._resume(after)

    async def _resume(self, after: int) -> None:
        async with self.lock:
            self.cursor = after
            await self._catch_up()
            await self.send_json({"type": "resumed", "last_seq": self.cursor})

    async def _catch_up(self) -> None:
        while True:
            events = await self._events_after(self.cursor)
            for event in events:
                await self.send_json({"type": "timeline.event", "event": event})
                self.cursor = event["seq"]
            if len(events) < 500:
                return

    async def timeline_event(self, message):
        await self.timeline_events({"events": [message["event"]]})

    async def timeline_events(self, message):
        """Committed events of this conversation, in order (timeline.push.EVENTS); each goes
        out as its own timeline.event frame."""
        async with self.lock:
            for event in message["events"]:
                if self.cursor is None or event["seq"] <= self.cursor:
                    continue  # not resumed yet (the replay will read it) or already sent
                if event["seq"] == self.cursor + 1:
                    await self.send_json({"type": "timeline.event", "event": self._project(event)})
                    self.cursor = event["seq"]
                else:
                    await self._catch_up()  # reads this one and the rest of the gap

    def _project(self, event):
        return event_project(event, self.membership)

    @database_sync_to_async
    def _events_after(self, after: int):
        conversation = Conversation.objects.get(id=self.conversation_id)
        return [event_project(event_json(e), self.membership) for e in events_after(conversation, after)]


    @database_sync_to_async
    def _conversation_id(self, conversation_id, run_id):
        tenant_id = self.membership.tenant_id
        if run_id is not None:
            return Run.objects.filter(id=run_id, tenant_id=tenant_id).values_list("conversation_id", flat=True).first()
        return Conversation.objects.filter(id=conversation_id, tenant_id=tenant_id).values_list("id", flat=True).first()


def _query_after(query_string: bytes) -> int | None:
    values = parse_qs(query_string.decode(errors="replace")).get("after")
    if not values:
        return None
    try:
        return max(strict_int(values[0]), 0)
    except ValueError:
        return 0


class ApprovalInboxConsumer(AsyncJsonWebsocketConsumer):
    """The approvals inbox's live feed: approvers and admins of one tenant only.

    Carries only ids and statuses; the page re-reads the queue through its own
    tenant-scoped view, so nothing here can leak another tenant's data."""

    async def connect(self):
        membership = await scope_membership(self.scope)
        if membership is None or not membership.can_approve:
            await self.close(code=4403)
            return
        self.group = approvals_group(membership.tenant_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code):
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def approval_changed(self, event):
        await self.send_json(event)

    async def approval_reminded(self, event):
        await self.send_json(event)

