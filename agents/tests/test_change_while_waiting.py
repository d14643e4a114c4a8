"""Through the conversation front: a change said while the approval waits
("actually, call it BJ Eng 2", "改叫北京研发二组") replans the run and a fresh card names the
change; "cancel" cancels the waiting run; said after the run ended, the change is offered as a
new run and nothing changes; a new request after the run ended is that request."""
import pytest

from agents.orchestrator import message_post
from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from timeline.services import conversation_create
from workflows.models import Run
from tests.helpers import drive, membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]


def conversation():
    alice = membership("alice")
    return conversation_create(tenant_id=alice.tenant_id, user_id=alice.user_id)


def say(conv, text):
    return message_post(membership=membership("alice"), conversation_id=conv.id, text=text)


def waiting(conv, text) -> Run:
    reply = say(conv, text)
    assert reply["run_id"], reply
    run = drive(Run.objects.get(id=int(reply["run_id"])))
    assert run.status == "awaiting_approval", run.status_reason
    return run


@pytest.mark.parametrize("request_text, change, name", [
    ("Set up a monthly payroll group for our Beijing engineering team, call it BJ Eng",
     "actually, call it BJ Eng 2", "BJ Eng 2"),
    ("给北京研发的同事建个月薪工资组，叫研发一组", "改叫研发二组", "研发二组"),
])
def test_a_name_said_while_the_approval_waits_reaches_a_fresh_card(request_text, change, name):
    conv = conversation()
    run = waiting(conv, request_text)
    first = ApprovalRequest.objects.get(run=run)
    reply = say(conv, change)
    assert reply["intent"] and name in reply["reply"], reply
    first.refresh_from_db()
    assert first.status == "superseded"
    run = drive(Run.objects.get(id=run.id))
    assert run.status == "awaiting_approval" and run.params["group_name"] == name and run.plan_version == 2
    fresh = ApprovalRequest.objects.get(run=run, status="pending")
    assert name in fresh.summary_shown
    approval_decide(membership=membership("bob"), approval_id=fresh.id, verdict="approved")
    assert drive(run).status == "completed"


def test_cancel_said_while_the_approval_waits_cancels_the_run():
    conv = conversation()
    run = waiting(conv, "Set up a monthly payroll group for our Beijing engineering team, call it BJ Cancel")
    reply = say(conv, "cancel")
    assert "cancelled" in reply["reply"]
    assert drive(Run.objects.get(id=run.id)).status == "cancelled"


def test_a_change_after_the_run_ended_is_offered_as_a_new_run_and_changes_nothing():
    conv = conversation()
    run = waiting(conv, "Set up a monthly payroll group for our Beijing engineering team, call it BJ Done")
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                    verdict="approved")
    assert drive(run).status == "completed"
    reply = say(conv, "actually, call it BJ Done 2")
    assert "finished" in reply["reply"] and Run.objects.filter(conversation=conv).count() == 1
    assert Run.objects.get(id=run.id).params["group_name"] == "BJ Done"
    assert reply["options"] and "BJ Done 2" in reply["options"][0]["answer"]
    started = say(conv, reply["options"][0]["answer"])  # the offer, clicked
    assert started["run_id"] and int(started["run_id"]) != run.id, started
    assert Run.objects.get(id=int(started["run_id"])).params["group_name"] == "BJ Done 2"


def test_a_new_request_after_the_run_ended_is_that_request():
    conv = conversation()
    run = waiting(conv, "Set up a monthly payroll group for our Beijing engineering team, call it BJ First")
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                    verdict="approved")
    drive(run)
    reply = say(conv, "Set up a monthly payroll group for our Shanghai sales team with commission, call it SH Next")
    assert reply["run_id"] and int(reply["run_id"]) != run.id, reply
