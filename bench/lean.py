"""The lean baseline of every hop and throughput figure (what Celery alone costs): a plain
Celery app without Django (bench/lean_app.py) on the same Redis, with the same
worker count, concurrency and settings as the Keel workers of the benchmark.

Given the deployment's DATABASE_URL, the same workers also run the durable lean
baseline (what a crash-safe hop costs at the least): a chain whose every task commits one row to the `lean_hop`
table of that database (created here if missing), its hops timed from those rows."""
from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psycopg
import redis

HERE = Path(__file__).resolve().parent


class Lean:
    def __init__(self, redis_url: str, workers: int = 2, concurrency: int = 2, database_url: str | None = None):
        self.redis_url = redis_url
        self.queue = f"lean-{uuid.uuid4().hex[:8]}"
        os.environ["LEAN_BROKER_URL"], os.environ["LEAN_QUEUE"] = redis_url, self.queue
        env = {**os.environ, "LEAN_BROKER_URL": redis_url, "LEAN_QUEUE": self.queue}
        env.pop("DJANGO_SETTINGS_MODULE", None)
        self.db = None
        if database_url:
            env["LEAN_DATABASE_URL"] = database_url
            self.db = psycopg.connect(database_url, autocommit=True)
            self.db.execute("CREATE TABLE IF NOT EXISTS lean_hop "
                            "(key text, idx integer, at timestamptz NOT NULL, PRIMARY KEY (key, idx))")
        self.procs = []
        for i in range(workers):
            name = f"lean{i}-{uuid.uuid4().hex[:6]}@%h"
            self.procs.append(subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "lean_app", "worker", "-l", "warning", "-c", str(concurrency),
                 "-n", name, "--without-gossip", "--without-mingle"], cwd=HERE, env=env,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
        sys.path.insert(0, str(HERE))
        import lean_app

        lean_app.app.conf.task_default_queue = self.queue
        lean_app.app.conf.broker_url = redis_url
        self.app, self.hop, self.durable_hop = lean_app.app, lean_app.hop, lean_app.durable_hop
        self.redis = redis.Redis.from_url(redis_url)
        self.chain_hops(5, timeout=120)  # waits until the workers are up

    def _collect(self, key: str, n: int, timeout: float, durable: bool = False) -> list[float]:
        """When each of the n tasks noted under `key` ran (seconds, sorted), once all have:
        from the Redis list, or from the `lean_hop` rows when durable."""
        deadline = time.monotonic() + timeout
        while self._count(key, durable) < n:
            if time.monotonic() > deadline:
                raise TimeoutError("durable lean baseline" if durable else "lean baseline")
            time.sleep(0.01)
        return sorted(self._take(key, durable))

    def _count(self, key: str, durable: bool) -> int:
        if durable:
            return self.db.execute("SELECT count(*) FROM lean_hop WHERE key = %s", [key]).fetchone()[0]
        return self.redis.llen(key)

    def _take(self, key: str, durable: bool) -> list[float]:
        """The noted times, removed from where they were noted."""
        if durable:
            return [at for at, in self.db.execute(
                "DELETE FROM lean_hop WHERE key = %s RETURNING extract(epoch FROM at)::float8", [key])]
        stamps = [float(v.decode().split(":")[1]) for v in self.redis.lrange(key, 0, -1)]
        self.redis.delete(key)
        return stamps

    def chain_hops(self, n: int, timeout: float = 120, durable: bool = False) -> list[float]:
        """A Celery chain of n no-op tasks (durable: each commits one row to PostgreSQL):
        the gaps between consecutive tasks, ms."""
        from celery import chain

        key = f"lean:{uuid.uuid4().hex}"
        task = self.durable_hop if durable else self.hop
        chain(*[task.si(key, i) for i in range(n)]).apply_async()
        stamps = self._collect(key, n, timeout, durable)
        return [(b - a) * 1000 for a, b in zip(stamps, stamps[1:])]

    def fanout(self, n: int, timeout: float = 300) -> float:
        """n independent tasks sent one by one: tasks per second, send to last done."""
        key = f"lean:{uuid.uuid4().hex}"
        started = time.perf_counter()
        for i in range(n):
            self.hop.delay(key, i)
        self._collect(key, n, timeout)
        return n / (time.perf_counter() - started)

    def stop(self) -> None:
        import signal

        for proc in self.procs:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=20)
        self.redis.delete(self.queue)
        if self.db:
            self.db.close()
