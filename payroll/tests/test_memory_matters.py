"""Memory that matters. What the user already said in this conversation and which
template the tenant chose last time for a similar request change the builtin backend's
decisions; each use is a frame with its evidence, and L1 is a real record of the step's
working set. A remembered statement authorises nothing."""
import pytest

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from memory.models import WorkingMemory
from payroll.models import PayrollTemplate
from timeline.models import Frame
from timeline.services import conversation_create, event_append
from workflows.models import Node, StateCoordinate
from workflows.services import run_start
from tests.helpers import drive, membership, statuses

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]

EARLIER = "Our team sits in the Shanghai office and everyone is paid monthly."
UNSAID = "set up a payroll group for our shift workers with overtime"


def said(conversation, text: str, user: str = "alice") -> None:
    """A user message as the conversation records it (agents' "message.received")."""
    event_append(conversation_id=conversation.id, type="message.received", data={"text": text, "user": user})


def run_in(conversation, request: str, **params):
    said(conversation, request)
    return drive(run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                           params={"request": request, "group_name": "Sales", **params},
                           conversation_id=conversation.id))


def conversation():
    m = membership("alice")
    return conversation_create(tenant_id=m.tenant_id, user_id=m.user_id, title="test")


def requirements_of(run) -> dict:
    return StateCoordinate.objects.get(run=run, key="requirements").value


def test_without_the_earlier_statement_the_match_has_to_ask():
    run = run_in(conversation(), UNSAID)
    assert requirements_of(run)["missing"] == ["region", "pay_frequency"]
    assert run.status == "awaiting_input" and statuses(run)["match"] == "awaiting_input"
    assert not StateCoordinate.objects.filter(run=run, key="template_id").exists()


def test_what_the_user_said_earlier_in_the_conversation_fills_what_the_request_leaves_unsaid():
    conv = conversation()
    said(conv, EARLIER)
    run = run_in(conv, UNSAID)
    requirements = requirements_of(run)
    assert (requirements["region"], requirements["pay_frequency"], requirements["missing"]) == ("CN-SH", "monthly", [])
    # The decision changed: no question, the Shanghai shift template, straight to the approval
    # (which memory does not grant).
    chosen = PayrollTemplate.objects.get(id=int(StateCoordinate.objects.get(run=run, key="template_id").value))
    assert chosen.code == "cn-sh-hourly-shift"
    assert run.status == "awaiting_approval", run.status_reason
    assert ApprovalRequest.objects.get(run=run).status == "pending"
    interpret = Node.objects.get(run=run, key="interpret")
    frame = Frame.objects.get(activity_id=interpret.activity_id, kind="memory")
    assert "said earlier in this conversation" in frame.summary
    used = frame.payload.data["used"]
    assert {u["key"] for u in used} == {"region", "pay_frequency"}
    assert all(u["evidence"]["text"] == EARLIER and u["evidence"]["kind"] == "message" for u in used)
    # L1: the step's working set, with the earlier statement and its evidence.
    l1 = WorkingMemory.objects.get(node=interpret)
    kinds = [i["kind"] for i in l1.items]
    assert kinds[0] == "request" and l1.items[0]["text"] == UNSAID
    assert {i["used_for"] for i in l1.items if i["kind"] == "earlier_statement"} == {"region", "pay_frequency"}
    match = WorkingMemory.objects.get(node__run=run, step="match")
    assert match.decision.startswith("chose “") and any(i["kind"] == "earlier_statement" for i in match.items)


def test_a_statement_in_the_request_wins_over_an_earlier_one():
    conv = conversation()
    said(conv, "Our team sits in the Beijing office.")
    run = run_in(conv, "set up a monthly payroll group for our Shanghai shift workers with overtime")
    assert requirements_of(run)["region"] == "CN-SH"
    assert not Frame.objects.filter(activity__run=run, kind="memory", name="memory: the conversation").exists()


def test_another_conversation_is_not_remembered():
    said(conversation(), EARLIER)
    run = run_in(conversation(), UNSAID)
    assert run.status == "awaiting_input"


def test_the_template_chosen_last_time_changes_the_match_and_is_in_its_working_set():
    first = drive(run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                            params={"request": "set up a monthly payroll group for our Shanghai sales team with "
                                               "commission", "group_name": "Sales A",
                                    "template_code": "cn-sh-monthly-salaried"}))
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=first).id,
                    verdict="approved")
    drive(first)
    run = drive(run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                          params={"request": "please create a Shanghai sales payroll group, paid every month, "
                                             "with commission", "group_name": "Sales B"}))
    chosen = PayrollTemplate.objects.get(id=int(StateCoordinate.objects.get(run=run, key="template_id").value))
    assert chosen.code == "cn-sh-monthly-salaried"
    l1 = WorkingMemory.objects.get(node__run=run, step="match")
    experience = [i for i in l1.items if i["kind"] == "experience"]
    assert len(experience) == 1 and experience[0]["evidence"]["approval"]
    assert "approved before for a similar request" in l1.decision
    # Memory ranked it; the import still waits for its own approval.
    assert run.status == "awaiting_approval"
