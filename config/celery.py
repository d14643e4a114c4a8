import functools
import logging
import os
import time
from collections.abc import Iterator, Mapping
from typing import Any

from celery import Celery, bootsteps
from celery.signals import task_postrun, task_prerun, worker_process_init
from celery.worker.consumer import Consumer as CeleryConsumer
from django.conf import settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


class _CelerySettings(Mapping):
    """Django's CELERY_* settings as a plain dict, read when Celery first asks. Given
    Django's settings object itself, Celery looks every option up with getattr on it,
    most of them misses that raise AttributeError: a hundred a send_task, a fifth of
    its CPU (a send_task in one process: 420 → 340 µs). No code or test changes CELERY_*
    settings at run time."""

    def __init__(self) -> None:
        self._values: dict | None = None

    def _read(self) -> dict:
        if self._values is None:
            self._values = {name: getattr(settings, name) for name in dir(settings) if name.startswith("CELERY_")}
        return self._values

    def __getitem__(self, key: str):
        return self._read()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())


app = Celery("keel")
app.config_from_object(_CelerySettings(), namespace="CELERY")
app.autodiscover_tasks()
log = logging.getLogger(__name__)

# Tasks sent each time a worker (re)connects to its broker: what the database says is owed
# is handed out again at once. A Redis without persistence that restarted lost every
# message it held; without this, only an aging lease or dispatch stamp finds them.
_ON_CONNECT: list[tuple[str, dict[str, Any]]] = []


def on_broker_connect(task: str, kwargs: dict[str, Any] | None = None) -> None:
    """Send `task` whenever a worker's connection to the broker is (re)established."""
    if (task, kwargs or {}) not in _ON_CONNECT:
        _ON_CONNECT.append((task, kwargs or {}))


class _BrokerConnected(bootsteps.StartStopStep):
    """A consumer step: the consumer starts its steps again after every reconnect."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def start(self, c) -> None:
        for task, kwargs in _ON_CONNECT:
            try:
                c.app.send_task(task, kwargs=kwargs)
            except Exception as err:  # the broker went again: the next reconnect sends it
                log.warning("broker reconnected, but sending %s failed (%s); it is sent at the next reconnect",
                            task, err)


app.steps["consumer"].add(_BrokerConnected)


class Consumer(CeleryConsumer):
    """Celery's consumer, reconnecting within a second of the broker's return: kombu's
    default waits 2, 4, 6 … up to 30 s between tries, so a 10 s outage cost ~12 s more."""

    def ensure_connected(self, conn):
        conn.ensure_connection = functools.partial(conn.ensure_connection, interval_start=0.2, interval_step=0.4,
                                                   interval_max=1.0)
        return super().ensure_connected(conn)


@worker_process_init.connect
def _keep_database_connection(**kwargs) -> None:
    """A prefork worker process runs one task at a time: one persistent database
    connection each spares every task a new connection (several ms on PostgreSQL,
    and the server-side prepared statements of the engine's hot path with it).

    Celery's Django fix-up closes every connection before and after each task
    unless told to reuse them (CELERY_DB_REUSE_MAX), whatever CONN_MAX_AGE says.
    So it is told to (a force-close only every million tasks), and each task
    instead gets what Django gives each request: close_old_connections(), which
    closes a connection past its age, in an unexpected transaction state or
    broken by an error."""
    from django.db import connections

    for connection in connections.all():
        connection.settings_dict["CONN_MAX_AGE"] = int(os.environ.get("KEEL_WORKER_CONN_MAX_AGE", "300"))
    for fixup in app._fixups or []:
        worker_fixup = getattr(fixup, "worker_fixup", None)
        if worker_fixup is not None and not worker_fixup.db_reuse_max:
            worker_fixup.db_reuse_max = 1_000_000


# A connection used by a task that ended less than this long ago is not checked again
# before the next task (a SELECT 1 round trip per task, on the engine's hot path): were
# it broken since, the task's first statement fails, nothing commits, and the sweeper
# hands the step out again.
FRESH_SECONDS = 2.0
_last_used: dict[str, float] = {}


@task_prerun.connect
def _connections_before_task(**kwargs) -> None:
    from django.db import close_old_connections, connections

    close_old_connections()
    now = time.monotonic()
    for connection in connections.all(initialized_only=True):
        if connection.connection is not None and now - _last_used.get(connection.alias, -FRESH_SECONDS) < FRESH_SECONDS:
            connection.health_check_done = True


@task_postrun.connect
def _connections_after_task(**kwargs) -> None:
    from django.db import close_old_connections, connections

    close_old_connections()
    now = time.monotonic()
    for connection in connections.all(initialized_only=True):
        if connection.connection is not None:  # still open: it served this task without an error
            _last_used[connection.alias] = now

