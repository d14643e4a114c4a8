from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from tenants.models import Membership

from .matrix import approvals_group


class ApprovalInboxConsumer(AsyncJsonWebsocketConsumer):
    """The approvals inbox's live feed: approvers and admins of one tenant only.

    Carries only ids and statuses; the page re-reads the queue through its own
    tenant-scoped view, so nothing here can leak another tenant's data."""

    async def connect(self):
        membership = await self._membership()
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

    @database_sync_to_async
    def _membership(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            return None
        return Membership.objects.filter(user=user).first()
