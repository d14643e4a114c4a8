"""Commit-to-browser latency of timeline events on the production topology
(PostgreSQL, Redis channel layer, the ASGI server as its own process), against
a raw channel-layer group_send to a websocket client, measured in the same run.

  event : t0 before the transaction that appends the event → the websocket
          client holds it (commit, after-commit group_send, the consumer's
          ordering check, the socket);
  raw   : t0 before a bare group_send → the websocket client holds it
          (TenantConsumer forwards it untouched);
  commit: one small transaction's commit on the same database.

Goal: p99(event) ≤ 1.5 × (p99(raw) + p99(commit)).
    .venv/bin/python bench/push_latency.py [--n 300]
Ends with one JSON line: {"p50_ms", "p99_ms", "p99_ratio"}.
"""
import argparse
import json
import os
import threading
import time

from common import Api, keel_start, keel_stop, percentile

from tests.support import Session


def reader(url: str, cookie: str, origin: str, arrivals: dict, ready: threading.Event, first: dict | None,
           stop: threading.Event) -> None:
    from websockets.sync.client import connect

    with connect(url, additional_headers={"Cookie": cookie}, origin=origin) as ws:
        if first is not None:
            ws.send(json.dumps(first))
        ready.set()
        while not stop.is_set():
            try:
                raw = ws.recv(timeout=0.5)
            except TimeoutError:
                continue
            now = time.perf_counter()
            msg = json.loads(raw)
            if msg.get("type") == "timeline.event":
                arrivals[("event", msg["event"]["data"].get("index"))] = now
            elif msg.get("type") == "wiring.done":
                arrivals[("raw", msg.get("check_id"))] = now


def wait_for(arrivals: dict, key, timeout: float = 10) -> float:
    deadline = time.perf_counter() + timeout
    while key not in arrivals:
        if time.perf_counter() > deadline:
            raise TimeoutError(key)
        time.sleep(0.0002)
    return arrivals[key]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=300)
    args = parser.parse_args()

    keel = keel_start("production", {"KEEL_LOG_LEVEL": "WARNING"})
    try:
        os.environ.update({k: keel.env[k] for k in ("DATABASE_URL", "REDIS_URL", "KEEL_CHANNEL_PREFIX")})
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        import django

        django.setup()
        from asgiref.sync import async_to_sync
        from channels.layers import get_channel_layer
        from django.db import transaction

        from tenants.models import Membership
        from timeline.models import Conversation
        from timeline.push import tenant_group
        from timeline.services import event_append

        _, conversation = Api(keel.base_url, "alice").post("/api/v1/conversations/", {"title": "push latency"})
        conversation_id = int(conversation["id"])
        tenant_id = Membership.objects.get(user__username="alice").tenant_id
        session = Session(keel.base_url, "alice")
        ws_base = keel.base_url.replace("http://", "ws://")
        arrivals: dict = {}
        stop = threading.Event()
        threads = []
        for path, first in ((f"/ws/conversations/{conversation_id}/", {"after": 0}), ("/ws/tenant/", None)):
            ready = threading.Event()
            t = threading.Thread(target=reader, daemon=True, args=(ws_base + path, session.cookie_header(),
                                                                   keel.base_url, arrivals, ready, first, stop))
            t.start()
            ready.wait(10)
            threads.append(t)
        time.sleep(0.5)  # both consumers have joined their groups
        layer = get_channel_layer()
        send = async_to_sync(layer.group_send)

        raw_ms, event_ms, commit_ms = [], [], []
        for i in range(args.n + 20):  # the first 20 warm connections and caches up
            t0 = time.perf_counter()
            send(tenant_group(tenant_id), {"type": "wiring.done", "check_id": str(i), "completed_at": "",
                                           "worker": "bench"})
            raw = (wait_for(arrivals, ("raw", str(i))) - t0) * 1000

            t0 = time.perf_counter()
            with transaction.atomic():
                Conversation.objects.filter(id=conversation_id).update(title=f"push latency {i}")
            commit = (time.perf_counter() - t0) * 1000

            t0 = time.perf_counter()
            with transaction.atomic():
                event_append(conversation_id=conversation_id, type="bench.probe", data={"index": i})
            event = (wait_for(arrivals, ("event", i)) - t0) * 1000
            if i >= 20:
                raw_ms.append(raw), commit_ms.append(commit), event_ms.append(event)
            time.sleep(0.005)
        stop.set()
        for t in threads:
            t.join(5)
    finally:
        keel_stop(keel)

    p50, p99 = percentile(event_ms, 50), percentile(event_ms, 99)
    baseline = percentile(raw_ms, 99) + percentile(commit_ms, 99)
    print(f"raw group_send → websocket: p50 {percentile(raw_ms, 50):.2f} ms, p99 {percentile(raw_ms, 99):.2f} ms")
    print(f"one commit:                 p50 {percentile(commit_ms, 50):.2f} ms, p99 {percentile(commit_ms, 99):.2f} ms")
    print(f"timeline event commit → websocket: p50 {p50:.2f} ms, p99 {p99:.2f} ms "
          f"(n={len(event_ms)}); goal p99 ≤ 1.5 × {baseline:.2f} ms")
    print(json.dumps({"p50_ms": round(p50, 2), "p99_ms": round(p99, 2), "p99_ratio": round(p99 / baseline, 2)}))


if __name__ == "__main__":
    main()
