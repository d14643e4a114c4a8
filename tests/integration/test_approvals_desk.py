"""The approver's desk on PostgreSQL + Redis + real `celery worker` and beat
processes: the live inbox feed, the matrix and four-eyes rule, reminders sent once."""
import asyncio
import json
import threading

import pytest
import websockets

from tests.support import LOGS, Api, Session, keel_start, keel_stop

REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"


def start_run(api: Api, group_name: str) -> dict:
    status, run = api.post("/api/v1/runs/", {"blueprint": "payroll_group_setup",
                                             "params": {"request": REQUEST, "group_name": group_name}})
    assert status == 201, run
    return run


def approval_of(api: Api, run_id: str) -> dict:
    [approval] = [a for a in api.get("/api/v1/approvals/")["results"] if a["run"] == run_id]
    return approval


pytestmark = [pytest.mark.long(50),  # seconds; started first (tests/fixtures.py)
              pytest.mark.keel("production", {"KEEL_SWEEP_SECONDS": "1"}, workers=1, beat=True)]


def test_a_new_approval_is_pushed_to_an_idle_inbox_and_not_to_another_tenant(keel):
    bob, oscar, alice = Session(keel.base_url, "bob"), Session(keel.base_url, "oscar"), Api(keel.base_url, "alice")
    ws_url = keel.base_url.replace("http://", "ws://") + "/ws/approvals/"

    async def scenario():
        async with websockets.connect(ws_url, additional_headers={"Cookie": bob.cookie_header(),
                                                                  "Origin": keel.base_url}) as ws:
            await asyncio.sleep(6)  # idle longer than redis-py 8's read timeout (channels_redis#422)
            run = await asyncio.to_thread(start_run, alice, "Pushed")
            pushed = json.loads(await asyncio.wait_for(ws.recv(), timeout=30))
        return run, pushed

    run, pushed = asyncio.run(scenario())
    assert pushed["type"] == "approval.changed" and pushed["status"] == "pending"
    assert pushed["approval"] == approval_of(Api(keel.base_url, "bob"), run["id"])["id"]

    async def refused():
        async with websockets.connect(ws_url, additional_headers={"Cookie": oscar.cookie_header(),
                                                                  "Origin": keel.base_url}) as ws:
            await asyncio.wait_for(ws.recv(), timeout=5)

    with pytest.raises((websockets.exceptions.InvalidStatus, websockets.exceptions.ConnectionClosed)):
        asyncio.run(refused())


def test_the_four_eyes_rule_and_concurrent_clicks_give_one_decision(keel):
    ada, bob = Api(keel.base_url, "ada"), Api(keel.base_url, "bob")
    run = ada.wait_for_run(start_run(ada, "Four Eyes")["id"], {"awaiting_approval"})
    approval = approval_of(bob, run["id"])
    status, body = ada.post(f"/api/v1/approvals/{approval['id']}/approve/")
    assert status == 403 and body["code"] == "four_eyes"
    barrier, results = threading.Barrier(10), []

    def click():
        barrier.wait()
        results.append(bob.post(f"/api/v1/approvals/{approval['id']}/approve/")[0])

    threads = [threading.Thread(target=click) for _ in range(10)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(results) == [200] + [409] * 9
    assert ada.wait_for_run(run["id"], {"completed", "failed"})["status"] == "completed"
    history = bob.get(f"/api/v1/approvals/history/{run['id']}/")
    assert [(d["user"], d["accepted"]) for d in history["decisions"]].count(("bob", True)) == 1
    assert ("ada", False) in [(d["user"], d["accepted"]) for d in history["decisions"]]


def test_a_threshold_sends_a_large_import_to_an_admin(keel):
    alice, bob, ada = Api(keel.base_url, "alice"), Api(keel.base_url, "bob"), Session(keel.base_url, "ada")
    form = "tool=import_template&roles=approver&roles=admin&deadline_hours=24&remind_minutes=120" \
           "&headcount_limit=2&monthly_gross_limit=&above_limit_role=admin"
    _matrix_post(ada, form)
    try:
        run = alice.wait_for_run(start_run(alice, "Too Large")["id"], {"awaiting_approval"})
        approval = approval_of(bob, run["id"])
        assert approval["needs_role"] == "admin" and "above the limit of 2" in approval["routing_reason"]
        status, body = bob.post(f"/api/v1/approvals/{approval['id']}/approve/")
        assert status == 403 and body["code"] == "matrix_refused"
        status, _ = ada.request("POST", f"/api/v1/approvals/{approval['id']}/approve/", {})
        assert status == 200
        assert alice.wait_for_run(run["id"], {"completed", "failed"})["status"] == "completed"
    finally:
        _matrix_post(ada, form.replace("headcount_limit=2", "headcount_limit=50"))


def _matrix_post(session: Session, form: str) -> None:
    import urllib.request

    req = urllib.request.Request(session.base_url + "/approvals/matrix/", method="POST",
                                 data=(form + "&csrfmiddlewaretoken=" + session.cookie("csrftoken")).encode(),
                                 headers={"Referer": session.base_url + "/approvals/matrix/",
                                          "Content-Type": "application/x-www-form-urlencoded"})
    with session.opener.open(req, timeout=30) as resp:
        assert "Saved the rule" in resp.read().decode()


def test_a_reminder_is_sent_once_before_the_deadline_and_the_run_then_expires():
    # Reminded in the second half of the wait (approvals.services.reminder_due_at): 6 s in which
    # the reminders task, every 0.5 s, runs a dozen times even on a busy machine — and reminds once.
    keel = keel_start("production", {"KEEL_SWEEP_SECONDS": "1", "KEEL_REMINDER_SECONDS": "0.5",
                                     "KEEL_APPROVAL_DEADLINE_SECONDS": "12"})
    try:
        keel.worker_start(concurrency=2, name="mailer")
        keel.worker_start(concurrency=2, name="mailer2")
        keel.beat_start()
        alice, bob = Api(keel.base_url, "alice"), Api(keel.base_url, "bob")
        run = alice.wait_for_run(start_run(alice, "Reminded")["id"], {"awaiting_approval"})
        blocked = alice.wait_for_run(run["id"], {"blocked"}, timeout=30)
        assert "expired" in blocked["status_reason"]
        history = bob.get(f"/api/v1/approvals/history/{run['id']}/")
        reminded = [e for e in history["events"] if e["type"] == "approval.reminded"]
        assert len(reminded) == 1 and reminded[0]["data"]["to"] == ["ada", "bob"]
        assert [e["type"] for e in history["events"]][-1] == "approval.expired"
        # Through Django's email backend (the console backend writes to the worker's log), once.
        logs = "".join((LOGS / f"worker-{name}.log").read_text() for name in ("mailer", "mailer2"))
        assert logs.count("Subject: Keel: an approval is due in") == 1
        assert "To: ada@demo.example, bob@demo.example" in logs
    finally:
        keel_stop(keel)
