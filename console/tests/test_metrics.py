"""Each validation metric against a history whose figure is known.

Histories are either driven through the real engine (tests.helpers.drive,
as the engine tests do) or written row by row with the ORM where a figure needs
a history the engine would never produce (a skipped dependency, a duplicate)."""
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from console.metrics import Period, metrics_for, period_parse
from payroll.models import IdempotencyRecord, PayrollGroup
from timeline.models import Conversation, Event
from workflows.models import Node, Plan, ProvenanceBlock, Run, ToolCall, Transition
from workflows.services import run_start
from tests.helpers import drive, membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]
T0 = timezone.now() - timedelta(hours=2)


def figures(username: str = "alice", period: Period | None = None):
    return metrics_for(tenant_id=membership(username).tenant_id, period=period or period_parse({}))


# --- histories written row by row -----------------------------------------------------------


def run_make(status: str = "completed", username: str = "alice", **fields) -> Run:
    m = membership(username)
    conversation = Conversation.objects.create(tenant=m.tenant, started_by=m.user, title="history")
    run = Run.objects.create(tenant=m.tenant, conversation=conversation, created_by=m.user,
                             blueprint="payroll_group_setup", status=status, **fields)
    if status != "running":
        Transition.objects.create(run=run, from_status="running", to_status=status)
    return run


def node_make(run: Run, key: str, depends_on=(), tool: str = "noop", **fields) -> Node:
    return Node.objects.create(run=run, key=key, goal=key, tool=tool, plan_version=fields.pop("plan_version", 1),
                               depends_on=list(depends_on), **fields)


def step(node: Node, to: str, *, at_seconds: float | None = None) -> Transition:
    """One transition of `node`, as the engine writes it: the row, the event, the status."""
    t = Transition.objects.create(run_id=node.run_id, node=node, from_status=node.status, to_status=to)
    if at_seconds is not None:
        Transition.objects.filter(id=t.id).update(at=T0 + timedelta(seconds=at_seconds))
    conversation = Conversation.objects.get(runs__id=node.run_id)
    conversation.last_seq += 1
    conversation.save(update_fields=["last_seq"])
    Event.objects.create(conversation=conversation, seq=conversation.last_seq, type="node.status", run_id=node.run_id,
                         data={"node": node.key, "plan_version": node.plan_version, "from": node.status, "to": to})
    Node.objects.filter(id=node.id).update(status=to)
    node.status = to
    return t


def walk(node: Node, *statuses: str) -> None:
    for to in statuses:
        step(node, to)


DONE = ("ready", "in_progress", "completed")


def call_make(node: Node, *, status: str = "succeeded", key: str | None = None, receipt: bool = True,
              tool: str | None = None, approval_id=None) -> ToolCall:
    return ToolCall.objects.create(tenant_id=node.run.tenant_id, run_id=node.run_id, node=node,
                                   tool=tool or node.tool, status=status, approval_id=approval_id,
                                   idempotency_key=key or f"run{node.run_id}:{node.key}:v1:a{ToolCall.objects.count()}",
                                   result={"receipt_ref": "payroll/groups/1"} if receipt else {"ok": True})


def approval_make(run: Run, node: Node, status: str) -> ApprovalRequest:
    return ApprovalRequest.objects.create(tenant_id=run.tenant_id, run=run, node=node, tool=node.tool, arguments={},
                                          arguments_hash="x", status=status, deadline=timezone.now(),
                                          requested_by=run.created_by)


# --- histories driven through the engine ----------------------------------------------------------


def start(username: str = "alice", **params) -> Run:
    params = {"request": "set up a monthly payroll group for our Shanghai sales team with commission",
              "group_name": "Shanghai Sales", **params}
    return run_start(membership=membership(username), blueprint="payroll_group_setup", params=params)


def decide(run: Run, verdict: str, **kwargs) -> Run:
    approval = ApprovalRequest.objects.get(run=run, status="pending")
    approval_decide(membership=membership("bob"), approval_id=approval.id, verdict=verdict, **kwargs)
    return drive(run)


