"""The lean baseline of every hop and throughput figure (issue 14): a plain
Celery app without Django (bench/lean_app.py) on the same Redis, with the same
worker count, concurrency and settings as the Keel workers of the benchmark."""
from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import redis

HERE = Path(__file__).resolve().parent


class Lean:
    def __init__(self, redis_url: str, workers: int = 2, concurrency: int = 2):
        self.redis_url = redis_url
        self.queue = f"lean-{uuid.uuid4().hex[:8]}"
        os.environ["LEAN_BROKER_URL"], os.environ["LEAN_QUEUE"] = redis_url, self.queue
        env = {**os.environ, "LEAN_BROKER_URL": redis_url, "LEAN_QUEUE": self.queue}
        env.pop("DJANGO_SETTINGS_MODULE", None)
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
        self.app, self.hop = lean_app.app, lean_app.hop
        self.redis = redis.Redis.from_url(redis_url)
        self.chain_hops(5, timeout=120)  # waits until the workers are up

    def _collect(self, key: str, n: int, timeout: float) -> list[float]:
        deadline = time.monotonic() + timeout
        while self.redis.llen(key) < n:
            if time.monotonic() > deadline:
                raise TimeoutError("lean baseline")
            time.sleep(0.01)
        stamps = sorted(float(v.decode().split(":")[1]) for v in self.redis.lrange(key, 0, -1))
        self.redis.delete(key)
        return stamps

    def chain_hops(self, n: int, timeout: float = 120) -> list[float]:
        """A Celery chain of n no-op tasks: the gaps between consecutive tasks, ms."""
        from celery import chain

        key = f"lean:{uuid.uuid4().hex}"
        chain(*[self.hop.si(key, i) for i in range(n)]).apply_async()
        stamps = self._collect(key, n, timeout)
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
