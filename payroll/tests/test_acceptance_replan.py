"""Acceptance that can fail, a local replan with its diff after a step fails for
good, and transient errors retried with backoff up to a cap."""
from __future__ import annotations

import json
from datetime import timedelta
from types import SimpleNamespace
from unittest import mock

import pytest
from django.test import Client
from django.utils import timezone

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from payroll.agent.tools import interpret as payroll_tools
from payroll.models import PayrollTemplate, Snapshot
from tests.payroll import template
from timeline.models import Event, Frame
from workflows.executor import node_execute
from workflows.models import Node, NodeStatus, Plan, ToolCall
from workflows.services import run_start
from tests.helpers import drive, membership, statuses
from workflows.tools import TOOLS

pytestmark = pytest.mark.django_db

REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"


@pytest.fixture(autouse=True)
def _no_retry_backoff(demo, monkeypatch):
    """The demo, no broker, and failed tool calls retried at once."""
    monkeypatch.setenv("KEEL_RETRY_BACKOFF_SECONDS", "0")


def start(**params):
    return run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                     params={"request": REQUEST, "group_name": "Shanghai Sales", **params})


def api_run(run) -> dict:
    client = Client()
    client.login(username="alice", password="keel-demo")
    response = client.get(f"/api/v1/runs/{run.id}/")
    assert response.status_code == 200
    return response.json()


def model_says(text: str):
    return mock.patch.object(payroll_tools, "tool_model_call", return_value=SimpleNamespace(text=text))


# --- 1. acceptance as data --------------------------------------------------------------------

def test_requirements_that_break_their_schema_fail_interpret_naming_the_criterion_then_the_rules_read_them():
    bad = {"region": "Shanghai, China", "pay_frequency": "every moon", "items_named": [], "missing": []}
    with model_says(json.dumps(bad)):
        run = drive(start())
    retired = Node.objects.get(run=run, key="interpret", plan_version=1)
    assert retired.status == NodeStatus.FAILED and retired.retired_in == 2
    assert "acceptance not met: the requirements match their schema" in retired.status_reason
    assert {r["criterion"]: r["met"] for r in retired.acceptance_results} == {
        "the requirements were read from the request": True, "the requirements match their schema": False}
    assert "region" in next(r["detail"] for r in retired.acceptance_results if not r["met"])
    # The local replan read the request by the rules; the run went on to the approval.
    assert run.status == "awaiting_approval"
    body = api_run(run)
    interpret = next(n for n in body["nodes"] if n["key"] == "interpret")
    assert interpret["plan_version"] == 2
    assert interpret["acceptance"] == [
        {"criterion": "the requirements were read from the request", "met": True, "detail": ""},
        {"criterion": "the requirements match their schema", "met": True, "detail": ""}]
    diff = body["plans"][1]["diff"]
    assert diff["trigger"] == {"kind": "failure", "node": "interpret",
                               "reason": retired.status_reason}
    assert diff["removed"][0] == {"key": "interpret", "status": "failed"}
    assert diff["added"][0] == "interpret" and diff["kept"] == []
    assert diff["params_changed"] == ["interpret_by_rules"]


def test_a_proposal_missing_its_missing_list_fails_both_criteria():
    with model_says(json.dumps({"region": "CN-SH", "pay_frequency": "monthly", "items_named": []})):
        run = drive(start())
    retired = Node.objects.get(run=run, key="interpret", plan_version=1)
    assert [r["met"] for r in retired.acceptance_results] == [False, False]


def test_when_the_replan_cannot_help_the_step_fails_for_good_naming_the_criterion():
    inconsistent = {"region": None, "pay_frequency": "monthly", "items_named": [], "missing": []}
    with model_says(json.dumps(inconsistent)), \
            mock.patch.object(payroll_tools, "requirements_extract", return_value=dict(inconsistent)):
        run = drive(start())
    assert run.status == "failed"
    assert "the requirements match their schema" in run.status_reason
    assert "region is neither found nor listed as missing" in run.status_reason
    assert Plan.objects.filter(run=run).count() == 2  # one replan, by the rules; then it stops
    assert statuses(run)["match"] == "pending"


def _first_call_returns(tool_name: str, change):
    """Wrap a tool so that its first call's output is altered by `change`."""
    tool = TOOLS[tool_name]
    real, calls = tool.fn, []

    def fn(ctx, arguments):
        output = real(ctx, arguments)
        calls.append(arguments)
        return change(output) if len(calls) == 1 else output
    return mock.patch.object(tool, "fn", fn), calls