# --- the figures -----------------------------------------------------------------------------------


def test_it_counts_completed_runs_of_the_finished_ones_as_success():
    for status in ("completed", "completed", "failed", "blocked", "stopped", "running", "awaiting_input"):
        run_make(status)
    success = figures().metric("success_rate")
    assert (success.numerator, success.denominator) == (2, 5)
    assert success.value == pytest.approx(0.4)


def test_it_counts_runs_that_needed_a_person_as_takeovers():
    for status in ("completed", "failed", "blocked", "stopped", "running", "awaiting_input"):
        run_make(status)
    rejected = run_make("completed")
    approval_make(rejected, node_make(rejected, "import", tool="import_template"), "rejected")
    takeover = figures().metric("takeover_rate")
    # blocked, stopped, and the completed run whose approval was rejected; the run merely
    # waiting for the user's answer is in neither count
    assert (takeover.numerator, takeover.denominator) == (3, 6)
    assert takeover.details == {"awaiting_input": 1}


def test_a_run_waiting_for_an_answer_is_not_a_takeover():
    run_make("awaiting_input")
    run_make("completed")
    takeover = figures().metric("takeover_rate")
    assert (takeover.numerator, takeover.denominator, takeover.value) == (0, 1, 0)


def test_it_counts_provenance_blocks_of_the_tenant_only():
    run = drive(start())
    decide(run, "rejected")
    real = run.coordinates.get(key="template_id").value
    tampered = real[:-1] + str((int(real[-1]) + 1) % 10)
    drive(start(template_id=tampered, group_name="Tampered"))
    theirs = run_make("blocked", username="oscar")
    ProvenanceBlock.objects.create(tenant=theirs.tenant, run=theirs, node=node_make(theirs, "import"),
                                   key="template_id", supplied="1", expected="2", reason="differs")
    ProvenanceBlock.objects.create(tenant=theirs.tenant, run=theirs, node=node_make(theirs, "verify"),
                                   key="template_id", supplied="1", expected="2", reason="differs")
    assert Run.objects.count() == 3
    assert figures("alice").metric("provenance_blocks").value == 1
    assert figures("oscar").metric("provenance_blocks").value == 2


def test_it_counts_a_resume_when_the_approved_step_completed():
    approved = decide(drive(start()), "approved")
    assert approved.status == "completed"
    decide(drive(start(group_name="Rejected")), "rejected")
    drive(start(group_name="Still waiting"))
    resumes = figures().metric("approval_resumes")
    assert resumes.value == 1 and (resumes.numerator, resumes.denominator) == (1, 1)


def test_it_finds_a_step_that_started_before_its_dependency_completed():
    run = run_make("completed")
    a, b, c = node_make(run, "a"), node_make(run, "b", ["a"]), node_make(run, "c", ["a"])
    walk(a, "ready", "in_progress")
    walk(b, "ready", "in_progress")  # b starts while a is still in progress
    step(a, "completed")
    walk(b, "completed")
    walk(c, *DONE)
    skipped = figures().metric("skipped_executions")
    assert skipped.value == 1 and skipped.details["nodes"] == ["b"] and skipped.denominator == 3


def test_it_finds_no_skipped_step_in_an_engine_run():
    decide(drive(start()), "approved")
    report = figures()
    assert report.metric("skipped_executions").value == 0
    assert report.metric("skipped_executions").denominator == 6  # interpret, match, snapshot, import, verify, trial


def test_it_measures_dependency_coverage_per_edge():
    run = run_make("completed")
    a, b, c = node_make(run, "a"), node_make(run, "b", ["a"]), node_make(run, "c", ["a", "b"])
    walk(a, "ready", "in_progress")
    walk(b, "ready", "in_progress")  # b → a not met
    step(a, "completed")
    step(b, "completed")
    walk(c, *DONE)  # c → a and c → b met
    coverage = figures().metric("dependency_coverage")
    assert (coverage.numerator, coverage.denominator) == (2, 3)


