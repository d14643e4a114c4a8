"""Serve Keel over ASGI (HTTP and websockets).

Embedded mode (no REDIS_URL): also runs a Celery worker and beat on threads
and registers the event loop so worker threads can push to the in-memory
channel layer. Production: serves only; workers are `celery -A config worker`.
"""
import asyncio
import os

import uvicorn
from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import connections

from config.embedded import embedded_celery_start
from timeline.push import server_loop_register


class Command(BaseCommand):
    help = "Serve Keel (ASGI). Without REDIS_URL, with an embedded Celery worker and beat."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)

    def handle(self, *args, host: str, port: int, **options):
        if not settings.KEEL_BASE_URL_SET:  # links in emails lead here (config/settings.py)
            shown = "localhost" if host in ("0.0.0.0", "::") else host
            settings.KEEL_BASE_URL = f"http://{shown}:{port}"
        if settings.EMBEDDED:
            embedded_celery_start()
        else:
            _database_pool_use()
        config = uvicorn.Config("config.asgi:application", host=host, port=port, lifespan="off",
                                ws="websockets-sansio", log_level="warning", access_log=False)
        server = uvicorn.Server(config)
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        server_loop_register(loop)
        mode = "embedded (SQLite, in-memory broker and channel layer)" if settings.EMBEDDED else "production"
        self.stdout.write(f"Keel serving on http://{host}:{port}/ — {mode}", ending="\n")
        self.stdout.flush()
        loop.run_until_complete(server.serve())


def _database_pool_use() -> None:
    """The server's requests borrow PostgreSQL connections from a pool (psycopg_pool, through
    Django's "pool" option): each request runs on a thread of its own, so a persistent
    connection would die with its thread, and a new one costs the database a process and
    its catalog caches (several ms of CPU a request). Workers keep their own connections
    (config/celery.py). KEEL_DB_POOL=0 turns it off; its value is the pool's largest size."""
    size = int(os.environ.get("KEEL_DB_POOL", "10"))
    database = connections.settings["default"]
    if size <= 0 or database["ENGINE"] != "django.db.backends.postgresql" or database.get("CONN_MAX_AGE"):
        return
    connections.close_all()  # the pool hands out every connection from here on
    database.setdefault("OPTIONS", {})["pool"] = {"min_size": min(2, size), "max_size": size, "timeout": 30}
