"""The engine on PostgreSQL + Redis + real `celery worker` processes, on one deployment for
the module (faults, each on a deployment of its own: test_engine_faults.py; the embedded
default: test_embedded_default.py). DESIGN.md §4 is the specification."""
import threading
from datetime import datetime

import psycopg
import pytest

from tests.integration.payroll_runs import FAST, groups_named, pending_approval, start_run
from tests.support import Api

def checksum(keel) -> str:
    import subprocess

    from tests.support import PYTHON, ROOT

    out = subprocess.run([PYTHON, "-c", "import django; django.setup(); from payroll.records.services import "
                          "configuration_checksum as c; from tenants.models import Tenant; "
                          "print(c(tenant_id=Tenant.objects.get(slug='demo').id))"],
                         cwd=ROOT, env=keel.env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


# Payroll tools answer after 300 ms, as a remote system of record would: long
# enough that parallel nodes visibly overlap.
SLOW_TOOLS = {**FAST, "KEEL_FAULTS": "snapshot_payroll_groups.before=sleep:0.3,match_salary_template.before=sleep:0.3,"
                                     "interpret_request.before#Always Timing Out=timeout",
              "KEEL_RETRY_BACKOFF_SECONDS": "0.2"}
pytestmark = pytest.mark.keel("production", SLOW_TOOLS, workers=2, beat=True)


@pytest.fixture(scope="module")
def apis(keel):
    return Api(keel.base_url, "alice"), Api(keel.base_url, "bob")


def test_the_happy_path_completes_through_one_approval_with_parallel_nodes(keel, apis):
    alice, bob = apis
    run = start_run(alice, group_name="Happy Path")
    run = alice.wait_for_run(run["id"], {"awaiting_approval"})
    approval = pending_approval(bob, run["id"])
    assert approval["diff"]["groups"][0]["name"] == "Happy Path"
    status, decided = bob.post(f"/api/v1/approvals/{approval['id']}/approve/", {"comment": "fine"})
    assert status == 200 and decided["status"] == "approved"
    run = alice.wait_for_run(run["id"], {"completed", "failed", "blocked", "rolled_back", "stopped"})
    assert run["status"] == "completed", run["status_reason"]
    nodes = {n["key"]: n for n in run["nodes"]}
    match, snapshot = nodes["match"], nodes["snapshot"]
    t = datetime.fromisoformat
    assert t(match["started_at"]) < t(snapshot["finished_at"]) and t(snapshot["started_at"]) < t(match["finished_at"])
    assert groups_named(keel, "Happy Path") == 1
    # every transition of the run is on the timeline, gapless
    events = alice.get(f"/api/v1/conversations/{run['conversation']}/events/?after=0")["results"]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert sum(e["type"] in ("node.status", "run.status") for e in events) == run["transition_count"]


def test_the_legacy_template_is_rolled_back_to_the_snapshot(keel, apis):
    alice, bob = apis
    before = checksum(keel)
    run = start_run(alice, template_code="cn-sh-legacy-grade-2015", group_name="Legacy Grades")
    alice.wait_for_run(run["id"], {"awaiting_approval"})
    bob.post(f"/api/v1/approvals/{pending_approval(bob, run['id'])['id']}/approve/")
    run = alice.wait_for_run(run["id"], {"completed", "failed", "rolled_back"})
    assert run["status"] == "rolled_back", run["status_reason"]
    assert groups_named(keel, "Legacy Grades") == 0
    assert checksum(keel) == before


def test_a_rejection_blocks_and_a_rejection_with_replan_plans_again(keel, apis):
    alice, bob = apis
    run = start_run(alice, group_name="Rejected")
    alice.wait_for_run(run["id"], {"awaiting_approval"})
    bob.post(f"/api/v1/approvals/{pending_approval(bob, run['id'])['id']}/reject/", {"comment": "no"})
    run = alice.wait_for_run(run["id"], {"blocked"})
    assert "rejected by bob" in run["status_reason"]

    run = start_run(alice, group_name="Replanned")
    alice.wait_for_run(run["id"], {"awaiting_approval"})
    first = pending_approval(bob, run["id"])
    bob.post(f"/api/v1/approvals/{first['id']}/reject/", {"comment": "not commission", "replan": True})
    run = alice.wait_for_run(run["id"], {"awaiting_input", "awaiting_approval"})
    assert run["plan_version"] == 2
    if run["status"] == "awaiting_input":
        status, run = alice.post(f"/api/v1/runs/{run['id']}/input/", {"answer": "Shanghai monthly salaried staff"})
        assert status == 200
        run = alice.wait_for_run(run["id"], {"awaiting_approval"})
    second = pending_approval(bob, run["id"])
    assert second["arguments"]["template_id"] != first["arguments"]["template_id"]
    assert second["arguments"]["snapshot_id"] == first["arguments"]["snapshot_id"]


def test_twenty_concurrent_approvals_give_one_decision_and_one_import(keel, apis):
    alice, bob = apis
    ada = Api(keel.base_url, "ada")
    run = start_run(alice, group_name="Twenty Clicks")
    alice.wait_for_run(run["id"], {"awaiting_approval"})
    approval = pending_approval(bob, run["id"])
    barrier, results = threading.Barrier(20), []

    def click(client):
        barrier.wait()
        results.append(client.post(f"/api/v1/approvals/{approval['id']}/approve/")[0])

    threads = [threading.Thread(target=click, args=(bob if i % 2 else ada,)) for i in range(20)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(results) == [200] + [409] * 19
    run = alice.wait_for_run(run["id"], {"completed", "failed"})
    assert run["status"] == "completed"
    assert groups_named(keel, "Twenty Clicks") == 1


def test_a_timeout_is_retried_by_the_sweeper_with_backoff_each_attempt_counted_until_the_cap(keel, apis):
    alice, _ = apis
    run = start_run(alice, group_name="Always Timing Out")
    run = alice.wait_for_run(run["id"], {"failed", "completed"}, timeout=60)
    assert run["status"] == "failed"
    assert "gave up after 4 attempts (TimeoutError: injected timeout at interpret_request.before)" in \
        run["status_reason"]
    interpret = next(n for n in run["nodes"] if n["key"] == "interpret")
    # the first claim and three takeovers, one after each backoff; each transient failure counted
    assert (interpret["attempts"], interpret["retries"]) == (4, 3)


def test_a_developer_replays_a_completed_run_in_a_sandbox_beside_the_workers(keel, apis):
    alice, bob = apis
    run = start_run(alice, group_name="Replayed Here")
    alice.wait_for_run(run["id"], {"awaiting_approval"})
    bob.post(f"/api/v1/approvals/{pending_approval(bob, run['id'])['id']}/approve/")
    run = alice.wait_for_run(run["id"], {"completed", "failed", "blocked", "rolled_back"})
    assert run["status"] == "completed", run["status_reason"]
    status, refused = alice.post(f"/api/v1/runs/{run['id']}/replay/")
    assert status == 403, refused
    status, result = Api(keel.base_url, "dora").post(f"/api/v1/runs/{run['id']}/replay/")
    assert status == 200, result
    assert result["identical"] is True, result["differences"]
    with psycopg.connect(keel.env["DATABASE_URL"]) as conn:
        by_tenant = dict(conn.execute(
            "SELECT t.slug, count(*) FROM payroll_payrollgroup g JOIN tenants_tenant t ON t.id = g.tenant_id "
            "WHERE g.name = %s GROUP BY t.slug", ("Replayed Here",)).fetchall())
        sandboxes = conn.execute("SELECT count(*) FROM tenants_tenant WHERE slug = %s",
                                 (result["sandbox_tenant"],)).fetchone()[0]
    assert by_tenant == {"demo": 1}  # nothing more in demo, and the sandbox's own went with it
    assert sandboxes == 0  # deleted once compared; the comparison is kept
    assert result["replay_id"] and result["sandbox_kept"] is False


def test_a_tampered_template_id_is_a_provenance_block(keel, apis):
    alice, bob = apis
    run = start_run(alice, group_name="Genuine")
    run = alice.wait_for_run(run["id"], {"awaiting_approval"})
    real = next(s["value"] for s in run["state"] if s["key"] == "template_id")
    tampered = real[:-1] + str((int(real[-1]) + 1) % 10)  # one digit off: still a valid-looking 64-bit id
    bad = start_run(alice, group_name="Tampered", template_id=tampered)
    bad = alice.wait_for_run(bad["id"], {"blocked", "failed"})
    assert "provenance block on template_id" in bad["status_reason"]
    assert not [a for a in bob.get("/api/v1/approvals/")["results"] if a["run"] == bad["id"]]
    assert groups_named(keel, "Tampered") == 0