def test_an_undo_after_a_failed_verification_covers_every_dependency(monkeypatch):
    # The undo depends on import (completed), verify (failed), assign and trial (never ran):
    # the engine starts it once one failed, and nothing it undoes is running then.
    monkeypatch.setenv("KEEL_FAULTS", "verify_import.item_unseen#cn-sales-commission=on")
    run = decide(drive(start()), "approved")
    undo = Node.objects.get(run=run, key="restore", plan_version=1)
    assert undo.status == "completed" and set(undo.depends_on) >= {"import", "verify", "trial"}
    coverage = figures().metric("dependency_coverage")
    assert coverage.value == 1.0 and coverage.denominator > len(undo.depends_on)
    assert figures().metric("skipped_executions").value == 0


def test_an_undo_that_starts_while_a_step_it_undoes_runs_is_not_covered():
    run = run_make("rolled_back")
    a, b = node_make(run, "import"), node_make(run, "verify", ["import"])
    late = node_make(run, "notify", ["import"])
    undo = node_make(run, "restore", ["import", "verify", "notify"], run_when="failed")
    walk(a, *DONE)
    walk(b, "ready", "in_progress", "failed")
    walk(late, "ready", "in_progress")  # still running when the undo starts: not covered
    walk(undo, "ready", "in_progress")
    step(late, "completed")
    walk(undo, "completed")
    coverage = figures().metric("dependency_coverage")
    # import → verify and notify → import met; the undo's import and verify met, its notify not
    assert (coverage.numerator, coverage.denominator) == (4, 5)


def test_it_finds_a_step_missing_from_a_completed_run():
    run = run_make("completed")
    a = node_make(run, "interpret")
    walk(a, *DONE)
    node_make(run, "verify", ["interpret"])  # never ran: missed
    node_make(run, "restore", ["interpret"], run_when="failed")  # a compensation that was not needed
    node_make(run, "match", ["interpret"], retired_in=2)  # replaced by a later plan
    unfinished = run_make("running")
    node_make(unfinished, "verify")  # still to run: not missed
    missed = figures().metric("missed_executions")
    assert missed.value == 1 and missed.details["nodes"] == ["verify"]


def test_it_counts_duplicate_executions_per_step_and_per_idempotency_key():
    run = run_make("completed")
    a = node_make(run, "a")
    call_make(a, key="k1")
    call_make(a, key="k2")  # a second succeeded call for the same step
    b = node_make(run, "b", tool="interpret_request")
    call_make(b, status="failed", key="k3")
    call_make(b, key="k4")  # a retry after a failure is no duplicate
    i1 = node_make(run, "import", tool="import_template")
    i2 = node_make(run, "import", tool="import_template", plan_version=2)
    call_make(i1, key="same-key")
    call_make(i2, key="same-key")  # two side-effecting calls under one key
    duplicates = figures().metric("duplicate_executions")
    assert duplicates.value == 2
    assert duplicates.details == {"same_step": 1, "same_idempotency_key": 1}


def test_it_counts_no_duplicate_in_an_engine_run():
    decide(drive(start()), "approved")
    assert figures().metric("duplicate_executions").value == 0


def test_it_measures_receipt_coverage_of_completed_steps():
    run = run_make("completed")
    with_receipt, without_receipt, without_call = node_make(run, "a"), node_make(run, "b"), node_make(run, "c")
    for node in (with_receipt, without_receipt, without_call):
        walk(node, *DONE)
    Node.objects.filter(id=with_receipt.id).update(result_ref=str(call_make(with_receipt).id))
    Node.objects.filter(id=without_receipt.id).update(result_ref=str(call_make(without_receipt, receipt=False).id))
    coverage = figures().metric("receipt_coverage")
    assert (coverage.numerator, coverage.denominator) == (1, 3)


