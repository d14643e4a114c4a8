"""The lean baseline: a plain Celery app, no Django, on the same broker and with
the same worker settings as Keel's (prefork, late acks, reject on worker lost,
prefetch 1, JSON, no results). Its workers are started by bench/lean.py.

Its hop task notes when it ran in a Redis list, on one connection per process
(what a lean app would do; Keel's own `baseline_hop` connects per call)."""
import os
import time

import redis
from celery import Celery

app = Celery("lean", broker=os.environ.get("LEAN_BROKER_URL", "redis://127.0.0.1:6379/1"))
app.conf.update(
    task_default_queue=os.environ.get("LEAN_QUEUE", "lean"),
    task_acks_late=True, task_reject_on_worker_lost=True, worker_prefetch_multiplier=1,
    task_serializer="json", accept_content=["json"], result_backend=None, task_ignore_result=True,
    broker_connection_retry_on_startup=True, worker_hijack_root_logger=False,
)
_redis: redis.Redis | None = None


@app.task(name="lean.hop", acks_late=True, reject_on_worker_lost=True)
def hop(key: str, index: int) -> None:
    global _redis
    if _redis is None:
        _redis = redis.Redis.from_url(app.conf.broker_url)
    _redis.rpush(key, f"{index}:{time.time()}")
