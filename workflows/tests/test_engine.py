import pytest

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from payroll.models import PayrollGroup, PayrollTemplate
from payroll.records.services import configuration_checksum
from timeline.models import Event
from timeline.services import events_batched
from workflows.models import Node, ProvenanceBlock, Run, StateCoordinate, Transition
from workflows.services import node_input_answer, run_start
from workflows.transitions import node_transition
from tests.helpers import drive, membership, no_broker, statuses

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def start(**params):
    params = {"request": "set up a monthly payroll group for our Shanghai sales team with commission",
              "group_name": "Shanghai Sales", **params}
    return run_start(membership=membership("alice"), blueprint="payroll_group_setup", params=params)


def pending_approval(run):
    return ApprovalRequest.objects.get(run=run, status="pending")


def test_it_runs_to_the_approval_gate_and_completes_after_approval():
    run = drive(start())
    assert run.status == "awaiting_approval"
    assert statuses(run) == {"interpret": "completed", "match": "completed", "snapshot": "completed",
                             "import": "awaiting_approval", "verify": "pending", "trial": "pending",
                             "restore": "pending"}
    approval = pending_approval(run)
    assert approval.arguments["group_name"] == "Shanghai Sales"
    approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="approved")
    run = drive(run)
    assert run.status == "completed", run.status_reason
    group = PayrollGroup.objects.get(tenant=run.tenant, name="Shanghai Sales")
    assert str(group.template_id) == StateCoordinate.objects.get(run=run, key="template_id").value


def test_an_approval_hands_its_step_to_a_worker_in_its_own_commit_and_a_lost_message_is_recovered():
    from datetime import timedelta

    from django.utils import timezone

    from workflows.models import Node, NodeStatus
    from workflows.tasks import sweep

    run = drive(start())
    approval_decide(membership=membership("bob"), approval_id=pending_approval(run).id, verdict="approved")
    # The approver's commit already claimed the step for a worker: the run page shows it started.
    node = Node.objects.get(run=run, key="import")
    assert node.status == NodeStatus.IN_PROGRESS and node.lease_owner.startswith("handed:")
    run.refresh_from_db()
    assert run.status == "running"
    assert list(Transition.objects.filter(node=node).order_by("at", "id").values_list("to_status", flat=True))[-2:] \
        == ["ready", "in_progress"]
    # Its message never arrived: once the lease runs out the sweeper sends it again.
    Node.objects.filter(id=node.id).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    with no_broker() as send:
        assert sweep()["leases"] == 1
    assert send.called
    run = drive(run)
    assert run.status == "completed", run.status_reason
    assert Node.objects.get(id=node.id).attempts == 1  # the worker took the claim over, one attempt
    assert PayrollGroup.objects.filter(tenant=run.tenant, name="Shanghai Sales").count() == 1


def test_every_transition_is_a_gapless_timeline_event():
    run = drive(start())
    approval_decide(membership=membership("bob"), approval_id=pending_approval(run).id, verdict="approved")
    run = drive(run)
    seqs = list(Event.objects.filter(conversation=run.conversation).values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))
    status_events = Event.objects.filter(conversation=run.conversation, type__in=["node.status", "run.status"])
    assert status_events.count() == Transition.objects.filter(run=run).count()


def test_a_business_user_cannot_approve():
    from config.api import Forbidden

    run = drive(start())
    with pytest.raises(Forbidden):
        approval_decide(membership=membership("alice"), approval_id=pending_approval(run).id, verdict="approved")


def test_a_second_decision_is_refused_with_the_first():
    from config.api import Conflict

    run = drive(start())
    approval = pending_approval(run)
    approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="approved")
    with pytest.raises(Conflict) as refused:
        approval_decide(membership=membership("ada"), approval_id=approval.id, verdict="rejected")
    assert refused.value.extra["status"] == "approved" and refused.value.extra["decided_by"] == "bob"


def test_a_rejection_blocks_the_run():
    run = drive(start())
    approval_decide(membership=membership("bob"), approval_id=pending_approval(run).id, verdict="rejected",
                    comment="wrong template")
    run = drive(run)
    assert run.status == "blocked" and "rejected" in run.status_reason
    assert not PayrollGroup.objects.filter(tenant=run.tenant, name="Shanghai Sales").exists()