def test_a_receipt_that_only_names_the_step_s_own_call_does_not_count():
    run = run_make("completed")
    issued, self_ref = node_make(run, "a"), node_make(run, "b")
    for node in (issued, self_ref):
        walk(node, *DONE)
    Node.objects.filter(id=issued.id).update(result_ref=str(call_make(issued).id))
    own = call_make(self_ref, receipt=False)
    ToolCall.objects.filter(id=own.id).update(result={"receipt_ref": f"call/{own.id}"})
    Node.objects.filter(id=self_ref.id).update(result_ref=str(own.id))
    coverage = figures().metric("receipt_coverage")
    assert (coverage.numerator, coverage.denominator) == (1, 2)
    assert coverage.details == {"self_references": 1}


def test_every_step_of_an_engine_run_but_the_interpretation_is_accepted_on_a_system_of_record_receipt():
    decide(drive(start()), "approved")
    coverage = figures().metric("receipt_coverage")
    # match (the catalog), snapshot, import, verify, trial (payroll); interpret's is its own call
    assert (coverage.numerator, coverage.denominator) == (5, 6)
    assert coverage.details == {"self_references": 1}


def _reclaim(run: Run, previous_owner: str, cause: str | None) -> None:
    conversation = Conversation.objects.get(runs__id=run.id)
    conversation.last_seq += 1
    conversation.save(update_fields=["last_seq"])
    data = {"node": "import", "previous_owner": previous_owner, "owner": "w2"}
    if cause:
        data["cause"] = cause
    Event.objects.create(conversation=conversation, seq=conversation.last_seq, type="node.reclaimed",
                         run_id=run.id, data=data)


def test_it_counts_runs_recovered_after_a_worker_crash_and_not_retries():
    recovered, lost, retried = run_make("completed"), run_make("failed"), run_make("completed")
    _reclaim(recovered, "host:1:1", "crash")
    _reclaim(recovered, "host:2:1", None)  # an event from before the cause was recorded: a crash
    _reclaim(lost, "host:3:1", "crash")
    _reclaim(retried, "retry:host:4:1", "retry")
    _reclaim(retried, "deferred:host:4:1", None)
    crash = figures().metric("crash_recoveries")
    assert (crash.numerator, crash.denominator, crash.value) == (1, 2, 0.5)
    assert crash.details == {"takeovers": 3}


def test_no_crash_no_figure():
    decide(drive(start()), "approved")
    crash = figures().metric("crash_recoveries")
    assert crash.value is None and crash.denominator == 0


def test_it_measures_the_scope_of_a_replan_after_a_rejection():
    decide(drive(start()), "rejected", replan=True)  # replaces match, import, verify, trial, restore
    scope = figures().metric("replan_scope")
    assert scope.value == 5 and scope.details == {"replans": 1, "replaced": 5, "max": 5}


def test_it_measures_recovery_time_from_the_failure_to_the_next_plans_first_start():
    run = run_make("completed")
    Run.objects.filter(id=run.id).update(finished_at=T0 + timedelta(seconds=300))
    old_match, old_import = node_make(run, "match"), node_make(run, "import", ["match"], retired_in=2)
    old_verify = node_make(run, "verify", ["import"], retired_in=3)
    Node.objects.filter(id=old_match.id).update(retired_in=2)
    step(old_import, "ready", at_seconds=0)
    step(old_import, "awaiting_approval", at_seconds=1)
    step(old_import, "blocked", at_seconds=10)  # rejected
    Plan.objects.filter(id=Plan.objects.create(run=run, version=2).id).update(created_at=T0 + timedelta(seconds=11))
    new_match = node_make(run, "match", plan_version=2)
    node_make(run, "import", ["match"], plan_version=2)
    step(new_match, "ready", at_seconds=12)
    step(new_match, "in_progress", at_seconds=75)  # recovery 1: 65 s
    step(new_match, "failed", at_seconds=100)
    Plan.objects.filter(id=Plan.objects.create(run=run, version=3).id).update(created_at=T0 + timedelta(seconds=101))
    node_make(run, "verify", plan_version=3)  # never started: recovery 2 ends with the run, 200 s
    assert old_verify.retired_in == 3
    report = figures()
    assert report.metric("replan_scope").value == pytest.approx(1.5)  # 2 nodes, then 1
    recovery = report.metric("recovery_time")
    assert recovery.value == pytest.approx((65 + 200) / 2) and recovery.details == {"recoveries": 2, "max": 200}


