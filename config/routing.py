from console.routing import websocket_urlpatterns

__all__ = ["websocket_urlpatterns"]
