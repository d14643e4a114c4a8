"""The whole-tenant restore (DESIGN.md §4): an admin's operation with its own approval.
It deletes everyone's later work, so a second person approves it seeing exactly what
goes, and it writes only if the tenant is still as that person saw it."""
import pytest

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from config.api import Conflict, Forbidden, Unprocessable
from payroll.records import services
from payroll.models import PayrollGroup, Snapshot
from payroll.records.selectors import configuration_checksum
from tests.payroll import actor_for, page, state_of, template
from workflows.models import Run
from tests.helpers import drive, membership, statuses

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def group(name: str, key: str) -> None:
    services.template_import(actor=actor_for("bob"), template_id=template().id, group_name=name, idempotency_key=key)


def ask(snapshot_id: int, key: str = "r") -> Run:
    receipt = services.snapshot_restore(actor=actor_for("ada"), snapshot_id=snapshot_id, idempotency_key=key)
    assert receipt.status_code == 202
    return drive(Run.objects.get(id=int(receipt.body["run_id"])))


def pending(run: Run) -> ApprovalRequest:
    return ApprovalRequest.objects.get(run=run, status="pending")


def snapshot(label: str = "before") -> int:
    return int(services.snapshot_create(actor=actor_for("bob"), label=label, idempotency_key=label).body["snapshot_id"])


def test_only_an_admin_may_ask_and_a_scoped_snapshot_cannot_restore_the_tenant():
    sid = snapshot()
    scoped = services.snapshot_create(actor=actor_for("bob"), label="one run", idempotency_key="sc",
                                      scope={"group_name": "X"})
    before = state_of()
    for who in ("alice", "bob", "dora"):
        with pytest.raises(Forbidden):
            services.snapshot_restore(actor=actor_for(who), snapshot_id=sid, idempotency_key="x")
    with pytest.raises(Unprocessable):
        services.snapshot_restore(actor=actor_for("ada"), snapshot_id=scoped.body["snapshot_id"], idempotency_key="y")
    assert state_of() == before and not Run.objects.filter(blueprint="payroll_tenant_restore").exists()


def test_the_agent_cannot_restore_without_the_decided_approval():
    sid = snapshot()
    group("Later", "g1")
    before = state_of()
    with pytest.raises(Forbidden):
        services.snapshot_restore(actor=actor_for("ada", as_agent=True), snapshot_id=sid, idempotency_key="z",
                                  tenant_checksum=configuration_checksum(tenant_id=actor_for("ada").tenant_id))
    assert state_of() == before


def test_the_approver_sees_what_goes_and_the_requester_may_not_decide():
    sid = snapshot()
    group("Made Later", "g1")
    run = ask(sid)
    approval = pending(run)
    assert run.created_by.username == "ada" and statuses(run) == {"inspect": "completed",
                                                                   "restore": "awaiting_approval"}
    assert approval.diff["groups_deleted"] == ["Made Later"]
    assert "whoever created them" in approval.summary
    with pytest.raises(Forbidden):
        approval_decide(membership=membership("ada"), approval_id=approval.id, verdict="approved")
    assert PayrollGroup.objects.filter(name="Made Later").exists()
    approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="approved")
    assert drive(run).status == "completed"
    assert not PayrollGroup.objects.filter(name="Made Later").exists()
    assert configuration_checksum(tenant_id=run.tenant_id) == Snapshot.objects.get(id=sid).checksum


def test_a_rejection_deletes_nothing():
    sid = snapshot()
    group("Keep Me", "g1")
    run = ask(sid)
    approval_decide(membership=membership("bob"), approval_id=pending(run).id, verdict="rejected", comment="no")
    drive(run)
    assert Run.objects.get(id=run.id).status != "completed"
    assert PayrollGroup.objects.filter(name="Keep Me").exists()


def test_a_change_before_the_decision_makes_the_card_stale_and_the_new_card_shows_it():
    sid = snapshot()
    group("First", "g1")
    run = ask(sid)
    first = pending(run)
    group("Second", "g2")  # someone works on while the restore waits
    with pytest.raises(Conflict):
        approval_decide(membership=membership("bob"), approval_id=first.id, verdict="approved")
    assert PayrollGroup.objects.filter(name__in=["First", "Second"]).count() == 2
    run = drive(run)
    second = pending(run)
    assert second.id != first.id and sorted(second.diff["groups_deleted"]) == ["First", "Second"]
    assert run.plans.get(version=2).diff["trigger"] == {"kind": "stale", "node": "restore"}
    approval_decide(membership=membership("bob"), approval_id=second.id, verdict="approved")
    assert drive(run).status == "completed"
    assert not PayrollGroup.objects.filter(name__in=["First", "Second"]).exists()


def test_a_change_after_the_approval_blocks_the_restore_and_deletes_nothing():
    sid = snapshot()
    group("First", "g1")
    run = ask(sid)
    approval_decide(membership=membership("bob"), approval_id=pending(run).id, verdict="approved")
    group("Made Meanwhile", "g2")  # between the decision and the write
    run = drive(run)
    assert run.status == "blocked" and statuses(run)["restore"] == "blocked"
    assert PayrollGroup.objects.filter(name__in=["First", "Made Meanwhile"]).count() == 2


def test_the_snapshot_page_offers_the_restore_to_an_admin_only_and_asking_opens_the_run():
    sid = snapshot()
    group("From The Page", "g1")
    assert "data-testid=\"restore-form\"" not in page("bob").get(f"/payroll/snapshots/{sid}/").content.decode()
    ada = page("ada")
    html = ada.get(f"/payroll/snapshots/{sid}/").content.decode()
    assert "data-testid=\"restore-form\"" in html and "“From The Page” is deleted" in html
    response = ada.post(f"/payroll/snapshots/{sid}/restore/", {"key": "k1"})
    again = ada.post(f"/payroll/snapshots/{sid}/restore/", {"key": "k1"})  # a double click
    run = Run.objects.get(blueprint="payroll_tenant_restore")
    assert response.status_code == 302 and response["Location"] == f"/runs/{run.id}/" == again["Location"]
    assert PayrollGroup.objects.filter(name="From The Page").exists()


def test_anyone_takes_a_snapshot_from_the_page_and_a_blank_label_changes_nothing():
    alice = page("alice")
    before = Snapshot.objects.count()
    assert alice.post("/payroll/snapshots/", {"key": "a", "label": "  "}).status_code == 302
    assert Snapshot.objects.count() == before
    response = alice.post("/payroll/snapshots/", {"key": "b", "label": "Year end"})
    taken = Snapshot.objects.get(label="Year end")
    assert response["Location"] == f"/payroll/snapshots/{taken.id}/" and taken.scope is None
