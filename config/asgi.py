import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup(set_prefix=False)  # before importing consumers (what get_asgi_application does first)

from config.requests import ASGIHandler  # noqa: E402

django_asgi_app = ASGIHandler()  # Django's, building requests that take only charsets Keel reads

from config.serving import database_pool_use  # noqa: E402

database_pool_use()  # a serving process's requests borrow pooled connections (before its first query)

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from config.routing import websocket_urlpatterns  # noqa: E402
from config.security import WebsocketOriginValidator  # noqa: E402

application = ProtocolTypeRouter({
    "http": django_asgi_app,
    # Scheme, host and port must match the page's (or a CSRF_TRUSTED_ORIGINS entry).
    "websocket": WebsocketOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
})
