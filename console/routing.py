"""The console's websockets: live timelines, tenant notices and the approvals inbox."""
from django.urls import path

from .consumers import ApprovalInboxConsumer, ConversationConsumer, TenantConsumer

websocket_urlpatterns = [
    path("ws/tenant/", TenantConsumer.as_asgi()),
    path("ws/approvals/", ApprovalInboxConsumer.as_asgi()),
    path("ws/conversations/<int:conversation_id>/", ConversationConsumer.as_asgi()),
    path("ws/runs/<int:run_id>/", ConversationConsumer.as_asgi()),
]
