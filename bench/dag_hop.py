"""Per-hop overhead of a chain of 50 no-op DAG nodes against a raw Celery chain
hop, measured in the same run on the same workers (PostgreSQL + Redis, 2 worker
processes). Reports both executor modes: every hop through the broker, and
"in place" (a node that leaves exactly one ready successor runs it on the same
worker). Ends with one JSON line.

Two more baselines run on workers of their own with the same settings
(bench/lean.py): the lean Celery chain (a plain Celery app, no Django, its task
notes the time in Redis), and the durable lean chain, whose task
commits one row to the deployment's PostgreSQL on a connection kept per process
and is timed from those rows: the least a crash-safe distributed hop costs, the
floor a DAG hop is measured against (`durable_lean_*`). Each round runs all the
chains one after another, so a noisy neighbour hits them alike.

    DATABASE_URL/REDIS_URL are not needed: it starts its own deployment.
    .venv/bin/python bench/dag_hop.py [--n 50] [--rounds 3]
"""
import argparse
import json
import uuid

from common import Api, celery_client, deployment, keel_stop, summary, wait
from lean import Lean


def raw_chain_hops(app, redis_url: str, n: int) -> list[float]:
    import redis
    from celery import chain

    from workflows.tasks import baseline_hop

    key = f"bench:{uuid.uuid4().hex}"
    r = redis.Redis.from_url(redis_url)
    chain(*[baseline_hop.si(key, i) for i in range(n)]).apply_async()
    wait(lambda: r.llen(key) >= n, what="raw chain")
    stamps = sorted(float(v.decode().split(":")[1]) for v in r.lrange(key, 0, -1))
    r.delete(key)
    return [(b - a) * 1000 for a, b in zip(stamps, stamps[1:])]


def dag_chain_hops(dora: Api, n: int) -> tuple[list[float], dict]:

    from workflows.models import Node, Transition

    status, run = dora.post("/api/v1/runs/", {"blueprint": "noop_chain", "params": {"n": n}})
    assert status == 201, run
    dora.wait_for_run(run["id"], {"completed", "failed", "stopped"}, timeout=300)
    nodes = list(Node.objects.filter(run_id=int(run["id"])).order_by("started_at"))
    hops = [(b.started_at - a.started_at).total_seconds() * 1000 for a, b in zip(nodes, nodes[1:])]
    # Where a hop's time goes: the node's own work (claim → complete, inside one
    # worker) and the gap from the predecessor's completion to this node's claim.
    at = {}
    for t in Transition.objects.filter(run_id=int(run["id"]), node__isnull=False).values("node_id", "to_status", "at"):
        at.setdefault(t["node_id"], {})[t["to_status"]] = t["at"]
    work, gap = [], []
    for a, b in zip(nodes, nodes[1:]):
        work.append((at[b.id]["completed"] - at[b.id]["in_progress"]).total_seconds() * 1000)
        gap.append((at[b.id]["in_progress"] - at[a.id]["completed"]).total_seconds() * 1000)
    return hops, {"node_work_ms": summary(work), "completion_to_next_claim_ms": summary(gap)}


def measure(keel, lean, in_place: bool, n: int, rounds: int) -> dict:
    """Fresh workers for the mode (the executor reads KEEL_IN_PLACE), same database and broker."""
    from tests.support import process_group_kill

    for worker in keel.workers:
        process_group_kill(worker)
    keel.workers.clear()
    keel.env["KEEL_IN_PLACE"] = "1" if in_place else "0"
    keel.worker_start(concurrency=2)
    keel.worker_start(concurrency=2)
    app = celery_client(keel)
    dora = Api(keel.base_url, "dora")
    raw_chain_hops(app, keel.env["REDIS_URL"], 10)  # warm up both paths
    dag_chain_hops(dora, 5)
    lean.chain_hops(10)
    lean.chain_hops(10, durable=True)
    raw, dag, lean_hops, durable_hops, breakdown = [], [], [], [], {}
    for _ in range(rounds):  # interleaved, so a noisy neighbour hits all four alike
        raw += raw_chain_hops(app, keel.env["REDIS_URL"], n)
        lean_hops += lean.chain_hops(n)
        durable_hops += lean.chain_hops(n, durable=True)
        hops, breakdown = dag_chain_hops(dora, n)
        dag += hops
    return {"raw": summary(raw), "lean": summary(lean_hops), "durable_lean": summary(durable_hops),
            "dag": summary(dag), "breakdown": breakdown}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results = {}
    keel = deployment(workers=0)
    lean = None
    try:
        lean = Lean(keel.env["REDIS_URL"], workers=2, concurrency=2, database_url=keel.env["DATABASE_URL"])
        for mode, in_place in (("broker", False), ("in_place", True)):
            results[mode] = _report(mode, measure(keel, lean, in_place, args.n, args.rounds))
    finally:
        if lean:
            lean.stop()
        keel_stop(keel)
    _final(results, args)


