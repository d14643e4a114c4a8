"""Memory L2/L3: a decided approval becomes a traceable fact and distilled experience,
which ranks the approved template first for a similar request — in that tenant only —
and grants nothing."""
import pytest

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from memory.models import MemoryItem
from payroll.models import PayrollTemplate
from payroll.agent.previews import template_memories
from timeline.models import Frame
from workflows.models import StateCoordinate
from workflows.services import run_start
from tests.helpers import drive, membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]

SALES = "set up a monthly payroll group for our Shanghai sales team with commission"
SIMILAR = "please create a Shanghai sales payroll group, paid every month, with commission"


def start(username, request, group_name, **params):
    return run_start(membership=membership(username), blueprint="payroll_group_setup",
                     params={"request": request, "group_name": group_name, **params})


def matched(run):
    return PayrollTemplate.objects.get(id=int(StateCoordinate.objects.get(run=run, key="template_id").value))


@pytest.fixture
def bob_approved_t():
    """Bob approves template T (Shanghai monthly salaried staff) for a sales-with-commission request."""
    run = drive(start("alice", SALES, "Shanghai Sales A", template_code="cn-sh-monthly-salaried"))
    approval = ApprovalRequest.objects.get(run=run)
    approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="approved")
    drive(run)
    return approval


def test_without_memory_a_sales_request_matches_the_commission_template():
    assert matched(drive(start("alice", SIMILAR, "Sales B"))).code == "cn-sales-commission"


def test_after_bob_approves_t_a_similar_request_ranks_t_first_and_links_l3_to_l2(bob_approved_t):
    run = drive(start("alice", SIMILAR, "Sales B"))
    assert matched(run).code == "cn-sh-monthly-salaried"
    frame = Frame.objects.get(activity__run=run, kind="memory")
    l3 = MemoryItem.objects.get(id=int(frame.payload.data["l3"]))
    l2 = MemoryItem.objects.get(id=int(frame.payload.data["l2"]))
    assert l3.layer == "L3" and l3.evidence_id == l2.id
    assert l2.layer == "L2" and l2.approval_id == bob_approved_t.id
    assert frame.payload.data["approval"] == str(bob_approved_t.id)
    assert "approved by bob" in l2.text and "sales request with commission" in l2.text
    assert "cn-sh-monthly-salaried" not in l2.text + l3.text + frame.summary


def test_a_remembered_approval_grants_nothing(bob_approved_t):
    run = drive(start("alice", SIMILAR, "Sales B"))
    assert run.status == "awaiting_approval"  # the import still waits for its own approval
    assert ApprovalRequest.objects.filter(run=run, status="pending").count() == 1


def test_tenant_other_is_unaffected(bob_approved_t):
    assert not MemoryItem.objects.filter(tenant=membership("oscar").tenant).exists()
    run = drive(start("oscar", SIMILAR, "Sales B"))
    assert matched(run).code == "cn-sales-commission"
    assert not Frame.objects.filter(activity__run=run, kind="memory").exists()
    assert template_memories(tenant_id=membership("oscar").tenant_id,
                         requirements={"region": "CN-SH", "pay_frequency": "monthly", "population": "sales",
                                       "items_named": ["commission"]}) == []


def test_an_unrelated_request_recalls_nothing(bob_approved_t):
    run = drive(start("alice", "set up a monthly payroll group for Beijing executives with an annual bonus",
                      "Execs"))
    assert matched(run).code == "cn-executive-annual-bonus"
    assert not Frame.objects.filter(activity__run=run, kind="memory").exists()


def test_the_planning_boundary_of_a_conversation_recalls_the_experience_as_context(bob_approved_t):
    from agents.orchestrator import message_post
    from timeline.services import conversation_create

    alice = membership("alice")
    conv = conversation_create(tenant_id=alice.tenant_id, user_id=alice.user_id)
    result = message_post(membership=alice, conversation_id=conv.id, text=SIMILAR)
    memory = Frame.objects.get(activity_id=int(result["activity_id"]), kind="memory")
    assert memory.payload.data["items"][0]["approval"] == str(bob_approved_t.id)
    assert "authorise nothing" in memory.summary or "it ranks candidates but authorises nothing" in memory.summary


def test_memory_learns_when_the_approved_step_completes_and_a_request_only_reads_it(bob_approved_t):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    # Learnt by the worker that completed the import, before anyone asks.
    learnt = MemoryItem.objects.filter(approval=bob_approved_t)
    assert sorted(learnt.values_list("layer", flat=True)) == ["L2", "L3"]
    with CaptureQueriesContext(connection) as recall:
        items = template_memories(tenant_id=bob_approved_t.tenant_id, requirements={
            "region": "CN-SH", "pay_frequency": "monthly", "population": "sales", "items_named": ["commission"]})
    assert [i.layer for i in items] == ["L3"] and items[0].approval_id == bob_approved_t.id
    assert all(q["sql"].lstrip().upper().startswith("SELECT") for q in recall.captured_queries)
