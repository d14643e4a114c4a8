"""Every real part wired: request → commit → broker → worker → row → channel
layer → websocket, in both topologies (DESIGN.md §3), and with the server in two
processes (`serve --processes`, KEEL_WEB_PROCESSES)."""
import asyncio
import json
import os
import signal

import psycopg
import pytest
import websockets

from tests.support import Api, Session, keel_start, keel_stop, proc_stats, wait_until


# The Keel (tests/fixtures.py) in each topology the round trip must work in.
TOPOLOGIES = pytest.mark.parametrize("keel", [
    pytest.param({"mode": "production", "workers": 1}, id="production"),
    pytest.param({"mode": "production", "env": {"KEEL_WEB_PROCESSES": "2"}, "workers": 1},
                 id="production, two server processes"),
    pytest.param({"mode": "embedded"}, id="embedded"),
], indirect=True)


def server_processes(keel) -> set[int]:
    """The processes serving requests: the supervisor's children that import Django."""
    supervisor, found = keel.procs[0].pid, set()
    for pid, fields in proc_stats():
        if int(fields[1]) != supervisor:
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"spawn_main" in f.read():
                    found.add(pid)
        except OSError:
            continue
    return found


async def _round_trip(keel, alice: Session, idle_seconds: float) -> tuple[dict, dict]:
    ws_url = keel.base_url.replace("http://", "ws://") + "/ws/tenant/"
    headers = {"Cookie": alice.cookie_header(), "Origin": keel.base_url}
    async with websockets.connect(ws_url, additional_headers=headers) as ws:
        # channels-redis on redis-py 8 drops idle consumers after ~5 s (channels_redis#422).
        await asyncio.sleep(idle_seconds)
        status, check = await asyncio.to_thread(alice.request, "POST", "/api/v1/wiring-checks/")
        assert status == 201, check
        pushed = json.loads(await asyncio.wait_for(ws.recv(), timeout=15))
    return check, pushed


@TOPOLOGIES
def test_a_request_reaches_a_worker_and_comes_back_over_the_websocket(keel):
    alice = Session(keel.base_url, "alice")
    idle = 10 if "REDIS_URL" in keel.env else 1
    check, pushed = asyncio.run(_round_trip(keel, alice, idle))
    assert pushed["type"] == "wiring.done" and pushed["check_id"] == check["id"]
    # The worker wrote the row: the API reads it back completed.
    status, stored = alice.request("GET", f"/api/v1/wiring-checks/{check['id']}/")
    assert status == 200 and stored["completed_at"] and stored["worker"]
    if "DATABASE_URL" in keel.env:  # and it is really in PostgreSQL
        with psycopg.connect(keel.env["DATABASE_URL"]) as conn:
            row = conn.execute("SELECT completed_at FROM timeline_wiringcheck WHERE id = %s",
                               (int(check["id"]),)).fetchone()
        assert row and row[0] is not None


@TOPOLOGIES
def test_oscar_never_hears_of_demos_checks(keel):
    alice, oscar = Session(keel.base_url, "alice"), Session(keel.base_url, "oscar")

    async def scenario():
        ws_url = keel.base_url.replace("http://", "ws://") + "/ws/tenant/"
        async with websockets.connect(ws_url, additional_headers={"Cookie": oscar.cookie_header(),
                                                                  "Origin": keel.base_url}) as ws:
            status, check = await asyncio.to_thread(alice.request, "POST", "/api/v1/wiring-checks/")
            assert status == 201
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(ws.recv(), timeout=3)
        return check

    check = asyncio.run(scenario())
    assert oscar.request("GET", f"/api/v1/wiring-checks/{check['id']}/")[0] == 404


def test_a_server_process_that_dies_is_replaced_and_nobody_notices():
    keel = keel_start("production", {"KEEL_WEB_PROCESSES": "2"})
    try:
        keel.worker_start(concurrency=1)
        alice = Api(keel.base_url, "alice")
        before = server_processes(keel)
        assert len(before) == 2
        os.kill(min(before), signal.SIGKILL)
        # The survivor answers every request meanwhile; a chat message starts its run.
        for _ in range(10):
            assert alice.get("/api/v1/runs/")["results"] is not None
        status, conv = alice.post("/api/v1/conversations/", {})
        assert status == 201
        status, reply = alice.post(f"/api/v1/conversations/{conv['id']}/messages/", {
            "text": "set up a monthly payroll group for our Shanghai sales team with commission"})
        assert status in (200, 201) and reply["run_id"]
        assert alice.wait_for_run(reply["run_id"], {"awaiting_approval"})["status"] == "awaiting_approval"
        # The supervisor has started a replacement.
        wait_until(lambda: len(server_processes(keel)) == 2 and server_processes(keel) != before,
                   "a replacement server process", timeout=30)
        assert alice.get(f"/api/v1/runs/{reply['run_id']}/")["status"] == "awaiting_approval"
    finally:
        keel_stop(keel)