def test_engine_runs_are_consistent_with_their_checkpoint_and_a_stray_update_is_not():
    decide(drive(start()), "approved")
    tampered = drive(start(group_name="Second"))
    consistency = figures().metric("checkpoint_consistency")
    assert (consistency.numerator, consistency.denominator) == (2, 2)
    # A status written past the transition function: the log and the events no longer agree.
    Node.objects.filter(run=tampered, key="snapshot").update(status="pending")
    consistency = figures().metric("checkpoint_consistency")
    assert (consistency.numerator, consistency.denominator) == (1, 2)
    assert consistency.details["inconsistent_runs"] == [str(tampered.id)]


def test_it_measures_how_many_parallel_steps_overlapped():
    overlapping = run_make("completed")
    interpret = node_make(overlapping, "interpret")
    match, snapshot = node_make(overlapping, "match", ["interpret"]), node_make(overlapping, "snapshot", ["interpret"])
    for seconds, (node, to) in enumerate([(interpret, "ready"), (interpret, "in_progress"),
                                          (interpret, "completed"), (match, "ready"), (snapshot, "ready"),
                                          (match, "in_progress"), (snapshot, "in_progress"),
                                          (match, "completed"), (snapshot, "completed")]):
        step(node, to, at_seconds=seconds)
    sequential = run_make("completed")
    match2, snapshot2 = node_make(sequential, "match"), node_make(sequential, "snapshot")
    for seconds, (node, to) in enumerate([(match2, "ready"), (match2, "in_progress"), (match2, "completed"),
                                          (snapshot2, "ready"), (snapshot2, "in_progress"),
                                          (snapshot2, "completed")]):
        step(node, to, at_seconds=seconds)
    chain = run_make("completed")  # nothing in it could run in parallel: not counted
    first, second = node_make(chain, "n0"), node_make(chain, "n1", ["n0"])
    walk(first, *DONE)
    walk(second, *DONE)
    concurrency = figures().metric("parallel_concurrency")
    assert concurrency.value == pytest.approx(1.5) and concurrency.details == {"max": 2}
    assert (concurrency.numerator, concurrency.denominator) == (1, 2)


def test_it_counts_a_second_group_created_under_one_approved_import():
    run = decide(drive(start()), "approved")
    clean = figures().metric("duplicate_side_effects")
    assert clean.value == 0 and (clean.numerator, clean.denominator) == (0, 1)
    approval = ApprovalRequest.objects.get(run=run, status="approved")
    node = run.nodes.get(key="import")
    again = call_make(node, key="replayed-under-a-new-key", approval_id=approval.id)
    record = IdempotencyRecord.objects.create(tenant_id=run.tenant_id, operation="template_import", key=again.idempotency_key,
                                              request_hash="h", state="done", lease_token="t")
    PayrollGroup.objects.create(tenant_id=run.tenant_id, name="Shanghai Sales (again)", idempotency_record=record)
    duplicated = figures().metric("duplicate_side_effects")
    assert duplicated.value == 1 and (duplicated.numerator, duplicated.denominator) == (1, 1)


def test_the_period_selects_runs_by_their_start():
    run_make("completed")
    old = run_make("failed")
    Run.objects.filter(id=old.id).update(created_at=timezone.now() - timedelta(days=40))
    assert figures().runs == 1
    assert figures(period=period_parse({"days": "60"})).runs == 2
    day = (timezone.now() - timedelta(days=40)).date().isoformat()
    only_old = figures(period=period_parse({"since": day, "until": day}))
    assert only_old.runs == 1 and only_old.metric("success_rate").value == 0


