"""Where a hop's time goes, in one process (no broker in between): run a chain's
nodes one by one through the executor, counting statements and timing each.

    .venv/bin/python bench/hop_profile.py [--n 200] [--in-place 0|1] [--plain 0|1] [--cprofile FILE]

`--plain 1` runs each node as its broker message does when its sender knew its tool
side-effect-free (workflows.dispatch): read, run, and claim and complete in one statement.
The first 10 nodes warm up (chains of more than 10 are measured). Ends with one JSON line.
"""
import argparse
import cProfile
import json
import os
import statistics
import time

from common import Api, celery_client, deployment, keel_stop


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--in-place", type=int, default=0)
    parser.add_argument("--plain", type=int, default=0)
    parser.add_argument("--cprofile", default="")
    args = parser.parse_args()
    keel = deployment(workers=0)
    try:
        celery_client(keel)
        os.environ["KEEL_IN_PLACE"] = str(args.in_place)
        from django.db import connection

        from config import sql as tsql
        from workflows.models import Node
        from workflows.tasks import node_run

        counts = {"orm": 0, "prepared": 0}

        def orm_counter(execute, sql, params, many, context):
            counts["orm"] += 1
            return execute(sql, params, many, context)

        real_execute = tsql.execute

        by_statement: dict[str, list[float]] = {}

        def prepared_counter(statement, *a, **k):
            counts["prepared"] += 1
            t0 = time.perf_counter()
            try:
                return real_execute(statement, *a, **k)
            finally:
                key = " ".join(str(statement).split())[:60]
                by_statement.setdefault(key, []).append((time.perf_counter() - t0) * 1000)

        tsql.execute = prepared_counter
        dora = Api(keel.base_url, "dora")
        status, run = dora.post("/api/v1/runs/", {"blueprint": "noop_chain", "params": {"n": args.n}})
        assert status == 201, run
        ids = list(Node.objects.filter(run_id=int(run["id"])).order_by("position").values_list("id", flat=True))
        times, per, cpu = [], [], []
        profiler = cProfile.Profile() if args.cprofile else None
        with connection.execute_wrapper(orm_counter):
            for i, node_id in enumerate(ids):
                if args.in_place and i:
                    break
                before = dict(counts)
                if profiler and (i >= 10 or args.in_place):
                    profiler.enable()
                t0, c0 = time.perf_counter(), time.process_time()
                node_run.run(node_id, bool(args.plain))
                times.append((time.perf_counter() - t0) * 1000)
                cpu.append((time.process_time() - c0) * 1000)
                if profiler:
                    profiler.disable()
                per.append((counts["orm"] - before["orm"], counts["prepared"] - before["prepared"]))
        if args.in_place:
            print(f"in place: {args.n} nodes in {times[0]:.1f} ms = {times[0] / args.n:.3f} ms/node "
                  f"(this process's CPU {cpu[0] / args.n:.3f} ms/node); "
                  f"statements orm {counts['orm']}, prepared {counts['prepared']}")
            figures = {"ms_per_node": round(times[0] / args.n, 3), "cpu_ms_per_node": round(cpu[0] / args.n, 3),
                       "statements_orm": counts["orm"], "statements_prepared": counts["prepared"]}
        else:
            print(f"per node: p50 {statistics.median(times[10:]):.3f} ms; statements (orm, prepared) "
                  f"{statistics.mode(per[10:])}")
            orm, prepared = statistics.mode(per[10:])
            figures = {"ms_per_node": round(statistics.median(times[10:]), 3),
                       "cpu_ms_per_node": round(statistics.median(cpu[10:]), 3),
                       "statements_orm": orm, "statements_prepared": prepared}
        for key, values in by_statement.items():
            print(f"  {statistics.median(values):7.3f} ms  x{len(values):5d}  {key}")
        if profiler:
            profiler.dump_stats(args.cprofile)
    finally:
        keel_stop(keel)
    print(json.dumps({"n": args.n, "in_place": args.in_place, "plain": args.plain, **figures}))


if __name__ == "__main__":
    main()
