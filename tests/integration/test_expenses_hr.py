"""The expense claim and candidate matching on PostgreSQL + Redis + real `celery worker`
processes: the claim through the policy graph (an approver only when over the limit), and the hiring seed's event-triggered
candidate matching (whole-skill retry, no duplicate match, duplicate events change nothing)."""
import psycopg
import pytest

from tests.support import Api, keel_start, keel_stop, process_group_kill, wait_until

FAST = {"KEEL_LEASE_SECONDS": "3", "KEEL_SWEEP_SECONDS": "1", "KEEL_OUTBOX_SECONDS": "1"}
OVER = {"category": "lodging", "city": "Beijing", "start_date": "2026-11-16", "nights": 2, "amount": "1800"}
DONE = {"completed", "failed", "blocked", "rolled_back", "stopped"}


pytestmark = [pytest.mark.long(80),  # seconds; started first (tests/fixtures.py)
              pytest.mark.keel("production", FAST, workers=1, beat=True)]


@pytest.fixture(scope="module")
def apis(keel):
    return Api(keel.base_url, "alice"), Api(keel.base_url, "bob"), Api(keel.base_url, "ada")


def sql(keel, query: str, *args) -> int:
    with psycopg.connect(keel.env["DATABASE_URL"]) as conn:
        return conn.execute(query, args).fetchone()[0]


def start_claim(alice: Api, **params) -> dict:
    status, run = alice.post("/api/v1/runs/", {"blueprint": "expense_claim", "params": {**OVER, **params}})
    assert status == 201, run
    return run


def claim_of(alice: Api, run: dict) -> dict:
    application_id = next(s["value"] for s in run["state"] if s["key"] == "application_id")
    return alice.get(f"/api/v1/expenses/claims/{application_id}/")


def test_an_over_limit_claim_waits_for_an_approver_whose_card_cites_750(apis):
    alice, bob, _ = apis
    run = alice.wait_for_run(start_claim(alice)["id"], {"awaiting_approval"} | DONE)
    assert run["status"] == "awaiting_approval", run["status_reason"]
    assert claim_of(alice, run)["status"] == "draft"
    [card] = [a for a in bob.get("/api/v1/approvals/?status=pending")["results"] if a["run"] == run["id"]]
    assert "over the limit of 750 yuan per room per night (travel-v2, effective 2026-01-01)" in card["summary"]
    status, decided = bob.post(f"/api/v1/approvals/{card['id']}/approve/", {"comment": "conference week"})
    assert status == 200 and decided["status"] == "approved"
    run = alice.wait_for_run(run["id"], DONE)
    assert run["status"] == "completed", run["status_reason"]
    claim = claim_of(alice, run)
    assert claim["status"] == "submitted" and claim["policy_verdict"] == "over_limit"
    assert claim["policy_limit"] == "750.00" and claim["per_night"] == "900.00"


def test_a_claim_within_the_limit_completes_without_an_approval(apis):
    alice, bob, _ = apis
    run = alice.wait_for_run(start_claim(alice, amount="1400")["id"], {"awaiting_approval"} | DONE)
    assert run["status"] == "completed", run["status_reason"]
    assert not [a for a in bob.get("/api/v1/approvals/")["results"] if a["run"] == run["id"]]
    assert claim_of(alice, run)["status"] == "submitted"


def test_a_tampered_application_id_is_blocked(keel, apis):
    alice, bob, _ = apis
    genuine = alice.wait_for_run(start_claim(alice, amount="1000")["id"], DONE)
    real = next(s["value"] for s in genuine["state"] if s["key"] == "application_id")
    tampered = real[:-1] + str((int(real[-1]) + 1) % 10)
    submitted = sql(keel, "SELECT count(*) FROM expenses_expenseclaim WHERE status = 'submitted'")
    bad = alice.wait_for_run(start_claim(alice, application_id=tampered)["id"], DONE | {"awaiting_approval"})
    assert bad["status"] in ("blocked", "failed")
    assert "provenance block on application_id" in bad["status_reason"]
    assert not [a for a in bob.get("/api/v1/approvals/")["results"] if a["run"] == bad["id"]]
    assert sql(keel, "SELECT count(*) FROM expenses_expenseclaim WHERE status = 'submitted'") == submitted


def _tan(api: Api, title: str, skills: list[str], location: str = "Beijing", seniority: int = 2) -> dict:
    status, tan = api.post("/api/v1/hr/tans/", {"title": title, "location": location, "skills": skills,
                                                "seniority": seniority})
    assert status == 201, tan
    return tan


