"""A change said while a run waits replans the affected steps as a new plan
version (the plan diff says why), withdraws the pending card, and asks again only what the
change needs; an ended run, a busy one or one that already wrote what the change would alter
is refused with nothing changed."""
import pytest

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from config.api import Conflict, Forbidden
from config.words import words
from payroll.models import PayrollGroup
from timeline.models import Event
from workflows.executor import node_execute
from workflows.models import Node, Plan, Run
from workflows.services import run_revise, run_start
from tests.helpers import drive, membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]
REQUEST = "set up a monthly payroll group for our Beijing engineering team"


def waiting(name="BJ Eng") -> Run:
    run = drive(run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                          params={"request": REQUEST, "group_name": name}))
    assert run.status == "awaiting_approval", run.status_reason
    return run


def rename(run: Run, name: str, who="alice") -> Run:
    return run_revise(membership=membership(who), run_id=run.id, params_update={"group_name": name},
                      replace=["interpret", "snapshot"], reason=words("%(text)s", text=f"call it {name}"))


def test_a_name_said_while_the_approval_waits_replans_and_a_fresh_card_names_it():
    run = waiting()
    first = ApprovalRequest.objects.get(run=run)
    run = drive(rename(run, "BJ Eng 2"))
    first.refresh_from_db()
    assert first.status == "superseded"
    assert Event.objects.filter(run_id=run.id, type="approval.withdrawn").exists()  # the desk drops it live
    assert run.status == "awaiting_approval" and run.plan_version == 2 and run.params["group_name"] == "BJ Eng 2"
    plan = Plan.objects.get(run=run, version=2)
    assert "call it BJ Eng 2" in str(plan.diff["why"]) and plan.diff["params_changed"] == ["group_name"]
    assert {"interpret", "snapshot", "import"} <= set(plan.diff["added"])
    fresh = ApprovalRequest.objects.get(run=run, status="pending")
    assert fresh.id != first.id and "BJ Eng 2" in fresh.summary_shown
    approval_decide(membership=membership("bob"), approval_id=fresh.id, verdict="approved")
    assert drive(run).status == "completed"
    assert PayrollGroup.objects.filter(name="BJ Eng 2").exists() and not PayrollGroup.objects.filter(name="BJ Eng").exists()


def test_an_ended_run_is_not_changed_a_follow_up_is_proposed_instead():
    run = waiting()
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                    verdict="approved")
    run = drive(run)
    with pytest.raises(Conflict) as refused:
        rename(run, "Too Late")
    assert refused.value.code == "run_finished"
    assert Run.objects.get(id=run.id).params["group_name"] == "BJ Eng"


def test_only_who_may_control_the_run_may_change_it_and_nothing_changes_otherwise():
    run = waiting()
    with pytest.raises(Forbidden):
        rename(run, "Not Mine", who="dora")
    run.refresh_from_db()
    assert run.plan_version == 1 and ApprovalRequest.objects.get(run=run).status == "pending"


def test_a_step_that_already_wrote_is_not_replaced():
    run = waiting()
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                    verdict="approved")
    node_execute(Node.objects.get(run=run, key="import", retired_in__isnull=True).id)  # the import lands
    Run.objects.filter(id=run.id).update(status="blocked")  # as if a later step stopped for a person
    with pytest.raises(Conflict) as refused:
        rename(Run.objects.get(id=run.id), "After Import")
    assert refused.value.code == "already_written"
