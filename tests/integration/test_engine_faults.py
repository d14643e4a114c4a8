"""The engine under faults, each test on a deployment of its own: a worker killed after its
effect, the broker flushed, an approval nobody answers, waiting runs and worker slots."""
import pytest
import redis

from tests.integration.payroll_runs import FAST, groups_named, pending_approval, start_run
from tests.support import FLUSHED_REDIS_DB, Api, keel_start, keel_stop, process_group_kill, wait_until

pytestmark = pytest.mark.long(120)  # seconds; started first (tests/fixtures.py)


def test_waiting_runs_hold_no_worker_slot():
    keel = keel_start("production", FAST)
    try:
        keel.worker_start(concurrency=1)
        keel.beat_start()
        alice, bob = Api(keel.base_url, "alice"), Api(keel.base_url, "bob")
        waiting = [start_run(alice, group_name=f"Waiting {i}") for i in range(3)]
        for run in waiting:
            alice.wait_for_run(run["id"], {"awaiting_approval"})
        fourth = start_run(alice, group_name="Fourth")
        alice.wait_for_run(fourth["id"], {"awaiting_approval"})
        bob.post(f"/api/v1/approvals/{pending_approval(bob, fourth['id'])['id']}/approve/")
        assert alice.wait_for_run(fourth["id"], {"completed", "failed"})["status"] == "completed"
        assert all(alice.get(f"/api/v1/runs/{r['id']}/")["status"] == "awaiting_approval" for r in waiting)
    finally:
        keel_stop(keel)


def test_an_approval_expires_without_any_request():
    keel = keel_start("production", {**FAST, "KEEL_APPROVAL_DEADLINE_SECONDS": "2"})
    try:
        keel.worker_start(concurrency=2)
        keel.beat_start()
        alice, bob = Api(keel.base_url, "alice"), Api(keel.base_url, "bob")
        run = start_run(alice, group_name="Expiring")
        run = alice.wait_for_run(run["id"], {"awaiting_approval"})
        approval = [a for a in bob.get("/api/v1/approvals/")["results"] if a["run"] == run["id"]][0]
        # nobody does anything: the sweeper expires it
        run = alice.wait_for_run(run["id"], {"blocked"}, timeout=20)
        assert "expired" in run["status_reason"]
        status, body = bob.post(f"/api/v1/approvals/{approval['id']}/approve/")
        assert status == 409 and body["status"] == "expired"
        assert groups_named(keel, "Expiring") == 0
    finally:
        keel_stop(keel)


def test_a_worker_killed_after_the_import_wrote_loses_nothing_and_duplicates_nothing():
    keel = keel_start("production", FAST)
    try:
        doomed_env = {**keel.env, "KEEL_FAULTS": "import_template.after=sleep:60"}
        healthy_env = keel.env
        keel.env = doomed_env
        doomed = keel.worker_start(concurrency=1)
        keel.env = healthy_env
        keel.beat_start()
        alice, bob = Api(keel.base_url, "alice"), Api(keel.base_url, "bob")
        run = start_run(alice, group_name="Survivor")
        alice.wait_for_run(run["id"], {"awaiting_approval"})
        bob.post(f"/api/v1/approvals/{pending_approval(bob, run['id'])['id']}/approve/")
        wait_until(lambda: groups_named(keel, "Survivor") == 1, "the import to write its group")
        assert alice.get(f"/api/v1/runs/{run['id']}/")["status"] == "running"  # the node has not completed
        process_group_kill(doomed)  # SIGKILL to the worker and its pool children
        keel.worker_start(concurrency=1)
        run = alice.wait_for_run(run["id"], {"completed", "failed"}, timeout=60)
        assert run["status"] == "completed", run["status_reason"]
        assert groups_named(keel, "Survivor") == 1
        assert {n["key"]: n["attempts"] for n in run["nodes"]}["import"] == 2
        crash = next(m for m in alice.get("/api/v1/metrics/")["metrics"] if m["key"] == "crash_recoveries")
        assert (crash["numerator"], crash["denominator"]) == (1, 1)
    finally:
        keel_stop(keel)


def test_a_run_finishes_from_the_database_alone_after_the_broker_is_flushed():
    keel = keel_start("production", FAST, redis_db=FLUSHED_REDIS_DB)
    try:
        first = keel.worker_start(concurrency=2)
        alice, bob = Api(keel.base_url, "alice"), Api(keel.base_url, "bob")
        run = start_run(alice, group_name="From The Database")
        alice.wait_for_run(run["id"], {"awaiting_approval"})
        process_group_kill(first)  # every worker stopped
        bob.post(f"/api/v1/approvals/{pending_approval(bob, run['id'])['id']}/approve/")
        redis.Redis.from_url(keel.env["REDIS_URL"]).flushdb()  # the dispatch is gone with the broker
        keel.worker_start(concurrency=2)
        keel.beat_start()
        run = alice.wait_for_run(run["id"], {"completed", "failed"}, timeout=60)
        assert run["status"] == "completed", run["status_reason"]
        assert groups_named(keel, "From The Database") == 1
    finally:
        keel_stop(keel)
