"""An import that fails its verification is undone, and then — once the undo has
committed, with the group's name still reserved for the run — the planner replaces the
failed step and what followed it with the next-best template, keeping what completed."""
from __future__ import annotations

import pytest
from django.test import Client

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from payroll.models import ClaimKind, PayrollGroup, RecordClaim, group_name_key
from workflows.models import Node, Plan, ToolCall
from workflows.services import run_start
from tests.helpers import drive, membership, statuses

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]

REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"
FIRST, SECOND = "cn-sales-commission", "cn-sh-monthly-salaried"
UNSEEN = "verify_import.item_unseen#{}=on"


def start(group_name: str = "Shanghai Sales"):
    return drive(run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                           params={"request": REQUEST, "group_name": group_name}))


def approve(run):
    pending = ApprovalRequest.objects.get(run=run, status="pending")
    approval_decide(membership=membership("bob"), approval_id=pending.id, verdict="approved")
    return drive(run)


def name_held_by(run, name: str) -> bool:
    return RecordClaim.objects.filter(tenant_id=run.tenant_id, kind=ClaimKind.GROUP_NAME, key=group_name_key(name),
                                      run_id=run.id).exists()


def test_a_failed_verification_is_undone_then_the_next_best_template_is_tried_and_completes(monkeypatch):
    monkeypatch.setenv("KEEL_FAULTS", UNSEEN.format(FIRST))
    run = approve(start())
    # The first import was verified one item short: undone, then replanned — the run never ended.
    verify = Node.objects.get(run=run, key="verify", plan_version=1)
    assert verify.status == "failed" and "every template item is in the group" in verify.status_reason
    undo = ToolCall.objects.get(run=run, tool="undo_run_effects")
    assert undo.status == "succeeded" and undo.result["groups_deleted"] == ["Shanghai Sales"]
    assert run.status == "awaiting_approval" and run.plan_version == 2
    assert name_held_by(run, "Shanghai Sales")  # no concurrent run can take the name meanwhile

    diff = Plan.objects.get(run=run, version=2).diff
    assert diff["why"] == ("verification failed: every template item is in the group; "
                           "trying template Shanghai monthly salaried staff")
    assert diff["trigger"]["kind"] == "failure_after_undo" and diff["trigger"]["node"] == "verify"
    assert diff["trigger"]["undo"] == {"node": "restore", "receipt_ref": str(undo.id)}
    assert [k["key"] for k in diff["kept"]] == ["interpret", "snapshot"]
    assert diff["removed"] == [{"key": "match", "status": "completed"}, {"key": "import", "status": "completed"},
                               {"key": "verify", "status": "failed"}, {"key": "trial", "status": "pending"},
                               {"key": "restore", "status": "completed"}]
    assert diff["added"] == ["match", "import", "verify", "trial", "restore"]

    # A second run asking for the same name is asked for another one: the name is still this run's.
    other = start()
    assert other.status == "awaiting_input"
    assert "Shanghai Sales" in Node.objects.get(run=other, key="snapshot").question["text"]

    # The import of the next-best template waits for its own approval, then completes.
    card = ApprovalRequest.objects.get(run=run, status="pending")
    assert card.node.plan_version == 2 and "Shanghai monthly salaried staff" in card.summary
    run = approve(run)
    assert run.status == "completed", run.status_reason
    group = PayrollGroup.objects.get(tenant_id=run.tenant_id, name="Shanghai Sales")
    assert group.template.code == SECOND
    assert ToolCall.objects.filter(run=run, tool="snapshot_payroll_groups").count() == 1  # kept, not redone
    assert statuses(run) == {"interpret": "completed", "snapshot": "completed", "match": "completed",
                             "import": "completed", "verify": "completed", "trial": "completed",
                             "restore": "pending"}
    assert not name_held_by(run, "Shanghai Sales")  # given back when the run ended

    # The run page draws the diff, with the reason.
    client = Client()
    client.login(username="alice", password="keel-demo")
    page = client.get(f"/runs/{run.id}/").content.decode()
    assert 'data-testid="plan-diff-2"' in page
    assert "trying template Shanghai monthly salaried staff" in page
    assert "removed: match (completed), import (completed), verify (failed), trial (pending), restore (completed)" in page


def test_when_no_other_template_is_left_the_run_ends_rolled_back_saying_so(monkeypatch):
    monkeypatch.setenv("KEEL_FAULTS", "verify_import.item_unseen=on")  # every template's import is short
    run = approve(start())
    assert run.plan_version == 2 and run.status == "awaiting_approval"
    run = approve(run)
    # The second template failed too, and no other fits the place and pay cycle: undone, and said so.
    assert run.status == "rolled_back"
    assert run.status_reason.endswith("; verification failed: every template item is in the group; "
                                      "no other template is left to try")
    assert Plan.objects.filter(run=run).count() == 2
    assert ToolCall.objects.filter(run=run, tool="undo_run_effects", status="succeeded").count() == 2
    assert not PayrollGroup.objects.filter(tenant_id=run.tenant_id, name="Shanghai Sales").exists()
    assert not name_held_by(run, "Shanghai Sales")  # given back: the run ended for good


def test_past_the_cap_the_run_stays_rolled_back(monkeypatch):
    from workflows import services
    monkeypatch.setattr(services, "UNDO_REPLAN_CAP", 1)
    monkeypatch.setenv("KEEL_FAULTS", "verify_import.item_unseen=on")
    run = approve(approve(start()))
    assert run.status == "rolled_back"
    assert run.status_reason.endswith("this run's changes were undone")
    assert Plan.objects.filter(run=run).count() == 2


def test_a_verification_that_errors_is_undone_without_a_replan(monkeypatch):
    monkeypatch.setenv("KEEL_FAULTS", "verify_import.after#Shanghai Sales=fail")
    run = approve(start())
    assert run.status == "rolled_back"
    assert Plan.objects.filter(run=run).count() == 1
