"""Safety scoped to what a step touches, under concurrency, on PostgreSQL + Redis +
`celery worker` processes (DESIGN.md §4 and §7)."""
import threading
import time

import psycopg
import pytest

from tests.support import Api

REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"
# Thirty starts at once queue for the server's ten pooled connections with the defaults: the
# database is up, so each waits its turn (config/database_health.py) and none answers 503.
FAST = {"KEEL_LEASE_SECONDS": "3", "KEEL_SWEEP_SECONDS": "1"}
FINISHED = {"completed", "failed", "blocked", "rolled_back", "stopped", "cancelled"}


# Verify fails for the one run that asks for it (a tagged fault), nobody else's.
# Two runs' first imports are verified one item short (each is then replanned with the next
# template), nobody else's.
FAULTS = {**FAST, "KEEL_FAULTS": "verify_import.after#Verify Fails=fail,import_template.after=sleep:0.2,"
                                 "verify_import.item_unseen#Replan A+cn-sales-commission=on,"
                                 "verify_import.item_unseen#Replan B+cn-sales-commission=on"}
pytestmark = [pytest.mark.long(50),  # seconds; started first (tests/fixtures.py)
              pytest.mark.keel("production", FAULTS, workers=2, beat=True)]


@pytest.fixture(scope="module")
def apis(keel):
    return Api(keel.base_url, "alice"), Api(keel.base_url, "bob")


def start_run(alice: Api, group_name: str, **params) -> str:
    status, run = alice.post("/api/v1/runs/", {"blueprint": "payroll_group_setup",
                                               "params": {"request": REQUEST, "group_name": group_name, **params}})
    assert status == 201, run
    return run["id"]


def approvals_of(bob: Api, run_id: str, status: str = "pending") -> list[dict]:
    return [a for a in bob.get(f"/api/v1/approvals/?status={status}")["results"] if a["run"] == run_id]


def approve(bob: Api, run_id: str) -> None:
    pending = approvals_of(bob, run_id)
    assert len(pending) == 1, pending
    status, body = bob.post(f"/api/v1/approvals/{pending[0]['id']}/approve/", {"comment": "ok"})
    assert status == 200, body


def groups_named(keel, name: str) -> int:
    with psycopg.connect(keel.env["DATABASE_URL"]) as conn:
        return conn.execute("SELECT count(*) FROM payroll_payrollgroup WHERE name = %s", (name,)).fetchone()[0]


