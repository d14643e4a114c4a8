"""The chat under a team's load: 20 users post a resolve message at once, against
one user alone in the same run (production topology). Also profiles messages
in-process: SQL statements and where the CPU goes (cProfile, top functions).

    .venv/bin/python bench/chat_load.py [--users 20] [--rounds 2] [--single 6] [--web-processes 1] [--profiled 10]
Ends with one JSON line. Besides the latencies: the CPU each message cost during the
bursts, in the server process (`server_cpu_ms_per_message`: it runs the requests, one
Python interpreter) and in the worker processes (`workers_cpu_ms_per_message`: the runs
the messages started), and the per-message mean of the in-process profile
(`profile_cpu_ms`, `profile_statements`). With N users posting at once the last answer
cannot come before N × the server's CPU per message ÷ its processes (given the cores):
`load_p99_floor_ms`."""
import argparse
import cProfile
import io
import itertools
import json
import os
import pstats
import threading
import time

from common import Api, celery_client, deployment, keel_stop, proc_stats, summary

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


def cpu_ms(process_group: int) -> float:
    """CPU time (user + system) of the live processes of a process group, in ms."""
    total = sum(int(fields[11]) + int(fields[12]) for _, fields in proc_stats() if int(fields[2]) == process_group)
    return total * 1000 / os.sysconf("SC_CLK_TCK")


def profile_one(messages: int = 10) -> dict:
    """Resolve messages through the view, in this process: statements and CPU per message."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from tenants.models import Membership

    client = Client()
    client.force_login(Membership.objects.get(user__username="alice").user)
    conv = client.post("/api/v1/conversations/", {}, content_type="application/json").json()["id"]
    client.post(f"/api/v1/conversations/{conv}/messages/", {"text": REQUEST}, content_type="application/json")
    convs = [client.post("/api/v1/conversations/", {}, content_type="application/json").json()["id"]
             for _ in range(messages)]
    profiler = cProfile.Profile()
    with CaptureQueriesContext(connection) as queries:
        t0, c0 = time.perf_counter(), time.process_time()
        for conv in convs[:-1]:
            client.post(f"/api/v1/conversations/{conv}/messages/", {"text": REQUEST}, content_type="application/json")
        wall, cpu = (time.perf_counter() - t0) * 1000 / (messages - 1), (time.process_time() - c0) * 1000 / (messages - 1)
        statements = len(queries.captured_queries) / (messages - 1)
    with CaptureQueriesContext(connection) as queries:
        profiler.enable()  # the last one profiled: cProfile's own cost stays out of the times above
        client.post(f"/api/v1/conversations/{convs[-1]}/messages/", {"text": REQUEST},
                    content_type="application/json")
        profiler.disable()
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).sort_stats("cumulative").print_stats(r"(agents|workflows|timeline|"
                                                                              r"payroll|memory|llm)/", 25)
    print(stream.getvalue())
    by_table: dict[str, int] = {}
    for q in queries.captured_queries:
        sql = q["sql"].split()
        table = next((w.strip('"') for k, w in itertools.pairwise(sql) if k.upper() in ("FROM", "INTO", "UPDATE")), "?")
        by_table[table] = by_table.get(table, 0) + 1
    print("statements by table:", sorted(by_table.items(), key=lambda kv: -kv[1])[:12])
    return {"profile_wall_ms": round(wall, 1), "profile_cpu_ms": round(cpu, 1),
            "profile_statements": round(statements, 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--single", type=int, default=6)
    parser.add_argument("--web-processes", type=int, default=1, help="the server's processes (KEEL_WEB_PROCESSES)")
    parser.add_argument("--profiled", type=int, default=10, help="messages profiled in-process (at least 2)")
    args = parser.parse_args()
    keel = deployment(workers=2, concurrency=2, env={"KEEL_WEB_PROCESSES": str(args.web_processes)})
    try:
        celery_client(keel)  # Django against the deployment's database
        apis = [Api(keel.base_url, name) for name in users_create(args.users)]
        post_message(apis[0])  # warm up
        server, workers = keel.procs[0].pid, [w.pid for w in keel.workers]
        single, load, rates, server_cpu, workers_cpu = [], [], [], 0.0, 0.0
        for _ in range(args.rounds):  # interleaved: one alone, then all at once
            single += [post_message(apis[0]) for _ in range(args.single)]
            s0, w0 = cpu_ms(server), sum(cpu_ms(w) for w in workers)
            times, rate = burst(apis)
            server_cpu += cpu_ms(server) - s0
            workers_cpu += sum(cpu_ms(w) for w in workers) - w0
            load += times
            rates.append(rate)
        profile = profile_one(args.profiled)
    finally:
        keel_stop(keel)
    s, lo = summary(single), summary(load)
    # Each message of a burst is two requests (a new conversation, then the message).
    server_per_message, workers_per_message = server_cpu / len(load), workers_cpu / len(load)
    print(f"one user p50 {s['p50']:.0f} ms | {args.users} users p50 {lo['p50']:.0f} ms p99 {lo['p99']:.0f} ms | "
          f"{max(rates):.1f} messages/s")
    print(json.dumps({"users": args.users, "web_processes": args.web_processes, "single_p50_ms": round(s["p50"], 1), "load_p50_ms": round(lo["p50"], 1),
                      "load_p99_ms": round(lo["p99"], 1), "messages_per_s": round(sorted(rates)[len(rates) // 2], 2),
                      "p99_ratio": round(lo["p99"] / s["p50"], 3),
                      "server_cpu_ms_per_message": round(server_per_message, 1),
                      "workers_cpu_ms_per_message": round(workers_per_message, 1),
                      "load_p99_floor_ms": round(args.users * server_per_message / args.web_processes, 1), **profile}))


if __name__ == "__main__":
    main()
