from django.urls import path

from timeline import consumers

websocket_urlpatterns = [
    path("ws/tenant/", consumers.TenantConsumer.as_asgi()),
]
