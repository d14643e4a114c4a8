"""The chat under a team's load: 20 users post a resolve message at once, against
one user alone in the same run (production topology). Also profiles one message
in-process: SQL statements and where the CPU goes (cProfile, top functions).

    .venv/bin/python bench/chat_load.py [--users 20] [--rounds 2] [--single 6]
Ends with one JSON line."""
import argparse
import cProfile
import io
import json
import pstats
import threading
import time

from common import Api, celery_client, deployment, keel_stop, summary

REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"


def users_create(n: int) -> list[str]:
    from django.contrib.auth import get_user_model

    from tenants.models import Membership, Tenant

    tenant = Tenant.objects.get(slug="demo")
    names = []
    for i in range(n):
        user = get_user_model().objects.create_user(username=f"load{i}", password="keel-demo")
        Membership.objects.create(user=user, tenant=tenant, role="business")
        names.append(user.username)
    return names


def post_message(api: Api) -> float:
    status, conv = api.post("/api/v1/conversations/", {})
    assert status == 201, conv
    started = time.perf_counter()
    status, reply = api.post(f"/api/v1/conversations/{conv['id']}/messages/", {"text": REQUEST})
    elapsed = (time.perf_counter() - started) * 1000
    assert status in (200, 201), (status, reply)
    return elapsed


def burst(apis: list[Api]) -> tuple[list[float], float]:
    barrier = threading.Barrier(len(apis))
    out: list[float] = []

    def one(api):
        barrier.wait()
        out.append(post_message(api))

    threads = [threading.Thread(target=one, args=(api,)) for api in apis]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out, len(apis) / (time.perf_counter() - started)


def profile_one() -> dict:
    """One resolve message through the view, in this process: statements and CPU."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from tenants.models import Membership

    client = Client()
    client.force_login(Membership.objects.get(user__username="alice").user)
    conv = client.post("/api/v1/conversations/", {}, content_type="application/json").json()["id"]
    client.post(f"/api/v1/conversations/{conv}/messages/", {"text": REQUEST}, content_type="application/json")
    conv = client.post("/api/v1/conversations/", {}, content_type="application/json").json()["id"]
    profiler = cProfile.Profile()
    with CaptureQueriesContext(connection) as queries:
        t0, c0 = time.perf_counter(), time.process_time()
        profiler.enable()
        client.post(f"/api/v1/conversations/{conv}/messages/", {"text": REQUEST}, content_type="application/json")
        profiler.disable()
        wall, cpu = (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).sort_stats("cumulative").print_stats(r"(agents|workflows|timeline|"
                                                                              r"payroll|memory|llm)/", 25)
    print(stream.getvalue())
    by_table: dict[str, int] = {}
    for q in queries.captured_queries:
        sql = q["sql"].split()
        table = next((w.strip('"') for k, w in zip(sql, sql[1:]) if k.upper() in ("FROM", "INTO", "UPDATE")), "?")
        by_table[table] = by_table.get(table, 0) + 1
    print("statements by table:", sorted(by_table.items(), key=lambda kv: -kv[1])[:12])
    return {"profile_wall_ms": round(wall, 1), "profile_cpu_ms": round(cpu, 1),
            "profile_statements": len(queries.captured_queries)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--single", type=int, default=6)
    args = parser.parse_args()
    keel = deployment(workers=2, concurrency=2)
    try:
        celery_client(keel)  # Django against the deployment's database
        apis = [Api(keel.base_url, name) for name in users_create(args.users)]
        post_message(apis[0])  # warm up
        single, load, rates = [], [], []
        for _ in range(args.rounds):  # interleaved: one alone, then all at once
            single += [post_message(apis[0]) for _ in range(args.single)]
            times, rate = burst(apis)
            load += times
            rates.append(rate)
        profile = profile_one()
    finally:
        keel_stop(keel)
    s, lo = summary(single), summary(load)
    print(f"one user p50 {s['p50']:.0f} ms | {args.users} users p50 {lo['p50']:.0f} ms p99 {lo['p99']:.0f} ms | "
          f"{max(rates):.1f} messages/s")
    print(json.dumps({"users": args.users, "single_p50_ms": round(s["p50"], 1), "load_p50_ms": round(lo["p50"], 1),
                      "load_p99_ms": round(lo["p99"], 1), "messages_per_s": round(sorted(rates)[len(rates) // 2], 2),
                      "p99_ratio": round(lo["p99"] / s["p50"], 3), **profile}))


if __name__ == "__main__":
    main()