def test_a_rejection_with_replan_excludes_the_template_and_keeps_interpret_and_snapshot():
    run = drive(start())
    first = pending_approval(run)
    snapshot_call = StateCoordinate.objects.get(run=run, key="snapshot_id").call_id
    approval_decide(membership=membership("bob"), approval_id=first.id, verdict="rejected", replan=True)
    run = drive(run)
    # Without the rejected template two Shanghai templates fit equally: Keel asks.
    assert run.plan_version == 2 and run.status == "awaiting_input"
    question = run.nodes.get(key="match", retired_in__isnull=True).question
    assert "Shanghai monthly salaried staff" in [o["answer"] for o in question["options"]]
    node_input_answer(membership=membership("alice"), run_id=run.id, answer="Shanghai monthly salaried staff")
    run = drive(run)
    assert run.status == "awaiting_approval"
    second = pending_approval(run)
    assert second.diff["template"]["name"] == "Shanghai monthly salaried staff"
    assert second.arguments["template_id"] != first.arguments["template_id"]
    assert second.arguments["snapshot_id"] == first.arguments["snapshot_id"]
    assert StateCoordinate.objects.get(run=run, key="snapshot_id").call_id == snapshot_call


def test_the_legacy_template_rolls_back_to_the_snapshot():
    legacy = PayrollTemplate.objects.filter(name__icontains="legacy").first()
    before = configuration_checksum(tenant_id=membership("alice").tenant_id)
    run = drive(start(template_code=legacy.code, group_name="Legacy grades"))
    approval_decide(membership=membership("bob"), approval_id=pending_approval(run).id, verdict="approved")
    run = drive(run)
    assert run.status == "rolled_back", run.status_reason
    assert statuses(run)["import"] == "failed" and statuses(run)["restore"] == "completed"
    assert configuration_checksum(tenant_id=run.tenant_id) == before


def test_a_tampered_template_id_is_a_provenance_block():
    run = drive(start())
    approval_decide(membership=membership("bob"), approval_id=pending_approval(run).id, verdict="rejected")
    real = StateCoordinate.objects.get(run=run, key="template_id").value
    tampered = real[:-1] + str((int(real[-1]) + 1) % 10)
    run2 = drive(start(template_id=tampered, group_name="Tampered"))
    assert run2.status == "blocked" and "provenance block on template_id" in run2.status_reason
    assert ProvenanceBlock.objects.filter(run=run2, key="template_id", supplied=tampered).exists()
    assert not ApprovalRequest.objects.filter(run=run2).exists()


def test_the_transition_cap_stops_the_run():
    run = run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                    params={"request": "Shanghai sales monthly with commission", "group_name": "Capped"},
                    caps={"transition_cap": 4})
    run = drive(run)
    assert run.status == "stopped" and run.status_reason == "transition cap reached"


def test_a_failed_batch_leaves_no_transitions_uncounted_in_the_next():
    """A batch that fails after counting a transition (its statement raised) rolls it back,
    and the next batch in the same thread counts its own against the cap as usual."""
    run = start()
    node = Node.objects.get(run=run, key="interpret")
    counted = Run.objects.get(id=run.id).transition_count
    with pytest.raises(RuntimeError):
        with events_batched():
            assert node_transition(node, "in_progress", expected="ready", reason="claimed", worker="w")
            raise RuntimeError("the worker's statement failed")
    assert Run.objects.get(id=run.id).transition_count == counted
    node.refresh_from_db()
    with events_batched():
        assert node_transition(node, "in_progress", expected="ready", reason="claimed", worker="w")
    assert Run.objects.get(id=run.id).transition_count == counted + 1


def test_the_model_call_cap_fails_the_interpretation():
    run = run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                    params={"request": "Shanghai sales monthly with commission", "group_name": "No model"},
                    caps={"model_call_cap": 0})
    run = drive(run)
    assert run.status == "failed" and "model-call cap" in run.status_reason


def test_unknown_blueprints_and_bad_params_are_refused():
    from config.api import DomainError

    with pytest.raises(DomainError, match="Unknown blueprint"):
        run_start(membership=membership("alice"), blueprint="nope", params={})
    with pytest.raises(DomainError, match="group_name"):
        run_start(membership=membership("alice"), blueprint="payroll_group_setup", params={"request": "hello"})
