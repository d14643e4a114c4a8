"""Killing the worker that closes a payroll month, after the close committed and before its step
said so: the step runs again on another worker and the month keeps one set of payslips and one
pair of bank files with one declaration; the run completes and verifies."""
import psycopg
import pytest

from tests.integration.payroll_runs import FAST, pending_approval
from tests.support import Api, keel_start, keel_stop, process_group_kill, wait_until

pytestmark = pytest.mark.long(90)  # seconds; started first (tests/fixtures.py)
DONE = {"completed", "failed", "blocked", "rolled_back", "stopped"}
SETUP = ("from tests.payroll import month_group, month_inputs; from payroll.tests.test_month import NOVEMBER; "
         "g = month_group(); month_inputs(g, 2026, 11, NOVEMBER); print(g.id)")


def count(keel, query: str, *args) -> int:
    with psycopg.connect(keel.env["DATABASE_URL"]) as conn:
        return conn.execute(query, args).fetchone()[0]


def test_a_worker_killed_inside_the_close_leaves_one_set_of_payslips_and_one_pair_of_files():
    keel = keel_start("production", FAST)
    try:
        group_id = keel.manage("shell", "-c", SETUP).strip().splitlines()[-1]
        healthy_env = keel.env
        # The close's writes commit, then the worker sleeps before the node says completed.
        keel.env = {**keel.env, "KEEL_FAULTS": "close_payroll_month.after=sleep:60"}
        doomed = keel.worker_start(concurrency=1)
        keel.env = healthy_env
        keel.beat_start()
        alice, bob = Api(keel.base_url, "alice"), Api(keel.base_url, "bob")
        status, body = alice.post("/api/v1/payroll/months/", {"group": group_id, "year": 2026, "month": 11})
        assert status == 202, body
        alice.wait_for_run(body["run_id"], {"awaiting_approval"}, timeout=90)
        status, _ = bob.post(f"/api/v1/approvals/{pending_approval(bob, body['run_id'])['id']}/approve/")
        assert status == 200
        month = int(body["id"])
        wait_until(lambda: count(keel, "SELECT count(*) FROM payroll_payrollmonth WHERE id = %s AND status = 'closed'",
                                 month) == 1, "the close to commit", timeout=60)
        process_group_kill(doomed)  # SIGKILL in the window after the close and before its completion
        keel.worker_start(concurrency=1)
        run = alice.wait_for_run(body["run_id"], DONE, timeout=120)
        assert run["status"] == "completed", run["status_reason"]
        assert {n["key"]: n["attempts"] for n in run["nodes"]}["close"] == 2
        assert count(keel, "SELECT count(*) FROM payroll_payslip WHERE month_id = %s", month) == 3
        assert count(keel, "SELECT count(*) FROM payroll_monthfile WHERE month_id = %s", month) == 3
        assert alice.get(f"/api/v1/payroll/months/{month}/")["files"]["tax"]["sha256"]
    finally:
        keel_stop(keel)