def _report(mode: str, m: dict) -> dict:
    print(f"[{mode}] raw Celery chain hop p50 {m['raw']['p50']:.2f} ms p99 {m['raw']['p99']:.2f} ms | "
          f"DAG hop p50 {m['dag']['p50']:.2f} ms p99 {m['dag']['p99']:.2f} ms | "
          f"ratio p50 {m['dag']['p50'] / m['raw']['p50']:.2f}x p99 {m['dag']['p99'] / m['raw']['p99']:.2f}x")
    print(f"         lean Celery hop p50 {m['lean']['p50']:.2f} ms p99 {m['lean']['p99']:.2f} ms | "
          f"lean ratio p50 {m['dag']['p50'] / m['lean']['p50']:.2f}x p99 {m['dag']['p99'] / m['lean']['p99']:.2f}x")
    d = m["durable_lean"]
    print(f"         durable lean hop (one row committed) p50 {d['p50']:.2f} ms p99 {d['p99']:.2f} ms | "
          f"durable lean ratio p50 {m['dag']['p50'] / d['p50']:.2f}x p99 {m['dag']['p99'] / d['p99']:.2f}x")
    b = m["breakdown"]
    print(f"         hop breakdown: node work (claim→complete) p50 {b['node_work_ms']['p50']:.2f} ms; "
          f"completion→next claim p50 {b['completion_to_next_claim_ms']['p50']:.2f} ms")
    return m


def _final(results: dict, args) -> None:
    broker, in_place = results["broker"], results["in_place"]
    print(json.dumps({
        "n": args.n, "rounds": args.rounds,
        "raw_p50_ms": round(broker["raw"]["p50"], 3), "raw_p99_ms": round(broker["raw"]["p99"], 3),
        "dag_p50_ms": round(broker["dag"]["p50"], 3), "dag_p99_ms": round(broker["dag"]["p99"], 3),
        "p50_ratio": round(broker["dag"]["p50"] / broker["raw"]["p50"], 3),
        "p99_ratio": round(broker["dag"]["p99"] / broker["raw"]["p99"], 3),
        "in_place_dag_p50_ms": round(in_place["dag"]["p50"], 3),
        "in_place_dag_p99_ms": round(in_place["dag"]["p99"], 3),
        "in_place_p50_ratio": round(in_place["dag"]["p50"] / in_place["raw"]["p50"], 3),
        "in_place_p99_ratio": round(in_place["dag"]["p99"] / in_place["raw"]["p99"], 3),
        "lean_p50_ms": round(broker["lean"]["p50"], 3), "lean_p99_ms": round(broker["lean"]["p99"], 3),
        "lean_p50_ratio": round(broker["dag"]["p50"] / broker["lean"]["p50"], 3),
        "lean_p99_ratio": round(broker["dag"]["p99"] / broker["lean"]["p99"], 3),
        "in_place_lean_p50_ms": round(in_place["lean"]["p50"], 3),
        "in_place_lean_p50_ratio": round(in_place["dag"]["p50"] / in_place["lean"]["p50"], 3),
        "in_place_lean_p99_ratio": round(in_place["dag"]["p99"] / in_place["lean"]["p99"], 3),
        "durable_lean_p50_ms": round(broker["durable_lean"]["p50"], 3),
        "durable_lean_p99_ms": round(broker["durable_lean"]["p99"], 3),
        "durable_lean_p50_ratio": round(broker["dag"]["p50"] / broker["durable_lean"]["p50"], 3),
        "durable_lean_p99_ratio": round(broker["dag"]["p99"] / broker["durable_lean"]["p99"], 3),
        "in_place_durable_lean_p50_ms": round(in_place["durable_lean"]["p50"], 3),
        "in_place_durable_lean_p50_ratio": round(in_place["dag"]["p50"] / in_place["durable_lean"]["p50"], 3),
        "in_place_durable_lean_p99_ratio": round(in_place["dag"]["p99"] / in_place["durable_lean"]["p99"], 3),
        "node_work_p50_ms": round(broker["breakdown"]["node_work_ms"]["p50"], 3),
        "broker_gap_p50_ms": round(broker["breakdown"]["completion_to_next_claim_ms"]["p50"], 3),
        "in_place_gap_p50_ms": round(in_place["breakdown"]["completion_to_next_claim_ms"]["p50"], 3),
    }))


if __name__ == "__main__":
    main()
