"""Throughput of 500 independent no-op DAG nodes against 500 raw Celery tasks,
in the same run on the same workers (PostgreSQL + Redis, 2 worker processes).
Ends with one JSON line.

    .venv/bin/python bench/fanout.py [--n 500]
"""
import argparse
import json
import statistics
import time
import uuid

from common import Api, celery_client, deployment, keel_stop, wait
from lean import Lean


def raw_fanout(app, redis_url: str, n: int) -> float:
    import redis

    from workflows.tasks import baseline_hop

    key = f"bench:{uuid.uuid4().hex}"
    r = redis.Redis.from_url(redis_url)
    started = time.perf_counter()
    for i in range(n):  # one message each, as the scheduler dispatches ready nodes
        baseline_hop.delay(key, i)
    wait(lambda: r.llen(key) >= n, what="raw fan-out")
    elapsed = time.perf_counter() - started
    r.delete(key)
    return n / elapsed


def dag_fanout(dora: Api, n: int) -> float:
    started = time.perf_counter()
    status, run = dora.post("/api/v1/runs/", {"blueprint": "noop_fanout", "params": {"n": n}})
    assert status == 201, run
    run = dora.wait_for_run(run["id"], {"completed", "failed", "stopped"}, timeout=600)
    assert run["status"] == "completed", run["status_reason"]
    return n / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    keel = deployment(workers=2, concurrency=2)
    lean = None
    raws, leans, dags = [], [], []
    try:
        lean = Lean(keel.env["REDIS_URL"], workers=2, concurrency=2)
        app = celery_client(keel)
        dora = Api(keel.base_url, "dora")
        raw_fanout(app, keel.env["REDIS_URL"], 20)  # warm up
        lean.fanout(20)
        dag_fanout(dora, 10)
        for _ in range(args.rounds):  # interleaved: a noisy neighbour hits all three alike
            raws.append(raw_fanout(app, keel.env["REDIS_URL"], args.n))
            leans.append(lean.fanout(args.n))
            dags.append(dag_fanout(dora, args.n))
    finally:
        if lean:
            lean.stop()
        keel_stop(keel)
    raw, lean_rate, dag = (statistics.median(v) for v in (raws, leans, dags))
    print(f"raw Celery tasks: {raw:.0f} tasks/s | lean Celery: {lean_rate:.0f} tasks/s | "
          f"DAG nodes: {dag:.0f} nodes/s | ratio {dag / raw:.2f}x, lean ratio {dag / lean_rate:.2f}x")
    print(json.dumps({"n": args.n, "rounds": args.rounds, "raw_tasks_per_s": round(raw, 1),
                      "lean_tasks_per_s": round(lean_rate, 1), "nodes_per_s": round(dag, 1),
                      "throughput_ratio": round(dag / raw, 3), "lean_throughput_ratio": round(dag / lean_rate, 3)}))


if __name__ == "__main__":
    main()