def test_a_duplicate_tan_approval_event_changes_nothing(keel, apis):
    _, bob, ada = apis
    tan = _tan(ada, "Analyst (duplicates)", ["sql", "python", "tableau"])
    status, approved = ada.post(f"/api/v1/hr/tans/{tan['id']}/approve/")
    assert status == 200 and approved["status"] == "approved"
    wait_until(lambda: ada.get(f"/api/v1/hr/tans/{tan['id']}/")["matching_run"], "the supervisor to start a run")
    run_id = ada.get(f"/api/v1/hr/tans/{tan['id']}/")["matching_run"]
    run = ada.wait_for_run(run_id, DONE)
    assert run["status"] == "completed", run["status_reason"]
    matches = ada.get(f"/api/v1/hr/tans/{tan['id']}/matches/")["results"]
    assert [m["candidate"] for m in matches] == ["Maria Garcia", "Zhou Xin", "Chen Jing"]
    # approving again is refused; a redelivered event and a second event for the TAN start nothing
    status, body = bob.post(f"/api/v1/hr/tans/{tan['id']}/approve/")
    assert status == 409 and "approved by ada" in body["detail"]
    keel.manage("shell", "-c", (
        "from django.db import transaction; from hr.models import Tan, OutboxEvent; "
        "from hr.services import Actor, tan_event_publish; from config.celery import app; "
        f"tan = Tan.objects.get(id={tan['id']}); ev = OutboxEvent.objects.get(tan=tan); "
        "app.send_task('hr.tasks.tan_event_consume', args=[ev.id]); "
        "exec('with transaction.atomic(): tan_event_publish(tan=tan, actor=Actor(tenant_id=tan.tenant_id, "
        "user_id=tan.approved_by_id, role=\"admin\"))')"))
    wait_until(lambda: sql(keel, "SELECT count(*) FROM hr_outboxevent WHERE tan_id = %s AND consumed_at IS NULL",
                           int(tan["id"])) == 0 and sql(keel, "SELECT count(*) FROM hr_outboxevent WHERE tan_id = %s",
                                                        int(tan["id"])) == 2, "the duplicate event to be consumed")
    assert sql(keel, "SELECT count(*) FROM workflows_run WHERE blueprint = 'candidate_matching' "
                     "AND params->>'tan_id' = %s", tan["id"]) == 1
    assert sql(keel, "SELECT outcome FROM hr_outboxevent WHERE tan_id = %s ORDER BY created_at DESC LIMIT 1",
               int(tan["id"])).startswith("duplicate: run")
    assert len(ada.get(f"/api/v1/hr/tans/{tan['id']}/matches/")["results"]) == 3


def test_more_matches_than_the_threshold_ask_an_approver_first(keel, apis):
    _, bob, ada = apis
    tan = _tan(ada, "Backend (approval)", ["python", "django", "postgresql", "celery"], location="Shanghai",
               seniority=3)
    ada.post(f"/api/v1/hr/tans/{tan['id']}/approve/")
    wait_until(lambda: ada.get(f"/api/v1/hr/tans/{tan['id']}/")["matching_run"], "the supervisor to start a run")
    run_id = ada.get(f"/api/v1/hr/tans/{tan['id']}/")["matching_run"]
    ada.wait_for_run(run_id, {"awaiting_approval"})
    assert ada.get(f"/api/v1/hr/tans/{tan['id']}/matches/")["results"] == []
    [card] = [a for a in bob.get("/api/v1/approvals/?status=pending")["results"] if a["run"] == run_id]
    assert "Record 5 matches" in card["summary"]
    assert bob.post(f"/api/v1/approvals/{card['id']}/approve/")[0] == 200
    assert ada.wait_for_run(run_id, DONE)["status"] == "completed"
    assert len(ada.get(f"/api/v1/hr/tans/{tan['id']}/matches/")["results"]) == 5


def test_matching_runs_are_listed_by_blueprint(apis):
    _, _, ada = apis
    runs = ada.get("/api/v1/runs/?blueprint=candidate_matching")["results"]
    assert runs and all(r["blueprint"] == "candidate_matching" for r in runs)


