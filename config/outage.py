"""When a dependency is away: answer fast, say so, say when to come back.

A request that cannot reach PostgreSQL — the pool found no connection within
`KEEL_DB_POOL_TIMEOUT` (config/serving.py), a new connection was refused, or the server
died under a statement in flight — answers 503 with `Retry-After`: a problem under
/api/, a plain "Keel is reconnecting" page elsewhere (it reads nothing from the
database). Nothing else is a 503: a bug stays a 500.

`/healthz` (liveness: the process answers) and `/readyz` (readiness: the database, the
broker and the channel layer each answer, each named with what it said) are for a load
balancer; neither reads a session or the database beyond its probe.
"""
from __future__ import annotations

import os
import time
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError, connections
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

RETRY_AFTER_SECONDS = int(os.environ.get("KEEL_RETRY_AFTER_SECONDS", "5"))
PROBE_TIMEOUT_SECONDS = 1.0


def database_away(exc: BaseException | None) -> bool:
    """Whether `exc` (or what caused it) says the database cannot be reached or was lost:
    Django's wrapped OperationalError/InterfaceError, or psycopg's own (psycopg_pool's
    PoolTimeout is one), which the pool raises unwrapped."""
    import psycopg

    seen = 0
    while exc is not None and seen < 5:
        if isinstance(exc, (OperationalError, InterfaceError, psycopg.OperationalError, psycopg.InterfaceError)):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def reconnecting_page() -> HttpResponse:
    """503 with Retry-After for a person: a page that reads nothing from the database."""
    body = loader.render_to_string("503.html", {"seconds": RETRY_AFTER_SECONDS})
    response = HttpResponse(body, status=503, content_type="text/html; charset=utf-8")
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def _probe(check) -> str:
    try:
        check()
        return "ok"
    except Exception as err:  # noqa: BLE001 - a probe reports whatever its dependency says
        first = str(err).splitlines()[0] if str(err) else ""
        return f"down: {type(err).__name__}: {first}"[:300]


def _database() -> None:
    connection = connections["default"]
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    finally:
        connection.close()  # back to the pool (or closed): a probe holds nothing


def _redis_ping(url: str) -> None:
    import redis

    client = redis.Redis.from_url(url, socket_connect_timeout=PROBE_TIMEOUT_SECONDS,
                                  socket_timeout=PROBE_TIMEOUT_SECONDS)
    try:
        client.ping()
    finally:
        client.close()


def _channel_layer_url() -> str | None:
    hosts = settings.CHANNEL_LAYERS["default"].get("CONFIG", {}).get("hosts") or []
    if not hosts:
        return None
    host = hosts[0]
    return host.get("address") if isinstance(host, dict) else host


def readiness() -> dict[str, str]:
    """Each dependency and what its probe said ("ok", "ok (in process)" or "down: why")."""
    broker = settings.CELERY_BROKER_URL
    layer = _channel_layer_url()
    return {
        "database": _probe(_database),
        "broker": _probe(lambda: _redis_ping(broker)) if broker.startswith(("redis://", "rediss://"))
        else "ok (in process)",
        "channel_layer": _probe(lambda: _redis_ping(layer)) if layer else "ok (in process)",
    }


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness: the process serves requests (nothing else is asked)."""
    return JsonResponse({"status": "ok"})


@never_cache
@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    """Readiness: 200 when every dependency answers, else 503 naming the one that does not."""
    started = time.monotonic()
    checks: dict[str, Any] = readiness()
    ready = all(state.startswith("ok") for state in checks.values())
    response = JsonResponse({"status": "ready" if ready else "unavailable", "checks": checks,
                             "seconds": round(time.monotonic() - started, 3)}, status=200 if ready else 503)
    if not ready:
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response
