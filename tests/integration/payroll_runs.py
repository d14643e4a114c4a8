"""Starting a payroll group set-up run and reading its outcome, for the engine's tests."""
import psycopg

from tests.support import Api

REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"
FAST = {"KEEL_LEASE_SECONDS": "3", "KEEL_SWEEP_SECONDS": "1", "KEEL_IDEMPOTENCY_LEASE_SECONDS": "5"}


def start_run(alice: Api, **params) -> dict:
    status, run = alice.post("/api/v1/runs/", {"blueprint": "payroll_group_setup",
                                               "params": {"request": REQUEST, "group_name": "Shanghai Sales",
                                                          **params}})
    assert status == 201, run
    return run


def pending_approval(bob: Api, run_id: str) -> dict:
    approvals = [a for a in bob.get("/api/v1/approvals/?status=pending")["results"] if a["run"] == run_id]
    assert len(approvals) == 1, approvals
    return approvals[0]


def groups_named(keel, name: str) -> int:
    if "DATABASE_URL" not in keel.env:
        return len([g for g in Api(keel.base_url, "dora").get("/api/v1/payroll/groups/")["results"]
                    if g["name"] == name])
    with psycopg.connect(keel.env["DATABASE_URL"]) as conn:
        return conn.execute("SELECT count(*) FROM payroll_payrollgroup WHERE name = %s", (name,)).fetchone()[0]
