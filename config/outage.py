"""When a dependency is away: answer fast, say so, say when to come back.

A request that cannot reach PostgreSQL — the pool's health flag says it is away
(config/database_health.py: answered at once), a new connection was refused, or the
server died under a statement in flight — answers 503 with `Retry-After`: a problem
`database_unavailable` under /api/, a plain "Keel is reconnecting" page elsewhere (it
reads nothing from the database). A database that is up but whose pooled connections
were all lent out for `KEEL_DB_POOL_TIMEOUT` (30 s) answers 503 too, saying busy
(`database_busy`): waiting longer would not help that client, and it is not an outage.
Nothing else is a 503: a bug stays a 500.

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

from config.database_health import DatabaseBusy, HealthAwarePool

RETRY_AFTER_SECONDS = int(os.environ.get("KEEL_RETRY_AFTER_SECONDS", "5"))
PROBE_TIMEOUT_SECONDS = 1.0


def _causes(exc: BaseException | None) -> list[BaseException]:
    chain = []
    while exc is not None and len(chain) < 5:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    return chain


def database_busy(exc: BaseException | None) -> bool:
    """Whether `exc` (or what caused it) is the pool's busy wait running out, the database up."""
    return any(isinstance(e, DatabaseBusy) for e in _causes(exc))


def database_away(exc: BaseException | None) -> bool:
    """Whether `exc` (or what caused it) says the database cannot be reached or was lost:
    Django's wrapped OperationalError/InterfaceError, or psycopg's own, which the pool
    raises unwrapped. (A busy pool's timeout is one of psycopg's too: ask `database_busy` first.)"""
    import psycopg

    kinds = (OperationalError, InterfaceError, psycopg.OperationalError, psycopg.InterfaceError)
    return any(isinstance(e, kinds) for e in _causes(exc))


def reconnecting_page(*, busy: bool = False) -> HttpResponse:
    """503 with Retry-After for a person: a page that reads nothing from the database."""
    body = loader.render_to_string("503.html", {"seconds": RETRY_AFTER_SECONDS, "busy": busy})
    response = HttpResponse(body, status=503, content_type="text/html; charset=utf-8")
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def _probe(check) -> str:
    try:
        return check() or "ok"
    except Exception as err:  # noqa: BLE001 - a probe reports whatever its dependency says
        first = str(err).splitlines()[0] if str(err) else ""
        return f"down: {type(err).__name__}: {first}"[:300]


def _database() -> str | None:
    connection = connections["default"]
    pool = connection.pool
    if isinstance(pool, HealthAwarePool):
        # A serving process: a pooled connection, waited for no longer than a probe may take
        # (a busy pool is ready, only busy: a load balancer that took it out would make it worse).
        pool.open()
        try:
            with pool.connection(timeout=PROBE_TIMEOUT_SECONDS) as conn:
                conn.execute("SELECT 1")
        except DatabaseBusy:
            return "ok (busy: every pooled connection is lent out)"
        return None
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    finally:
        connection.close()  # back to the pool (or closed): a probe holds nothing
    return None


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
