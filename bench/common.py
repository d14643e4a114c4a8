"""Shared set-up for the benchmarks: a production-topology Keel (PostgreSQL,
Redis, N `celery worker` processes) started from scratch, as the tests do."""
import atexit
import os
import signal
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support import Api, keel_start, keel_stop, proc_stats, wait_until  # noqa: E402, F401 - proc_stats: for the benches


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = (len(ordered) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def summary(values: list[float]) -> dict:
    return {"p50": percentile(values, 50), "p99": percentile(values, 99), "mean": statistics.fmean(values),
            "n": len(values)}


def deployment(workers: int = 2, concurrency: int = 2, env: dict | None = None):
    keel = keel_start("production", {"KEEL_LOG_LEVEL": "WARNING", **(env or {})})
    # Whatever ends the benchmark (an error, Ctrl-C, `timeout`), its processes go with it.
    atexit.register(keel_stop, keel)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    for _ in range(workers):
        keel.worker_start(concurrency=concurrency)
    return keel


def celery_client(keel):
    """A Celery app configured like the deployment, to send raw baseline tasks; Django in this
    process against its database, hashing passwords as its server does (a user made here must be
    able to log in there)."""
    os.environ.update({k: keel.env[k] for k in ("DATABASE_URL", "REDIS_URL", "KEEL_QUEUE",
                                                "KEEL_FAST_PASSWORD_HASHING")})
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from config.celery import app

    return app


def wait(predicate, timeout: float = 300, what: str = "") -> None:
    wait_until(predicate, what, timeout=timeout, interval=0.02)


__all__ = ["Api", "keel_start", "keel_stop", "deployment", "celery_client", "summary", "percentile", "wait"]
