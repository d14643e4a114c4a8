"""Serve Keel over ASGI (HTTP and websockets).

Embedded mode (no REDIS_URL): also runs a Celery worker and beat on threads
and registers the event loop so worker threads can push to the in-memory
channel layer. Production: serves only, in one process or several
(`--processes`, KEEL_WEB_PROCESSES); workers are `celery -A config worker`.
"""
import asyncio
import os
import signal
import sys

import uvicorn
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connections
from uvicorn.supervisors import Multiprocess

from config.embedded import embedded_celery_start
from config.serving import SERVING, database_pool_use
from timeline.push import server_loop_register


class Command(BaseCommand):
    help = "Serve Keel (ASGI). Without REDIS_URL, with an embedded Celery worker and beat."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--processes", type=int, default=int(os.environ.get("KEEL_WEB_PROCESSES", "1")),
                            help="server processes sharing the port (production only; default KEEL_WEB_PROCESSES "
                                 "or 1). Each answers requests on its own core; websockets work across them "
                                 "through the Redis channel layer.")
        parser.add_argument("--migrate-and-seed", action="store_true",
                            help="first migrate the database and seed the demo (idempotent), in this process: "
                                 "what `make run` does, without two more Python start-ups")

    def handle(self, *args, host: str, port: int, processes: int, migrate_and_seed: bool, **options):
        if processes < 1:
            raise CommandError("--processes must be at least 1")
        if migrate_and_seed:
            call_command("migrate", interactive=False, verbosity=0)
            call_command("seed_demo", stdout=self.stdout)
            connections.close_all()  # the server's threads take their own
        if not settings.KEEL_BASE_URL_SET:  # links in emails lead here (config/settings.py)
            shown = "localhost" if host in ("0.0.0.0", "::") else host
            settings.KEEL_BASE_URL = os.environ["KEEL_BASE_URL"] = f"http://{shown}:{port}"
        os.environ[SERVING] = "1"  # this process and the server processes it starts (config/serving.py)
        # uvicorn shuts down on SIGTERM and then raises it again: as an exit, not a kill, so that
        # what runs at exit runs (the embedded PostgreSQL stops with the server, config/database.py).
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        mode = "embedded (PostgreSQL from the wheel, in-memory broker and channel layer)" if settings.EMBEDDED else "production"
        # uvicorn believes X-Forwarded-For from 127.0.0.1 unless told otherwise: only from
        # the configured proxies here (log-in throttling counts by the client's address).
        proxies = settings.KEEL_TRUSTED_PROXIES
        config = uvicorn.Config("config.asgi:application", host=host, port=port, lifespan="off",
                                ws="websockets-sansio", log_level="warning", access_log=False, workers=processes,
                                proxy_headers=bool(proxies), forwarded_allow_ips=",".join(proxies) or None,
                                log_config=None)  # its records go through Keel's one format (config/logs.py)
        if settings.EMBEDDED or processes == 1:
            # One process. Embedded mode always: its worker, beat and channel layer live in it.
            if settings.EMBEDDED:
                embedded_celery_start()
            else:
                database_pool_use()
            server = uvicorn.Server(config)
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            server_loop_register(loop)
            self.stdout.write(f"Keel serving on http://{host}:{port}/ — {mode}", ending="\n")
            self.stdout.flush()
            loop.run_until_complete(server.serve())
            return
        # Several: uvicorn's supervisor binds the port once, starts the processes (each imports
        # config.asgi afresh, so each sets Django up and takes its own pool) and restarts one
        # that dies.
        connections.close_all()
        sock = config.bind_socket()
        self.stdout.write(f"Keel serving on http://{host}:{port}/ — {mode}, {processes} processes", ending="\n")
        self.stdout.flush()
        Multiprocess(config, sockets=[sock]).run()
