"""The embedded Celery worker and beat: threads inside the server process.

`app.Worker().start()` wants the main thread (signal handlers), so, like
celery.contrib.testing.worker, we run a bare WorkController in a daemon thread.
Beat runs as celery.beat's threaded EmbeddedService with an in-memory schedule.
Only the serve command calls this — never AppConfig.ready() or the autoreloader,
which would start a second worker in every import.
"""
import logging
import socket
import threading

from celery import beat
from celery.worker import WorkController
from django.conf import settings

from config.celery import app

log = logging.getLogger(__name__)


class _EmbeddedWorkController(WorkController):
    def __init__(self, *args, **kwargs):
        self.consumer_ready = threading.Event()
        super().__init__(*args, **kwargs)

    def on_consumer_ready(self, consumer):
        self.consumer_ready.set()


def embedded_celery_start() -> WorkController:
    app.set_current()
    app.set_default()
    worker = _EmbeddedWorkController(
        app=app,
        hostname=f"embedded@{socket.gethostname()}",
        pool="threads",
        concurrency=settings.KEEL_EMBEDDED_WORKER_THREADS,
        loglevel="WARNING",
        ready_callback=None,
        without_heartbeat=True,
        without_mingle=True,
        without_gossip=True,
    )
    threading.Thread(target=worker.start, name="celery-worker", daemon=True).start()
    if not worker.consumer_ready.wait(timeout=30):
        raise RuntimeError("The embedded Celery worker did not start within 30 s.")
    beat.EmbeddedService(app, thread=True, scheduler_cls="celery.beat:Scheduler", max_interval=1).start()
    log.info("embedded Celery worker (%s threads) and beat started", settings.KEEL_EMBEDDED_WORKER_THREADS)
    return worker
