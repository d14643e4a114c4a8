"""Response headers and the websocket Origin check.

Both read settings (config/settings.py, "Transport security"); neither has any
business logic."""
from __future__ import annotations

from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from csp.middleware import CSPMiddleware, PolicyParts
from django.conf import settings
from django.http.request import split_domain_port, validate_host

DEFAULT_PORTS = {"http": 80, "https": 443}


class ContentSecurityPolicyMiddleware(CSPMiddleware):
    """django-csp's middleware, plus Permissions-Policy on every answer.

    The Django admin's own pages and two of our admin columns (agents/admin.py,
    timeline/admin.py) draw bars with style="" attributes; there, and only there,
    inline *styles* are allowed. Scripts stay 'self' everywhere."""

    def get_policy_parts(self, request, response, report_only: bool = False) -> PolicyParts:
        parts = super().get_policy_parts(request, response, report_only)
        if request.path_info.startswith("/admin/"):
            parts.update = {**(parts.update or {}), "style-src": ["'unsafe-inline'"]}
        return parts

    def process_response(self, request, response):
        response = super().process_response(request, response)
        policy = getattr(settings, "PERMISSIONS_POLICY", "")
        if policy and "Permissions-Policy" not in response:
            response["Permissions-Policy"] = policy
        return response


def origin_tuple(origin: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an http(s) origin, with the scheme's default port
    filled in; None for anything that is not one."""
    try:
        parts = urlsplit(origin.strip())
        scheme, host, port = parts.scheme.lower(), (parts.hostname or "").lower(), parts.port
    except ValueError:  # a port that is not a number, or out of range
        return None
    if scheme not in DEFAULT_PORTS or not host or parts.path not in ("", "/") or parts.query or parts.username:
        return None
    return scheme, host, port or DEFAULT_PORTS[scheme]


def _server_origin(scope: dict, headers: dict[bytes, bytes]) -> tuple[str, str, int] | None:
    """The origin the browser used to reach us: its scheme (https behind TLS),
    and the host and port of the Host header, if that host is an allowed one."""
    try:
        host_header = headers.get(b"host", b"").decode("ascii")
    except UnicodeDecodeError:
        return None
    domain, port = split_domain_port(host_header)
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return None
    scheme = "https" if getattr(settings, "TLS", False) or scope.get("scheme") == "wss" else "http"
    try:
        return scheme, domain.lower(), int(port) if port else DEFAULT_PORTS[scheme]
    except ValueError:
        return None


def websocket_origin_allowed(scope: dict) -> bool:
    """Same origin (scheme, host *and* port) as the page that opened the socket,
    or one of CSRF_TRUSTED_ORIGINS. AllowedHostsOriginValidator compares the host
    alone, so a page on another port of the same machine could open a socket
    with the user's cookies."""
    headers = dict(scope.get("headers", []))
    raw = headers.get(b"origin")
    if raw is None:
        return False  # browsers always send one; a socket without it is not from a page of ours
    try:
        origin = origin_tuple(raw.decode("ascii"))
    except UnicodeDecodeError:
        return False
    if origin is None:
        return False
    if origin == _server_origin(scope, headers):
        return True
    trusted = {origin_tuple(o) for o in getattr(settings, "CSRF_TRUSTED_ORIGINS", [])}
    return origin in trusted - {None}


class WebsocketOriginValidator:
    """ASGI middleware: refuse (403 at the handshake) a websocket whose Origin is
    not allowed (websocket_origin_allowed)."""

    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] != "websocket":
            raise ValueError("WebsocketOriginValidator only guards websocket connections")
        if websocket_origin_allowed(scope):
            return await self.application(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)