def test_a_template_for_another_region_fails_match_and_the_replan_takes_the_next_best_keeping_the_snapshot():
    singapore = PayrollTemplate.objects.filter(region="SG").first()
    patch, calls = _first_call_returns("match_salary_template", lambda output: {
        **output, "template_id": str(singapore.id), "template_version": singapore.version,
        "template_name": singapore.name, "reasons": []})
    with patch:
        run = drive(start())
    first = Node.objects.get(run=run, key="match", plan_version=1)
    assert first.status == "failed"
    assert "it fits the requested region and pay cycle (conflicts: region" in first.status_reason
    assert run.status == "awaiting_approval"
    assert calls[1]["exclude_template_ids"] == [str(singapore.id)]
    diff = Plan.objects.get(run=run, version=2).diff
    assert {k["key"] for k in diff["kept"]} == {"interpret", "snapshot"}
    assert [r["key"] for r in diff["removed"]] == ["match", "import", "verify", "trial", "restore"]
    assert diff["added"] == ["match", "import", "verify", "trial", "restore"]
    # Completed steps keep their receipts: one snapshot call, never redone.
    assert ToolCall.objects.filter(run=run, tool="snapshot_payroll_groups").count() == 1
    matched = next(c for c in api_run(run)["state"] if c["key"] == "template_id")
    assert matched["value"] != str(singapore.id) and matched["plan_version"] == 2
    # The run page draws the diff.
    client = Client()
    client.login(username="alice", password="keel-demo")
    page = client.get(f"/runs/{run.id}/").content.decode()
    assert 'data-testid="plan-diff-2"' in page and "step match failed" in page
    assert "kept: interpret, snapshot" in page and "removed: match (failed)" in page


def test_a_template_that_is_not_in_the_catalog_fails_the_first_criterion():
    patch, _ = _first_call_returns("match_salary_template", lambda output: {**output, "template_version": 999})
    with patch:
        run = drive(start())
    first = Node.objects.get(run=run, key="match", plan_version=1)
    assert {r["criterion"]: r["met"] for r in first.acceptance_results}["a catalog template was chosen"] is False
    # With the clear winner excluded, the replanned match has no clear choice: it asks the user.
    assert run.status == "awaiting_input"
    again = Node.objects.get(run=run, key="match", plan_version=2)
    assert again.status == "awaiting_input" and again.question["options"]


def _approved(run):
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                    verdict="approved")
    return drive(run)


def _accept(tool_name, run, output_change=None, arguments_change=None):
    """Run a tool's acceptance against a recorded call of the run, altered."""
    call = ToolCall.objects.filter(run=run, tool=tool_name, status="succeeded").last()
    ctx = SimpleNamespace(tenant_id=run.tenant_id, run_id=run.id, node_id=call.node_id, call_id=call.id)
    arguments = arguments_change(dict(call.arguments)) if arguments_change else dict(call.arguments)
    output = output_change(dict(call.result)) if output_change else dict(call.result)
    return {r.criterion: r.ok for r in TOOLS[tool_name].accept(ctx, arguments, output)}


@pytest.mark.parametrize("tool_name,criterion,output_change,arguments_change", [
    ("snapshot_payroll_groups", "the snapshot exists in this tenant", lambda o: {**o, "snapshot_id": "1"}, None),
    ("snapshot_payroll_groups", "its checksum matches the receipt", lambda o: {**o, "checksum": "0" * 64}, None),
    ("snapshot_payroll_groups", "the group name is reserved for this run",
     lambda o: {**o, "group_name": "Someone Else's"}, None),
    ("import_template", "the group exists", lambda o: {**o, "group_id": "1"}, None),
    ("import_template", "it has the template's item count", None,
     lambda a: {**a, "template_id": str(template("cn-intern").id)}),
    ("import_template", "it was built from the approved template", None,
     lambda a: {**a, "template_id": str(template("cn-intern").id)}),
    ("verify_import", "every template item is in the group", lambda o: {**o, "items": o["items"] - 1}, None),
    ("assign_employees", "every listed employee is in the new group", None,
     lambda a: {**a, "employee_ids": a["employee_ids"] + [str(999999)]}),
])
def test_each_criterion_fails_when_the_receipt_does_not_bear_it_out(tool_name, criterion, output_change,
                                                                   arguments_change):
    from payroll.models import Employee

    ids = [str(e) for e in Employee.objects.filter(tenant=membership("alice").tenant, group__isnull=True)
           .values_list("id", flat=True)[:2]]
    run = drive(start(employee_ids=ids))
    if tool_name != "snapshot_payroll_groups":
        run = _approved(run)
        assert run.status == "completed"
    assert all(_accept(tool_name, run).values())  # as recorded: every criterion met
    results = _accept(tool_name, run, output_change, arguments_change)
    assert results[criterion] is False


