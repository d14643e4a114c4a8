"""Cancel and retry (DESIGN.md §7), and compare-and-set on tool calls."""
import pytest
from rest_framework.test import APIClient

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from config.api import Conflict, Forbidden
from payroll.models import PayrollGroup, RecordClaim
from timeline.models import Event
from workflows.executor import node_execute
from workflows.models import Node, Run, ToolCall
from workflows.pipeline import tool_call_transition
from workflows.services import run_cancel, run_retry, run_start
from tests.helpers import drive, membership, statuses

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]
REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"


def start(username="alice", **params):
    return run_start(membership=membership(username), blueprint="payroll_group_setup",
                     params={"request": REQUEST, "group_name": "Shanghai Sales", **params})


def api(username):
    client = APIClient()
    client.force_authenticate(membership(username).user)
    return client


def test_it_cancels_a_run_waiting_for_approval_and_frees_its_name():
    run = drive(start())
    approval = ApprovalRequest.objects.get(run=run)
    run = run_cancel(membership=membership("alice"), run_id=run.id, reason="wrong team")
    run.refresh_from_db()
    assert run.status == "cancelled" and "cancelled by alice: wrong team" in run.status_reason
    approval.refresh_from_db()
    assert approval.status == "superseded"
    assert not RecordClaim.objects.filter(run=run).exists()
    event = Event.objects.get(run_id=run.id, type="run.cancel_requested")
    assert event.data == {"by": "alice", "role": "business", "reason": "wrong team"}
    # the name is free again: another run reaches its approval with it
    again = drive(start())
    assert again.status == "awaiting_approval"


def test_it_cancels_after_the_import_and_undoes_only_this_runs_group():
    other = drive(start(group_name="Other Team"))
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=other).id,
                    verdict="approved")
    assert drive(other).status == "completed"
    run = drive(start())
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                    verdict="approved")
    import_node = Node.objects.get(run=run, key="import")
    node_execute(import_node.id)  # the import lands; verify is ready, not yet run
    assert PayrollGroup.objects.filter(name="Shanghai Sales").exists()
    run_cancel(membership=membership("bob"), run_id=run.id, reason="changed our mind")
    run = drive(run)
    assert run.status == "cancelled", run.status_reason
    assert statuses(run)["restore"] == "completed"
    assert not PayrollGroup.objects.filter(name="Shanghai Sales").exists()
    assert PayrollGroup.objects.filter(name="Other Team").exists()


def test_a_finished_run_cannot_be_cancelled():
    run = drive(start())
    run_cancel(membership=membership("alice"), run_id=run.id, reason="")
    with pytest.raises(Conflict, match="already ended"):
        run_cancel(membership=membership("alice"), run_id=run.id, reason="again")


def test_it_retries_a_failed_step_with_a_new_logical_attempt():
    run = drive(run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                          params={"request": REQUEST, "group_name": "Retry Me"}, caps={"model_call_cap": 0}))
    assert run.status == "failed" and "model-call cap" in run.status_reason
    Run.objects.filter(id=run.id).update(model_call_cap=20)
    run_retry(membership=membership("alice"), run_id=run.id, reason="cap raised")
    run = drive(run)
    assert run.status == "awaiting_approval", run.status_reason
    keys = sorted(ToolCall.objects.filter(run=run, node__key="interpret").values_list("idempotency_key", flat=True))
    assert keys == [f"run{run.id}:interpret:v1:a1", f"run{run.id}:interpret:v1:a2"]
    assert Event.objects.get(run_id=run.id, type="run.retried").data["by"] == "alice"


def test_only_a_failed_or_blocked_run_can_be_retried():
    run = drive(start())
    with pytest.raises(Conflict, match="Only a failed or blocked run"):
        run_retry(membership=membership("alice"), run_id=run.id, reason="")


def test_run_control_is_for_the_starter_approvers_and_admins():
    run = drive(start())
    with pytest.raises(Forbidden):
        run_cancel(membership=membership("dora"), run_id=run.id, reason="not mine")
    assert api("dora").post(f"/api/v1/runs/{run.id}/cancel/", {"reason": "x"}, format="json").status_code == 403
    assert api("oscar").post(f"/api/v1/runs/{run.id}/cancel/", {"reason": "x"}, format="json").status_code == 404
    response = api("bob").post(f"/api/v1/runs/{run.id}/cancel/", {"reason": "duplicate"}, format="json")
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    assert api("alice").post(f"/api/v1/runs/{run.id}/retry/", {"reason": "x"}, format="json").status_code == 409


def test_it_lists_the_tenants_runs_newest_first_with_filters():
    first = drive(start(group_name="First"))
    second = drive(start(group_name="Second"))
    run_cancel(membership=membership("alice"), run_id=first.id, reason="")
    body = api("bob").get("/api/v1/runs/?blueprint=payroll_group_setup").json()
    assert [r["id"] for r in body["results"]][:2] == [str(second.id), str(first.id)]
    body = api("bob").get("/api/v1/runs/?status=cancelled").json()
    assert [r["id"] for r in body["results"]] == [str(first.id)]
    assert api("oscar").get("/api/v1/runs/").json()["results"] == []
    assert api("bob").get("/api/v1/runs/?status=nonsense").status_code == 400


def test_a_tool_call_status_write_names_the_status_it_expects():
    run = drive(start())
    call = ToolCall.objects.filter(run=run, status="succeeded").first()
    assert not tool_call_transition(call.id, expected="started", to="failed", error="late worker")
    call.refresh_from_db()
    assert call.status == "succeeded" and call.error == ""
    with pytest.raises(ValueError):
        tool_call_transition(call.id, expected="succeeded", to="failed")


def test_a_cancel_runs_an_undo_that_failed_before_again(monkeypatch):
    run = drive(start(group_name="Undo Later"))
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                    verdict="approved")
    monkeypatch.setenv("KEEL_FAULTS", "verify_import.after=fail,undo_run_effects.before=fail")
    run = drive(run)
    assert run.status == "failed" and statuses(run)["restore"] == "failed"
    assert PayrollGroup.objects.filter(name="Undo Later").exists()
    monkeypatch.delenv("KEEL_FAULTS")
    run_cancel(membership=membership("alice"), run_id=run.id, reason="clean up")
    run = drive(run)
    assert run.status == "cancelled", run.status_reason
    assert not PayrollGroup.objects.filter(name="Undo Later").exists()
    assert Node.objects.get(run=run, key="restore", retired_in__isnull=True).attempt == 2
