"""The lean baseline: a plain Celery app, no Django, on the same broker and with
the same worker settings as Keel's (prefork, late acks, reject on worker lost,
prefetch 1, JSON, no results). Its workers are started by bench/lean.py.

Its hop task notes when it ran in a Redis list, on one connection per process
(what a lean app would do; Keel's own `baseline_hop` connects per call).

Its durable hop task (the durable floor) inserts one row into the
`lean_hop` table of LEAN_DATABASE_URL's PostgreSQL instead, in autocommit, so each
task commits: the least a crash-safe distributed hop can do. The row's `at` is
the database's clock when the insert ran, and the chain sends the next task only
once this one has returned, so a hop between two rows includes the commit. The
row's key is (key, idx), so a redelivered task writes nothing. The connection is
opened once per worker process, when the process starts."""
import os
import time

import redis
from celery import Celery
from celery.signals import worker_process_init

# Not Celery's current app: the benchmark's process imports this after Keel's app, and
# Keel's shared tasks (the raw baseline's `baseline_hop`) are sent through the current app.
app = Celery("lean", broker=os.environ.get("LEAN_BROKER_URL", "redis://127.0.0.1:6379/1"), set_as_current=False)
app.conf.update(
    task_default_queue=os.environ.get("LEAN_QUEUE", "lean"),
    task_acks_late=True, task_reject_on_worker_lost=True, worker_prefetch_multiplier=1,
    task_serializer="json", accept_content=["json"], result_backend=None, task_ignore_result=True,
    broker_connection_retry_on_startup=True, worker_hijack_root_logger=False,
)
_redis: redis.Redis | None = None
_db = None  # the worker process's psycopg connection, for durable_hop


@app.task(name="lean.hop", acks_late=True, reject_on_worker_lost=True)
def hop(key: str, index: int) -> None:
    global _redis
    if _redis is None:
        _redis = redis.Redis.from_url(app.conf.broker_url)
    _redis.rpush(key, f"{index}:{time.time()}")


@worker_process_init.connect
def _db_connect(**_) -> None:
    global _db
    if os.environ.get("LEAN_DATABASE_URL"):
        import psycopg

        _db = psycopg.connect(os.environ["LEAN_DATABASE_URL"], autocommit=True)


@app.task(name="lean.durable_hop", acks_late=True, reject_on_worker_lost=True)
def durable_hop(key: str, index: int) -> None:
    _db.execute("INSERT INTO lean_hop (key, idx, at) VALUES (%s, %s, clock_timestamp()) ON CONFLICT DO NOTHING",
                [key, index])