def test_the_undo_criterion_fails_when_the_scope_differs_from_the_snapshot():
    run = _approved(drive(start()))
    snapshot = Snapshot.objects.get(id=int(ToolCall.objects.get(run=run, tool="snapshot_payroll_groups")
                                           .result["snapshot_id"]))
    ctx = SimpleNamespace(tenant_id=run.tenant_id, run_id=run.id)
    accept = TOOLS["undo_run_effects"].accept
    # The run completed: its group exists, so the scope is not the snapshot's.
    assert accept(ctx, {"snapshot_id": str(snapshot.id)}, {})[0].ok is False


# --- 2. transient errors: retried with backoff, up to a cap, each attempt counted ----------------

def _flaky(tool_name: str, failures: int, error: Exception | None = None):
    error = error or TimeoutError("the payroll system did not answer in time")
    tool = TOOLS[tool_name]
    real, seen = tool.fn, []

    def fn(ctx, arguments):
        seen.append(1)
        if len(seen) <= failures:
            raise error
        return real(ctx, arguments)
    return mock.patch.object(tool, "fn", fn), seen


def drive_with_sweeps(run, rounds: int = 10):
    """`drive`, plus what the sweeper does: hand a step whose lease ran out to a worker."""
    for _ in range(rounds):
        drive(run)
        expired = list(Node.objects.filter(run=run, status=NodeStatus.IN_PROGRESS, retired_in__isnull=True,
                                           lease_expires_at__lte=timezone.now() + timedelta(seconds=1))
                       .values_list("id", flat=True))
        if not expired:
            break
        Node.objects.filter(id__in=expired).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
        for node_id in expired:
            node_execute(node_id)
    run.refresh_from_db()
    return run


def test_a_timeout_is_retried_with_backoff_and_each_attempt_is_counted():
    patch, seen = _flaky("interpret_request", failures=2)
    with patch:
        run = drive_with_sweeps(start())
    assert run.status == "awaiting_approval"
    node = Node.objects.get(run=run, key="interpret")
    assert len(seen) == 3 and node.attempts == 3 and node.retries == 2
    assert node.status == "completed" and node.plan_version == 1  # no replan for a passing failure
    retries = Event.objects.filter(run_id=run.id, type="node.retry_scheduled").order_by("seq")
    assert [e.data["retry"] for e in retries] == [1, 2]
    assert all(e.data["error"].startswith("TimeoutError") for e in retries)
    reclaims = Event.objects.filter(run_id=run.id, type="node.reclaimed")
    assert [e.data["cause"] for e in reclaims] == ["retry", "retry"]
    assert Frame.objects.filter(activity_id=node.activity_id, name="retry 1 of 3").exists()


def test_a_lost_connection_past_the_cap_is_a_failure_with_the_count(monkeypatch):
    monkeypatch.setenv("KEEL_TRANSIENT_RETRIES", "2")
    patch, seen = _flaky("interpret_request", failures=99, error=ConnectionError("connection reset"))
    with patch:
        run = drive_with_sweeps(start())
    assert len(seen) == 3
    assert run.status == "failed"
    assert "gave up after 3 attempts (ConnectionError: connection reset)" in run.status_reason


def test_a_permanent_error_is_not_retried_but_replanned_by_the_step_s_tool():
    # A pinned code that is not in the catalog: a permanent error; the replan drops the pin.
    run = drive(start(template_code="no-such-template"))
    first = Node.objects.get(run=run, key="match", plan_version=1)
    assert first.status == "failed" and first.retries == 0 and "no-such-template" in first.status_reason
    assert run.status == "awaiting_approval"
    assert Plan.objects.get(run=run, version=2).diff["params_changed"] == ["template_code"]


def test_a_rejection_with_replan_records_its_diff_too():
    run = drive(start())
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                    verdict="rejected", replan=True)
    diff = Plan.objects.get(run=run, version=2).diff
    assert diff["trigger"] == {"kind": "rejection", "node": "import"}
    assert diff["removed"] == [{"key": "match", "status": "completed"}, {"key": "import", "status": "blocked"},
                               {"key": "verify", "status": "pending"}, {"key": "trial", "status": "pending"},
                               {"key": "restore", "status": "pending"}]
    assert {k["key"] for k in diff["kept"]} == {"interpret", "snapshot"}
    assert diff["params_changed"] == ["excluded_templates", "template_code"]
    assert api_run(run)["plans"][1]["diff"] == diff
