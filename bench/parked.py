"""Parked runs cost nothing: 10,000 runs waiting at an approval hold no broker
message, no worker slot and no lease, and an active run's hop p99 with them
parked stays where it was without them (measured in the same run).

One run is parked through the API; the other 9,999 are copies of its rows
(run, nodes, pending approval) written straight into PostgreSQL — a parked run
is nothing but rows, which is the point.

The two conditions alternate (none, parked, none, parked, ...): the copies are written
before each parked round and deleted after it (then VACUUM ANALYZE, as autovacuum would),
so a noisy neighbour or a database that grew with the measured chains hits both alike.

    .venv/bin/python bench/parked.py [--runs 10000] [--n 40] [--rounds 3]
Ends with one JSON line."""
import argparse
import json

import psycopg
import redis

from common import Api, celery_client, deployment, keel_stop, summary
from dag_hop import dag_chain_hops

REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"


def _columns(conn, table: str) -> list[str]:
    return [r[0] for r in conn.execute("SELECT column_name FROM information_schema.columns WHERE table_name = %s "
                                       "ORDER BY ordinal_position", (table,))]


BASE = 4_000_000_000_000_000_000  # the copies' ids: BASE + k * 1000 + ..., below the real ids (about 5.8e18)
SPAN = 1_000 * 1_000_000


def park_copies(db_url: str, run_id: int, copies: int) -> None:
    """Copy a parked run's rows `copies` times (ids offset per copy), then gather the
    statistics autovacuum would gather within a minute of such an insert."""
    with psycopg.connect(db_url) as conn:
        def clone(table: str, where: str, replace: dict[str, str]) -> None:
            cols = _columns(conn, table)
            select = ", ".join(replace.get(c, c) for c in cols)
            conn.execute(f"INSERT INTO {table} ({', '.join(cols)}) SELECT {select} FROM {table} t, "
                         f"generate_series(1, %s) k WHERE {where}", (copies,))
        base = BASE
        clone("workflows_run", f"t.id = {run_id}", {"id": f"{base} + k * 1000"})
        clone("workflows_node", f"t.run_id = {run_id}", {
            "id": f"{base} + k * 1000 + 1 + t.position", "run_id": f"{base} + k * 1000", "activity_id": "NULL"})
        clone("approvals_approvalrequest", f"t.run_id = {run_id} AND t.status = 'pending'", {
            "id": f"{base} + k * 1000 + 999", "run_id": f"{base} + k * 1000",
            "node_id": f"{base} + k * 1000 + 1 + (SELECT position FROM workflows_node WHERE id = t.node_id)"})
    _vacuum_analyze(db_url)


def unpark_copies(db_url: str) -> None:
    with psycopg.connect(db_url) as conn:
        for table, column in (("approvals_approvalrequest", "id"), ("workflows_node", "id"), ("workflows_run", "id")):
            conn.execute(f"DELETE FROM {table} WHERE {column} BETWEEN %s AND %s", (BASE, BASE + SPAN))
    _vacuum_analyze(db_url)


def _vacuum_analyze(db_url: str) -> None:
    with psycopg.connect(db_url, autocommit=True) as conn:
        for table in ("approvals_approvalrequest", "workflows_node", "workflows_run"):
            conn.execute(f"VACUUM ANALYZE {table}")


def broker_messages(redis_url: str, queue: str) -> int:
    r = redis.Redis.from_url(redis_url)
    unacked = sum(1 for v in r.hvals("unacked") if queue.encode() in v)
    return r.llen(queue) + unacked


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10000)
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    keel = deployment(workers=2, concurrency=2)
    try:
        app = celery_client(keel)
        alice, dora = Api(keel.base_url, "alice"), Api(keel.base_url, "dora")  # dora measures: noop runs are a developer's
        dag_chain_hops(dora, 5)  # warm up
        status, run = alice.post("/api/v1/runs/", {"blueprint": "payroll_group_setup", "params": {
            "request": REQUEST, "group_name": "Bench Parked"}})
        assert status == 201, run
        alice.wait_for_run(run["id"], {"awaiting_approval"}, timeout=120)
        from workflows.models import Node, Run

        none, with_parked, parked, leases, messages, slots = [], [], 0, 0, 0, 0
        for _ in range(args.rounds):  # interleaved: none, then parked
            none += dag_chain_hops(dora, args.n)[0]
            park_copies(keel.env["DATABASE_URL"], int(run["id"]), args.runs - 1)
            parked = Run.objects.filter(status="awaiting_approval").count()
            leases = max(leases, Node.objects.filter(run__status="awaiting_approval",
                                                     lease_expires_at__isnull=False).count())
            messages = max(messages, broker_messages(keel.env["REDIS_URL"], keel.env["KEEL_QUEUE"]))
            active = app.control.inspect(timeout=2).active() or {}
            slots = max(slots, sum(len(tasks) for tasks in active.values()))
            with_parked += dag_chain_hops(dora, args.n)[0]
            unpark_copies(keel.env["DATABASE_URL"])
    finally:
        keel_stop(keel)
    a, b = summary(none), summary(with_parked)
    print(f"{parked} parked runs: {messages} broker messages, {slots} worker slots, {leases} leases | "
          f"active hop p99 {b['p99']:.2f} ms parked vs {a['p99']:.2f} ms none")
    print(json.dumps({"parked_runs": parked, "broker_messages": messages, "worker_slots_held": slots,
                      "leases_held": leases, "hop_p50_ms_none": round(a["p50"], 3),
                      "hop_p99_ms_none": round(a["p99"], 3), "hop_p50_ms_parked": round(b["p50"], 3),
                      "hop_p99_ms_parked": round(b["p99"], 3), "hop_p99_ratio": round(b["p99"] / a["p99"], 3)}))


if __name__ == "__main__":
    main()