def test_a_worker_killed_inside_the_skill_retries_it_whole_with_no_duplicate_match():
    keel = keel_start("production", FAST)
    try:
        healthy_env = keel.env
        keel.env = {**keel.env, "KEEL_FAULTS": "persist_matches.partial=sleep:60"}
        doomed = keel.worker_start(concurrency=1)
        keel.env = healthy_env
        keel.beat_start()
        ada = Api(keel.base_url, "ada")
        tan = next(t for t in ada.get("/api/v1/hr/tans/")["results"] if t["title"] == "Data Analyst")
        ada.post(f"/api/v1/hr/tans/{tan['id']}/approve/")
        wait_until(lambda: sql(keel, "SELECT count(*) FROM hr_match WHERE tan_id = %s", int(tan["id"])) == 1,
                   "the skill to record its first match", timeout=60)
        run_id = ada.get(f"/api/v1/hr/tans/{tan['id']}/")["matching_run"]
        assert ada.get(f"/api/v1/runs/{run_id}/")["status"] == "running"
        process_group_kill(doomed)  # SIGKILL inside the skill's writes
        keel.worker_start(concurrency=1)
        run = ada.wait_for_run(run_id, DONE, timeout=90)
        assert run["status"] == "completed", run["status_reason"]
        assert {n["key"]: n["attempts"] for n in run["nodes"]}["persist"] == 2
        assert sql(keel, "SELECT count(*) FROM hr_match WHERE tan_id = %s", int(tan["id"])) == 3
        assert sql(keel, "SELECT count(DISTINCT candidate_id) FROM hr_match WHERE tan_id = %s", int(tan["id"])) == 3
    finally:
        keel_stop(keel)


def _trace(keel, run_id: str) -> list[tuple[str, str, str]]:
    """(node, tool, status) of every tool call of a run, in the order the workers made them."""
    with psycopg.connect(keel.env["DATABASE_URL"]) as conn:
        return [tuple(r) for r in conn.execute(
            "SELECT n.key, c.tool, c.status FROM workflows_toolcall c JOIN workflows_node n ON n.id = c.node_id "
            "WHERE c.run_id = %s ORDER BY c.started_at, c.id", (int(run_id),)).fetchall()]


def test_a_claim_run_recorded_on_workers_replays_there_with_the_scripted_backend(tmp_path):
    """Incident reproduction across processes: record an over-limit claim on a worker, export
    its script, and run it again on a worker whose model is the script: the same steps, the
    same tool calls, the same approval, the same outcome — the policy decision comes from
    the script (a frame of the check step names it)."""
    import json

    keel = keel_start("production", FAST)
    try:
        recorder = keel.worker_start(concurrency=1)
        keel.beat_start()
        alice, bob = Api(keel.base_url, "alice"), Api(keel.base_url, "bob")

        def claim_through_approval(params: dict) -> dict:
            status, run = alice.post("/api/v1/runs/", {"blueprint": "expense_claim", "params": params})
            assert status == 201, run
            run = alice.wait_for_run(run["id"], {"awaiting_approval"} | DONE)
            assert run["status"] == "awaiting_approval", run["status_reason"]
            [card] = [a for a in bob.get("/api/v1/approvals/?status=pending")["results"] if a["run"] == run["id"]]
            assert bob.post(f"/api/v1/approvals/{card['id']}/approve/")[0] == 200
            run = alice.wait_for_run(run["id"], DONE)
            assert run["status"] == "completed", run["status_reason"]
            return run

        recorded = claim_through_approval(OVER)
        path = tmp_path / "claim.json"
        keel.manage("export_script", recorded["id"], "-o", str(path))
        script = json.loads(path.read_text())
        assert [(c["purpose"], c["node"]) for c in script["calls"]] == [("decide", "check")]
        assert script["approvals"][0]["node"] == "submit" and script["started_by"] == "alice"

        process_group_kill(recorder)
        keel.env = {**keel.env, "KEEL_LLM": "scripted", "KEEL_LLM_SCRIPT": str(path)}
        keel.worker_start(concurrency=1)
        replayed = claim_through_approval(script["params"])
        assert _trace(keel, replayed["id"]) == _trace(keel, recorded["id"])
        assert [(n["key"], n["status"]) for n in replayed["nodes"]] == \
               [(n["key"], n["status"]) for n in recorded["nodes"]]
        assert claim_of(alice, replayed)["policy_verdict"] == claim_of(alice, recorded)["policy_verdict"] == \
               "over_limit"
        assert sql(keel, "SELECT count(*) FROM timeline_frame f JOIN workflows_node n ON n.activity_id = f.activity_id "
                         "WHERE n.run_id = %s AND n.key = 'check' AND f.kind = 'model_call' "
                         "AND f.gen_ai_request_model = 'scripted:claim.json'", int(replayed["id"])) == 1
    finally:
        keel_stop(keel)
