from django.urls import path

from approvals.consumers import ApprovalInboxConsumer
from timeline import consumers

websocket_urlpatterns = [
    path("ws/tenant/", consumers.TenantConsumer.as_asgi()),
    path("ws/approvals/", ApprovalInboxConsumer.as_asgi()),
    path("ws/conversations/<int:conversation_id>/", consumers.ConversationConsumer.as_asgi()),
    path("ws/runs/<int:run_id>/", consumers.ConversationConsumer.as_asgi()),
]
