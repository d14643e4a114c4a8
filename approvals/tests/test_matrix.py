"""The approval matrix, its thresholds and the four-eyes rule (issue 7)."""
from decimal import Decimal

import pytest

from approvals.authority import approval_covers
from approvals.matrix import approval_route, matrix_rule_update
from approvals.models import ApprovalDecision, ApprovalRequest, ApprovalRule
from approvals.services import approval_decide
from config.api import Conflict, Forbidden, Unprocessable
from timeline.models import Event
from workflows.tests.helpers import drive, membership, no_broker

from .helpers import seed, waiting_approval

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def demo():
    seed()
    with no_broker():
        yield


def limit(headcount=None, gross=None, roles=("approver", "admin")):
    return matrix_rule_update(membership=membership("ada"), tool="import_template", roles=list(roles),
                              deadline_seconds=24 * 3600, remind_before_seconds=3600, headcount_limit=headcount,
                              monthly_gross_limit=gross, above_limit_role="admin")


def test_it_seeds_a_default_rule_for_imports():
    rule = ApprovalRule.objects.get(tenant=membership("ada").tenant, tool="import_template")
    assert rule.roles == ["approver", "admin"] and rule.headcount_limit == 50


def test_it_lets_bob_approve_a_small_import():
    approval = waiting_approval()
    assert approval.needs_role == "approver" and approval.allowed_roles == ["approver", "admin"]
    assert approval.measures["headcount"] > 0 and approval.measures["location"] == "Shanghai"
    approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="approved")
    run = drive(approval.run)
    assert run.status == "completed", run.status_reason


def test_it_routes_an_import_above_the_headcount_limit_to_an_admin():
    limit(headcount=3)
    approval = waiting_approval()
    assert approval.needs_role == "admin" and approval.allowed_roles == ["admin"]
    assert "above the limit of 3" in approval.routing_reason
    with pytest.raises(Forbidden) as refused:
        approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="approved")
    assert refused.value.code == "matrix_refused" and "tenant admin" in refused.value.message
    approval_decide(membership=membership("ada"), approval_id=approval.id, verdict="approved")
    assert drive(approval.run).status == "completed"


def test_it_routes_an_import_above_the_monthly_gross_limit_to_an_admin():
    limit(gross=Decimal("1000.00"))
    approval = waiting_approval()
    assert approval.needs_role == "admin" and "monthly gross" in approval.routing_reason


def test_it_computes_the_route_from_the_measures():
    tenant_id = membership("ada").tenant_id
    limit(headcount=10, gross=Decimal("100000"))
    small = approval_route(tenant_id=tenant_id, tool="import_template",
                           measures={"headcount": 10, "monthly_gross": "100000", "currency": "CNY"})
    assert small.roles == ["approver", "admin"] and small.needs_role == "approver"
    big = approval_route(tenant_id=tenant_id, tool="import_template",
                         measures={"headcount": 11, "monthly_gross": "1", "currency": "CNY"})
    assert big.roles == ["admin"] and big.needs_role == "admin"
    unknown = approval_route(tenant_id=tenant_id, tool="a_tool_without_a_row", measures={})
    assert unknown.roles == ["approver", "admin"]


def test_it_lets_a_matrix_say_admins_only():
    limit(roles=["admin"])
    approval = waiting_approval()
    with pytest.raises(Forbidden):
        approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="approved")
    # A "no" changes nothing in the system of record: any approver may still reject.
    approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="rejected", comment="not now")
    assert ApprovalRequest.objects.get(id=approval.id).status == "rejected"


def test_it_reroutes_a_pending_approval_when_the_matrix_changes():
    approval = waiting_approval()
    assert approval.needs_role == "approver"
    limit(headcount=1)
    approval.refresh_from_db()
    assert approval.needs_role == "admin"
    limit(headcount=None)
    approval.refresh_from_db()
    assert approval.needs_role == "approver"


def test_it_refuses_matrix_edits_by_anyone_but_an_admin():
    with pytest.raises(Forbidden):
        matrix_rule_update(membership=membership("bob"), tool="import_template", roles=["approver"],
                           deadline_seconds=3600, remind_before_seconds=60, headcount_limit=None,
                           monthly_gross_limit=None, above_limit_role="admin")


