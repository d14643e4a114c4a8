"""Every real part wired: request → commit → broker → worker → row → channel
layer → websocket, in both topologies (DESIGN.md §3)."""
import asyncio
import json

import psycopg
import pytest
import websockets

from tests.support import Session, keel_start, keel_stop


@pytest.fixture(params=["production", "embedded"])
def keel(request, tmp_path):
    keel = keel_start(request.param, tmp_path)
    if request.param == "production":
        keel.worker_start(concurrency=2)
    yield keel
    keel_stop(keel)


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
