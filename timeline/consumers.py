from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from tenants.models import Membership

from .push import tenant_group


class TenantConsumer(AsyncJsonWebsocketConsumer):
    """Tenant-wide notices (wiring checks, later the approval inbox). Members only."""

    async def connect(self):
        membership = await self._membership()
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

    @database_sync_to_async
    def _membership(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            return None
        return Membership.objects.filter(user=user).first()