# --- the API and the page ------------------------------------------------------------------------------


def api(username: str) -> APIClient:
    client = APIClient()
    client.force_authenticate(membership(username).user)
    return client


def test_the_api_answers_each_metric_with_its_definition():
    decide(drive(start()), "approved")
    body = api("alice").get("/api/v1/metrics/").json()
    assert body["runs"] == 1
    metrics = {m["key"]: m for m in body["metrics"]}
    assert set(metrics) == {"success_rate", "takeover_rate", "provenance_blocks", "approval_resumes",
                            "skipped_executions", "missed_executions", "duplicate_executions", "receipt_coverage",
                            "dependency_coverage", "replan_scope", "recovery_time", "checkpoint_consistency",
                            "parallel_concurrency", "duplicate_side_effects", "crash_recoveries"}
    assert metrics["success_rate"] | {"definition": "…"} == {
        "key": "success_rate", "label": "Strict-workflow success rate", "value": 1.0, "unit": "ratio",
        "definition": "…", "numerator": 1, "denominator": 1, "details": {}}
    assert all(m["definition"] for m in body["metrics"])
    assert len(body["daily"]) in (30, 31) and sum(d["runs"] for d in body["daily"]) == 1


def test_oscar_sees_only_his_tenants_figures():
    decide(drive(start()), "approved")
    drive(start(username="oscar", group_name="Other"))
    alice = {m["key"]: m for m in api("alice").get("/api/v1/metrics/").json()["metrics"]}
    oscar_body = api("oscar").get("/api/v1/metrics/").json()
    oscar = {m["key"]: m for m in oscar_body["metrics"]}
    assert oscar_body["runs"] == 1
    assert (alice["success_rate"]["numerator"], alice["success_rate"]["denominator"]) == (1, 1)
    assert (oscar["success_rate"]["numerator"], oscar["success_rate"]["denominator"]) == (0, 0)
    assert oscar["approval_resumes"]["value"] == 0


def test_a_bad_period_is_refused_with_a_reason():
    answer = api("alice").get("/api/v1/metrics/?days=0")
    assert answer.status_code == 400 and "between 1 and" in answer.json()["detail"]
    answer = api("alice").get("/api/v1/metrics/?since=yesterday")
    assert answer.status_code == 400 and "must be a date" in answer.json()["detail"]


@pytest.mark.parametrize("query", [
    "until=1027-02-19T02%3A43%3A14-16%3A12",  # an offset PostgreSQL refuses (found by the schema fuzz)
    "since=2026-11-01T00%3A00%3A00%2B23%3A59&until=2026-11-30T00%3A00%3A00-23%3A59",
    "until=9999-12-31", "until=0001-01-01T00%3A00%3A00%2B05%3A00", "since=0001-01-01&until=0001-01-02",
])
def test_a_period_at_the_edges_of_the_calendar_is_answered_not_a_crash(query):
    answer = api("alice").get(f"/api/v1/metrics/?{query}")
    assert answer.status_code in (200, 400), answer.content
    if answer.status_code == 400:
        assert answer.json()["code"] == "invalid_period"


def test_the_page_shows_every_role_the_figures_and_plots(client):
    decide(drive(start()), "approved")
    for username in ("alice", "bob", "dora"):
        client.force_login(membership(username).user)
        html = client.get("/metrics/").content.decode()
        assert 'data-testid="value-success_rate">100%<' in html
        assert 'data-testid="fraction-approval_resumes">1 of 1 approved step resumed<' in html
        assert "Runs per day, by final status" in html and 'class="fill--keel-green"' in html
    client.force_login(membership("oscar").user)
    html = client.get("/metrics/").content.decode()
    assert "No runs were started in this period" in html and 'data-testid="metrics-runs">0 runs<' in html


def test_the_page_needs_a_login(client):
    assert client.get("/metrics/").status_code == 302