def test_thirty_concurrent_runs_on_disjoint_names_all_complete_without_a_409(keel, apis):
    alice, bob = apis
    names = [f"Disjoint {i}" for i in range(30)]
    run_ids: list[str] = []
    lock = threading.Lock()

    def start(name):
        run_id = start_run(alice, name)
        with lock:
            run_ids.append(run_id)

    threads = [threading.Thread(target=start, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    answers: list[int] = []
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        for approval in bob.get("/api/v1/approvals/?status=pending")["results"]:
            if approval["run"] in run_ids:
                answers.append(bob.post(f"/api/v1/approvals/{approval['id']}/approve/")[0])
        runs = [alice.get(f"/api/v1/runs/{r}/") for r in run_ids]
        if all(r["status"] in FINISHED for r in runs):
            break
        time.sleep(0.3)
    assert sorted({r["status"] for r in runs}) == ["completed"], [(r["status"], r["status_reason"]) for r in runs
                                                                  if r["status"] != "completed"]
    assert answers == [200] * 30  # no 409: disjoint runs never make each other's approval stale
    assert all(r["plan_version"] == 1 for r in runs)
    assert [groups_named(keel, n) for n in names] == [1] * 30


def test_the_same_name_twice_one_completes_the_other_asks_for_another_name_first(keel, apis):
    alice, bob = apis
    first = start_run(alice, "Same Name")
    alice.wait_for_run(first, {"awaiting_approval"})
    second = start_run(alice, "Same Name")
    run = alice.wait_for_run(second, {"awaiting_input", "awaiting_approval"})
    assert run["status"] == "awaiting_input"
    question = next(n for n in run["nodes"] if n["key"] == "snapshot")["question"]["text"]
    assert "“Same Name” is being used for a new group by run" in question
    assert approvals_of(bob, second, status="") == []  # no approver was ever asked
    approve(bob, first)
    assert alice.wait_for_run(first, FINISHED)["status"] == "completed"
    status, _ = alice.post(f"/api/v1/runs/{second}/input/", {"answer": "Same Name West"})
    assert status == 200
    alice.wait_for_run(second, {"awaiting_approval"})
    approve(bob, second)
    assert alice.wait_for_run(second, FINISHED)["status"] == "completed"
    assert groups_named(keel, "Same Name") == groups_named(keel, "Same Name West") == 1


def test_a_verify_failure_undoes_the_import(keel, apis):
    alice, bob = apis
    run_id = start_run(alice, "Verify Fails")
    alice.wait_for_run(run_id, {"awaiting_approval"})
    approve(bob, run_id)
    run = alice.wait_for_run(run_id, FINISHED)
    assert run["status"] == "rolled_back", run["status_reason"]
    nodes = {n["key"]: n["status"] for n in run["nodes"]}
    assert nodes["verify"] == "failed" and nodes["restore"] == "completed"
    assert groups_named(keel, "Verify Fails") == 0


def template_of_group(keel, name: str) -> str:
    with psycopg.connect(keel.env["DATABASE_URL"]) as conn:
        return conn.execute("SELECT t.code FROM payroll_payrollgroup g JOIN payroll_payrolltemplate t "
                            "ON t.id = g.template_id WHERE g.name = %s", (name,)).fetchone()[0]


def wait_for_plan(api: Api, run_id: str, version: int, timeout: float = 60) -> dict:
    """The run once it waits again under plan `version` (or has ended)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = api.get(f"/api/v1/runs/{run_id}/")
        if run["status"] in FINISHED or (run["plan_version"] == version and run["status"] == "awaiting_approval"):
            return run
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} never reached plan v{version}: {run['status']} {run['status_reason']}")


def test_two_runs_at_once_each_undo_a_failed_verification_then_complete_with_the_next_best_template(keel, apis):
    alice, bob = apis
    names = ["Replan A", "Replan B"]
    runs: dict[str, str] = {}
    threads = [threading.Thread(target=lambda n=n: runs.__setitem__(n, start_run(alice, n))) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for name in names:
        alice.wait_for_run(runs[name], {"awaiting_approval"})
    approvers = [threading.Thread(target=approve, args=(bob, runs[n])) for n in names]
    for t in approvers:
        t.start()
    for t in approvers:
        t.join()
    for name in names:
        run = wait_for_plan(alice, runs[name], 2)
        assert run["status"] == "awaiting_approval" and run["plan_version"] == 2, run["status_reason"]
        diff = run["plans"][1]["diff"]
        assert diff["why"] == ("verification failed: every template item is in the group; "
                               "trying template Shanghai monthly salaried staff")
        assert [k["key"] for k in diff["kept"]] == ["interpret", "snapshot"]
        assert {"key": "restore", "status": "completed"} in diff["removed"]
        assert groups_named(keel, name) == 0  # the first import was undone before the replan
    # Between the undo and the second import the names stay reserved: a third run is asked for another.
    third = start_run(alice, "Replan A")
    assert alice.wait_for_run(third, {"awaiting_input", "awaiting_approval"})["status"] == "awaiting_input"
    # (left waiting for its answer: it holds nothing, and a cancel would show in the cancelled list below)
    for name in names:
        approve(bob, runs[name])
    for name in names:
        run = alice.wait_for_run(runs[name], FINISHED)
        assert run["status"] == "completed", run["status_reason"]
        assert groups_named(keel, name) == 1 and template_of_group(keel, name) == "cn-sh-monthly-salaried"


def test_a_failed_import_removes_its_own_group_and_keeps_the_one_another_run_made_meanwhile(keel, apis):
    alice, bob = apis
    a = start_run(alice, "Run A", template_code="cn-sh-legacy-grade-2015")
    alice.wait_for_run(a, {"awaiting_approval"})  # A has taken its snapshot
    b = start_run(alice, "Run B")
    alice.wait_for_run(b, {"awaiting_approval"})
    approve(bob, b)
    assert alice.wait_for_run(b, FINISHED)["status"] == "completed"
    approve(bob, a)  # not stale: B touched none of A's records
    run = alice.wait_for_run(a, FINISHED)
    assert run["status"] == "rolled_back", run["status_reason"]
    assert groups_named(keel, "Run B") == 1 and groups_named(keel, "Run A") == 0


def test_cancel_and_retry_from_the_api(keel, apis):
    alice, bob = apis
    cancelled = start_run(alice, "To Cancel")
    alice.wait_for_run(cancelled, {"awaiting_approval"})
    status, run = alice.post(f"/api/v1/runs/{cancelled}/cancel/", {"reason": "wrong team"})
    assert status == 200 and run["status"] == "cancelled", run
    assert approvals_of(bob, cancelled, status="superseded")
    events = alice.get(f"/api/v1/conversations/{run['conversation']}/events/?after=0")["results"]
    assert [(e["data"]["by"], e["data"]["reason"]) for e in events if e["type"] == "run.cancel_requested"] == [
        ("alice", "wrong team")]
    assert start_run(alice, "To Cancel")  # the name is free again
    assert alice.post(f"/api/v1/runs/{cancelled}/cancel/", {"reason": "again"})[0] == 409

    retried = start_run(alice, "To Retry")
    alice.wait_for_run(retried, {"awaiting_approval"})
    bob.post(f"/api/v1/approvals/{approvals_of(bob, retried)[0]['id']}/reject/", {"comment": "not yet"})
    assert alice.wait_for_run(retried, {"blocked"})["status"] == "blocked"
    status, run = bob.post(f"/api/v1/runs/{retried}/retry/", {"reason": "budget agreed"})
    assert status == 200, run
    alice.wait_for_run(retried, {"awaiting_approval"})
    approve(bob, retried)
    run = alice.wait_for_run(retried, FINISHED)
    assert run["status"] == "completed", run["status_reason"]
    assert next(n for n in run["nodes"] if n["key"] == "import")["attempt"] == 2
    assert groups_named(keel, "To Retry") == 1
    listed = alice.get("/api/v1/runs/?blueprint=payroll_group_setup&status=cancelled")["results"]
    assert [r["id"] for r in listed] == [cancelled]


def test_a_whole_tenant_restore_waits_for_a_second_person_and_deletes_only_what_they_saw(keel, apis):
    """Last in this module: it restores the whole tenant (to a snapshot it takes itself)."""
    alice, bob = apis
    ada = Api(keel.base_url, "ada")
    status, snap = ada.request("POST", "/api/v1/payroll/snapshots/", {"label": "before the restore test"},
                               headers={"Idempotency-Key": "restore-test-snapshot"})
    assert status == 201, snap
    template = next(t for t in bob.get("/api/v1/payroll/templates/")["results"]
                    if t["code"] == "cn-sh-monthly-salaried")
    status, body = bob.request("POST", "/api/v1/payroll/groups/", {"template_id": template["id"],
                                                                   "name": "Restore Victim"},
                               headers={"Idempotency-Key": "restore-victim"})
    assert status == 201, body
    status, asked = ada.request("POST", f"/api/v1/payroll/snapshots/{snap['snapshot_id']}/restore/",
                                headers={"Idempotency-Key": "restore-ask"})
    assert status == 202, asked
    restore = asked["run_id"]
    ada.wait_for_run(restore, {"awaiting_approval"})
    first = approvals_of(bob, restore)[0]
    assert first["diff"]["groups_deleted"] == ["Restore Victim"]
    assert ada.post(f"/api/v1/approvals/{first['id']}/approve/")[0] == 403  # ada asked: not hers to decide

    # Another run in the tenant completes while the restore waits: the card is stale now.
    bystander = start_run(alice, "Restore Bystander")
    alice.wait_for_run(bystander, {"awaiting_approval"})
    approve(bob, bystander)
    assert alice.wait_for_run(bystander, FINISHED)["status"] == "completed"
    status, _ = bob.post(f"/api/v1/approvals/{first['id']}/approve/")
    assert status == 409 and groups_named(keel, "Restore Victim") == 1 == groups_named(keel, "Restore Bystander")

    deadline = time.monotonic() + 60
    while not approvals_of(bob, restore) and time.monotonic() < deadline:
        time.sleep(0.2)
    second = approvals_of(bob, restore)[0]
    assert sorted(second["diff"]["groups_deleted"]) == ["Restore Bystander", "Restore Victim"]
    assert bob.post(f"/api/v1/approvals/{second['id']}/approve/")[0] == 200
    run = ada.wait_for_run(restore, FINISHED)
    assert run["status"] == "completed", run["status_reason"]
    assert groups_named(keel, "Restore Victim") == 0 == groups_named(keel, "Restore Bystander")
    assert ada.get(f"/api/v1/payroll/snapshots/{snap['snapshot_id']}/")["checksum"] == snap["checksum"]
