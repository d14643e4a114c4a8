"""Safety scoped to what a step touches (DESIGN.md §4): reservations, scoped snapshots
and preconditions, and an undo that removes only this run's records."""
import pytest

from approvals.models import ApprovalRequest, ApprovalRule
from approvals.services import approval_decide
from config.api import Conflict
from config.words import words_render
from payroll.records import services
from payroll.models import PayrollGroup, PayrollTemplate, RecordClaim
from tests.payroll import actor_for, api
from timeline.models import Event
from workflows.models import Node, Run, ToolCall
from workflows.services import node_input_answer, run_start
from tests.helpers import drive, membership, statuses

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]
REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"


def start(group_name, **params):
    return run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                     params={"request": REQUEST, "group_name": group_name, **params})


def approve(run, username="bob"):
    return approval_decide(membership=membership(username), approval_id=ApprovalRequest.objects.get(
        run=run, status="pending").id, verdict="approved")


def test_disjoint_runs_never_make_each_others_approval_stale():
    a, b = drive(start("Team A")), drive(start("Team B"))
    approve(a)
    assert drive(a).status == "completed"
    approve(b)  # raised 409 "the situation changed" when the checksum was tenant-wide
    assert drive(b).status == "completed"
    assert Run.objects.get(id=b.id).plan_version == 1
    assert PayrollGroup.objects.filter(name__in=["Team A", "Team B"]).count() == 2


def test_a_second_run_with_the_same_name_asks_for_another_before_any_approval():
    first = drive(start("Shanghai Sales"))
    second = drive(start("Shanghai Sales"))
    assert second.status == "awaiting_input"
    question = Node.objects.get(run=second, key="snapshot").question
    assert "being used for a new group by run" in question["text"] and "alice" in question["text"]
    assert not ApprovalRequest.objects.filter(run=second).exists()
    node_input_answer(membership=membership("alice"), run_id=second.id, answer="Shanghai Sales East")
    second = drive(second)
    assert second.status == "awaiting_approval"
    assert ApprovalRequest.objects.get(run=second).arguments["group_name"] == "Shanghai Sales East"
    approve(first)
    approve(second)
    assert drive(first).status == drive(second).status == "completed"
    assert PayrollGroup.objects.filter(name="Shanghai Sales East").count() == 1


def test_a_name_that_already_exists_is_asked_again():
    first = drive(start("Existing"))
    approve(first)
    drive(first)
    again = drive(start("Existing"))
    assert again.status == "awaiting_input"
    assert "already exists" in Node.objects.get(run=again, key="snapshot").question["text"]


def test_a_verify_failure_undoes_the_import(monkeypatch):
    run = drive(start("Verify Fails"))
    approve(run)
    monkeypatch.setenv("KEEL_FAULTS", "verify_import.after=fail")
    run = drive(run)
    assert run.status == "rolled_back", run.status_reason
    assert statuses(run)["verify"] == "failed" and statuses(run)["restore"] == "completed"
    assert not PayrollGroup.objects.filter(name="Verify Fails").exists()
    assert not RecordClaim.objects.filter(run=run).exists()


def test_a_failed_import_undoes_its_own_group_and_keeps_another_runs():
    legacy = PayrollTemplate.objects.filter(name__icontains="legacy").first()
    a = drive(start("Run A", template_code=legacy.code))  # A snapshots first
    b = drive(start("Run B"))
    approve(b)
    assert drive(b).status == "completed"  # B imports and completes meanwhile
    approve(a)  # A's approval is not stale: B touched none of A's records
    a = drive(a)
    assert a.status == "rolled_back", a.status_reason
    assert not PayrollGroup.objects.filter(name="Run A").exists()
    assert PayrollGroup.objects.filter(name="Run B").count() == 1


def test_the_undo_deletes_nothing_when_someone_changed_the_runs_group():
    run = drive(start("Edited Later"))
    approval = ApprovalRequest.objects.get(run=run)
    approve(run)
    drive(run)
    group = PayrollGroup.objects.get(name="Edited Later")
    PayrollGroup.objects.filter(id=group.id).update(name="Renamed By Someone")
    keys = list(ToolCall.objects.filter(run=run, tool="import_template").values_list("idempotency_key", flat=True))
    snapshot_id = int(approval.arguments["snapshot_id"])
    with pytest.raises(Conflict, match="renamed"):
        services.run_effects_undo(actor=actor_for("alice", as_agent=True, approval_id=approval.id),
                                  snapshot_id=snapshot_id, import_keys=keys, assign_keys=[], idempotency_key="undo-1")
    assert PayrollGroup.objects.filter(id=group.id).exists()


def test_employees_held_by_another_run_are_named_with_a_link_and_retried_once_it_has_finished():
    """The run asks (in its own language, with a link to the run that holds
    the employee) instead of failing with an English reason; "retry" goes on once it is free."""
    ids = [str(i) for i in membership("alice").tenant.employees.order_by("id").values_list("id", flat=True)[:2]]
    first = drive(start("Holder", employee_ids=ids))
    second = drive(start("Latecomer", employee_ids=ids[1:]))
    assert second.status == "awaiting_input", second.status_reason
    node = Node.objects.get(run=second, key="snapshot", retired_in__isnull=True)
    assert f"run {first.id}" in node.question["text"] and "“retry”" in node.question["text"]
    assert node.question["link"]["href"] == f"/runs/{first.id}/"
    assert not ApprovalRequest.objects.filter(run=second).exists()
    approve(first)
    assert drive(first).status == "completed"
    node_input_answer(membership=membership("alice"), run_id=second.id, answer="retry")
    second = drive(second)
    assert second.status == "awaiting_approval", second.status_reason
    assert second.params["group_name"] == "Latecomer"


