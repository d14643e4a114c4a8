"""Server time and query count of the developer timeline page for an Activity
holding 1,000 and 20,000 frames: the page is bounded (200 frames, keyset
pagination), so both should cost the same queries and about the same time.

Uses DATABASE_URL when set (PostgreSQL), else a throw-away embedded PostgreSQL.
    .venv/bin/python bench/timeline_page.py [--rounds 5] [--frames 1000,20000]
Ends with one JSON line: {"ms_1k", "ms_20k", "queries_1k", "queries_20k"} (each size's label:
thousands as "Nk", else the number).
"""
import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
if not os.environ.get("DATABASE_URL"):  # an embedded PostgreSQL of its own, deleted with its folder
    os.environ["KEEL_PGDATA"] = str(Path(tempfile.mkdtemp(prefix="keel-bench-")) / "pgdata")


def activity_with_frames(n: int, membership):
    from django.utils import timezone

    from timeline.models import Activity, Frame
    from timeline.services import conversation_create

    conversation = conversation_create(tenant_id=membership.tenant_id, user_id=membership.user_id,
                                       title=f"{n} frames")
    start = timezone.now()
    activity = Activity.objects.create(conversation=conversation, kind="run", title=f"{n} frames", frame_count=n,
                                       frames_from=start, frames_until=start + timedelta(milliseconds=n + 5))
    kinds = ["thought", "action", "observation", "tool_call", "model_call"]
    Frame.objects.bulk_create([
        Frame(activity=activity, kind=kinds[i % 5], name=f"frame {i}", summary=f"step {i}", latency_ms=1.5,
              started_at=start + timedelta(milliseconds=i), ended_at=start + timedelta(milliseconds=i + 1.5),
              gen_ai_tool_name="match_salary_template" if i % 5 == 3 else "")
        for i in range(n)], batch_size=2000)
    return conversation


def measure(client, url: str, rounds: int) -> tuple[float, int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.get(url)  # warm: templates compiled, session loaded
    times, queries = [], 0
    for _ in range(rounds):
        with CaptureQueriesContext(connection) as ctx:
            t0 = time.perf_counter()
            response = client.get(url)
            times.append((time.perf_counter() - t0) * 1000)
        assert response.status_code == 200, response.status_code
        assert response.content.count(b'class="frame-row') <= 200
        queries = len(ctx.captured_queries)
    return statistics.median(times), queries


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--frames", default="1000,20000", help="the two activities' frame counts")
    args = parser.parse_args()
    sizes = [(f"{n // 1000}k" if n % 1000 == 0 else str(n), n) for n in map(int, args.frames.split(","))]

    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.test import Client

    call_command("migrate", verbosity=0, interactive=False)
    call_command("seed_demo", verbosity=0)
    dora = User.objects.get(username="dora")
    client = Client()
    client.force_login(dora)
    # Build both data sets first and measure afterwards, so the Python heap is the
    # same for both measurements (making 20,000 rows inflates it for a while).
    conversations = {}
    from django.db import connection

    for label, n in sizes:
        t0 = time.perf_counter()
        conversations[label] = activity_with_frames(n, dora.membership)
        print(f"created {n} frames in {(time.perf_counter() - t0) * 1000:.0f} ms")
    with connection.cursor() as cursor:  # what autovacuum would do after a bulk load
        cursor.execute("ANALYZE timeline_frame")
    gc.collect()
    results = {}
    for label, n in sizes:
        ms, queries = measure(client, f"/conversations/{conversations[label].id}/timeline/?view=developer",
                              args.rounds)
        print(f"{n:>6} frames: page {ms:7.1f} ms server time (median of {args.rounds}), {queries} queries")
        results[f"ms_{label}"], results[f"queries_{label}"] = round(ms, 1), queries
    print(json.dumps({f"{figure}_{label}": results[f"{figure}_{label}"]
                      for figure in ("ms", "queries") for label, _ in sizes}))


if __name__ == "__main__":
    main()