def test_it_refuses_a_rule_nobody_could_approve_under():
    with pytest.raises(Unprocessable):
        limit(roles=[])
    with pytest.raises(Unprocessable):
        matrix_rule_update(membership=membership("ada"), tool="not_a_tool", roles=["admin"],
                           deadline_seconds=3600, remind_before_seconds=60, headcount_limit=None,
                           monthly_gross_limit=None, above_limit_role="admin")


def test_it_refuses_the_requester_under_the_four_eyes_rule():
    approval = waiting_approval("ada", group_name="Ada's own")
    with pytest.raises(Forbidden) as refused:
        approval_decide(membership=membership("ada"), approval_id=approval.id, verdict="approved")
    assert refused.value.code == "four_eyes" and "four-eyes" in refused.value.message
    approval.refresh_from_db()
    assert approval.status == "pending"
    attempt = ApprovalDecision.objects.get(approval=approval)
    assert not attempt.accepted and "four-eyes" in attempt.comment
    assert Event.objects.filter(run=approval.run, type="approval.refused", data__code="four_eyes").exists()
    approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="approved")
    assert drive(approval.run).status == "completed"


def test_it_records_a_matrix_refusal_on_the_timeline():
    limit(headcount=0)
    approval = waiting_approval()
    with pytest.raises(Forbidden):
        approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="approved")
    event = Event.objects.get(run=approval.run, type="approval.refused")
    assert event.data["by"] == "bob" and event.data["code"] == "matrix_refused"


def test_it_answers_a_decided_approval_with_the_first_decision_even_for_the_requester():
    approval = waiting_approval("ada", group_name="Decided")
    approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="approved", comment="ok")
    with pytest.raises(Conflict) as refused:
        approval_decide(membership=membership("ada"), approval_id=approval.id, verdict="approved")
    assert refused.value.extra["decided_by"] == "bob" and refused.value.extra["comment"] == "ok"


def test_the_system_of_record_refuses_an_approval_its_requester_decided():
    approval = waiting_approval()
    # Marked approved by some path other than approval_decide, by the requester herself.
    ApprovalRequest.objects.filter(id=approval.id).update(status="approved", decided_by=approval.requested_by,
                                                          decided_role="business")
    with pytest.raises(Forbidden) as refused:
        approval_covers(tenant_id=approval.tenant_id, approval_id=approval.id, tool="import_template",
                        arguments={"template_id": approval.arguments["template_id"],
                                   "group_name": approval.arguments["group_name"]})
    assert refused.value.code == "four_eyes"


def test_the_system_of_record_refuses_an_approval_the_matrix_did_not_allow():
    limit(headcount=0)
    approval = waiting_approval()
    bob = membership("bob")
    ApprovalRequest.objects.filter(id=approval.id).update(status="approved", decided_by=bob.user,
                                                          decided_role="approver")
    ApprovalDecision.objects.create(approval=approval, user=bob.user, verdict="approved", accepted=True)
    with pytest.raises(Forbidden) as refused:
        approval_covers(tenant_id=approval.tenant_id, approval_id=approval.id, tool="import_template",
                        arguments={"group_name": approval.arguments["group_name"]})
    assert refused.value.code == "matrix_refused"


def test_the_system_of_record_accepts_a_properly_decided_approval():
    approval = waiting_approval()
    approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="approved")
    approval_covers(tenant_id=approval.tenant_id, approval_id=approval.id, tool="import_template",
                    arguments={"group_name": approval.arguments["group_name"]})
    assert Event.objects.filter(run=approval.run, type="approval.rechecked").exists()


def test_it_measures_an_attached_employee_list_exactly():
    from payroll.models import Employee
    from workflows.services import run_start

    from .helpers import REQUEST

    limit(headcount=2)
    alice = membership("alice")
    ids = [str(i) for i in Employee.objects.filter(tenant_id=alice.tenant_id).values_list("id", flat=True)[:2]]
    run = drive(run_start(membership=alice, blueprint="payroll_group_setup",
                          params={"request": REQUEST, "group_name": "Listed", "employee_ids": ids}))
    approval = ApprovalRequest.objects.get(run=run, status="pending")
    assert approval.measures["headcount"] == 2 and approval.measures["listed"]
    assert approval.needs_role == "approver"  # 2 is not above the limit of 2