def test_a_held_employee_is_told_in_chinese_in_a_chinese_run_with_one_full_stop():
    from agents.news import news_post
    from agents.models import Message

    ids = [str(i) for i in membership("alice").tenant.employees.order_by("id").values_list("id", flat=True)[:1]]
    first = drive(start("Holder", employee_ids=ids))
    second = drive(run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                             params={"request": "给上海销售团队建一个含提成的月薪薪资组", "group_name": "上海后来者",
                                     "employee_ids": ids}))
    question = Node.objects.get(run=second, key="snapshot", retired_in__isnull=True).question
    chinese = words_render(question["words"], "zh-hans")  # the Chinese reader's; `text` is the English
    assert chinese.startswith("员工 ") and f"运行 {first.id}" in chinese
    assert "。。" not in chinese and ".。" not in chinese
    assert question["text"].startswith("Employee ") and f"run {first.id}" in question["text"]
    for event in Event.objects.filter(run_id=second.id, type="input.requested"):
        news_post(event.id)
    told = Message.objects.get(run_id=second.id, intent="news")
    assert told.link["href"] == f"/runs/{first.id}/" and told.link["label"] == "Open the other run"


def test_a_persons_direct_import_under_the_limits_is_recorded_with_who_did_it():
    template = PayrollTemplate.objects.get(code="cn-sh-monthly-salaried", version=1)
    response = api("bob").post("/api/v1/payroll/groups/", {"template_id": str(template.id), "name": "By Hand"},
                               format="json", HTTP_IDEMPOTENCY_KEY="direct-1")
    assert response.status_code == 201, response.json()
    event = Event.objects.get(type="payroll.direct_write")
    assert event.data["by"] == "bob" and event.data["group_name"] == "By Hand" and event.data["outcome"] == "imported"
    assert not RecordClaim.objects.exists()


def test_a_persons_direct_import_over_the_limits_needs_a_second_person():
    template = PayrollTemplate.objects.get(code="cn-sh-monthly-salaried", version=1)
    ApprovalRule.objects.filter(tool="import_template").update(limits={"headcount": "0"})
    response = api("bob").post("/api/v1/payroll/groups/", {"template_id": str(template.id), "name": "Big Group"},
                               format="json", HTTP_IDEMPOTENCY_KEY="direct-2")
    assert response.status_code == 202, response.json()
    assert not PayrollGroup.objects.filter(name="Big Group").exists()
    run = drive(Run.objects.get(id=int(response.json()["run_id"])))
    assert run.status == "awaiting_approval" and run.created_by.username == "bob"
    approval = ApprovalRequest.objects.get(run=run)
    from config.api import Forbidden
    with pytest.raises(Forbidden):  # bob asked; bob may not approve
        approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="approved")
    approval_decide(membership=membership("ada"), approval_id=approval.id, verdict="approved")
    assert drive(run).status == "completed"
    assert PayrollGroup.objects.filter(name="Big Group").count() == 1
    # the same key again answers the same 202, and starts nothing new
    again = api("bob").post("/api/v1/payroll/groups/", {"template_id": str(template.id), "name": "Big Group"},
                            format="json", HTTP_IDEMPOTENCY_KEY="direct-2")
    assert again.status_code == 202 and again.json()["run_id"] == response.json()["run_id"]


def test_an_import_whose_key_is_still_held_by_a_dead_attempt_waits_instead_of_failing():
    from datetime import timedelta

    from django.utils import timezone

    from payroll.models import IdempotencyRecord
    from workflows.executor import node_execute, steps_execute

    run = drive(start("Held Key"))
    approval = ApprovalRequest.objects.get(run=run)
    approve(run)
    # A killed worker's attempt still holds the import's key in the system of record.
    request = {"template_id": int(approval.arguments["template_id"]), "group_name": "Held Key"}
    IdempotencyRecord.objects.create(
        tenant_id=run.tenant_id, operation="template_import", key=f"run{run.id}:import:v1:a1",
        request_hash=services._request_hash("template_import", request), lease_token="dead",
        expires_at=timezone.now() + timedelta(seconds=60))
    node = Node.objects.get(run=run, key="import")
    node_execute(node.id)
    node.refresh_from_db()
    assert node.status == "in_progress" and node.lease_expires_at < timezone.now() + timedelta(seconds=2)
    assert Run.objects.get(id=run.id).status == "running"
    attempts = node.attempts
    # Still held at the next pass: the step waits again, and waiting is not another attempt.
    Node.objects.filter(id=node.id).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    steps_execute(node.id)
    node.refresh_from_db()
    assert (node.status, node.attempts) == ("in_progress", attempts)
    # The dead attempt's lease runs out; the sweeper's redelivery takes the key over and completes.
    IdempotencyRecord.objects.filter(lease_token="dead").update(expires_at=timezone.now() - timedelta(seconds=1))
    Node.objects.filter(id=node.id).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    steps_execute(node.id)
    assert drive(run).status == "completed"
    assert PayrollGroup.objects.filter(name="Held Key").count() == 1
    assert Node.objects.get(id=node.id).attempts == attempts  # one attempt that waited twice
