"""A claim a run created changes only through that run: a direct submit (API or page) while the
run waits for its approver is a 409 naming the run, and changes nothing; a card superseded for
the same cause twice stops the run instead of asking again."""
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from config.api import Conflict
from expenses.models import ClaimStatus, ExpenseClaim
from workflows.models import Plan
from workflows.services import run_cancel, run_start
from tests.helpers import drive, membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]
SHANGHAI = {"category": "lodging", "city": "Shanghai", "start_date": "2026-12-01", "nights": 3, "amount": "3000"}
PDF = b"%PDF-1.4\n%%EOF\n"


def waiting_claim():
    run = drive(run_start(membership=membership("alice"), blueprint="expense_claim", params=SHANGHAI))
    assert run.status == "awaiting_approval"
    approval = ApprovalRequest.objects.get(run=run, status="pending")
    return run, approval, ExpenseClaim.objects.get(id=int(approval.arguments["application_id"]))


def submit(client, claim, key="s1"):
    return client.post(f"/api/v1/expenses/claims/{claim.id}/submit/", {}, content_type="application/json",
                       HTTP_IDEMPOTENCY_KEY=key)


def test_submitting_a_claim_whose_run_awaits_approval_is_a_409_with_the_run_s_link(client):
    run, approval, claim = waiting_claim()
    client.force_login(membership("alice").user)
    response = submit(client, claim)
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "held_by_run" and body["run"] == str(run.id) and body["run_url"] == f"/runs/{run.id}/"
    assert f"Run {run.id} holds this claim" in body["detail"]
    claim.refresh_from_db()
    assert claim.status == ClaimStatus.DRAFT and not claim.transitions.exists()
    upload = client.post(f"/api/v1/expenses/claims/{claim.id}/invoices/", {"file": SimpleUploadedFile("h.pdf", PDF)},
                         HTTP_IDEMPOTENCY_KEY="i1")
    assert upload.status_code == 201 and claim.invoices.count() == 1  # an invoice is welcome while it waits
    # The approver's card is still the one to decide, and the run submits the claim under it.
    approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="approved")
    assert drive(run).status == "completed"
    claim.refresh_from_db()
    assert claim.status == ClaimStatus.SUBMITTED and claim.transitions.get().approval_id == approval.id


def test_the_claim_page_says_which_run_holds_it_and_offers_no_submit(client):
    run, _, claim = waiting_claim()
    client.force_login(membership("alice").user)
    page = client.get(f"/expenses/claims/{claim.id}/").content.decode()
    assert 'data-testid="claim-held"' in page and f'href="/runs/{run.id}/"' in page
    assert 'data-testid="submit-claim"' not in page
    refused = client.post(f"/expenses/claims/{claim.id}/submit/", {"form_key": "s1"}, follow=True).content.decode()
    assert f"Run {run.id} holds this claim" in refused
    claim.refresh_from_db()
    assert claim.status == ClaimStatus.DRAFT


def test_in_chinese_the_refusal_names_the_run_in_chinese(client):
    run, _, claim = waiting_claim()
    client.force_login(membership("alice").user)
    body = client.post(f"/api/v1/expenses/claims/{claim.id}/submit/", {}, content_type="application/json",
                       HTTP_IDEMPOTENCY_KEY="s1", HTTP_ACCEPT_LANGUAGE="zh-Hans").json()
    assert body["code"] == "held_by_run" and str(run.id) in body["detail"] and "运行" in body["detail"]


def test_once_the_run_is_cancelled_the_claimant_submits_it_directly(client):
    run, approval, claim = waiting_claim()
    run_cancel(membership=membership("alice"), run_id=run.id, reason="I will submit it myself")
    assert drive(run).status == "cancelled"
    client.force_login(membership("alice").user)
    assert submit(client, claim).status_code == 200
    claim.refresh_from_db()
    assert claim.status == ClaimStatus.SUBMITTED
    assert ApprovalRequest.objects.get(id=approval.id).status == "superseded"


def test_a_card_superseded_twice_for_the_same_cause_stops_the_run():
    run, approval, claim = waiting_claim()
    # The claim changes behind the run's back (not through Keel's doors: the admin site's database, say).
    ExpenseClaim.objects.filter(id=claim.id).update(amount="2000")
    bob = membership("bob")
    with pytest.raises(Conflict) as first:
        approval_decide(membership=bob, approval_id=approval.id, verdict="approved")
    assert "run_stopped" not in first.value.extra
    run = drive(run)
    again = ApprovalRequest.objects.get(run=run, status="pending")  # asked once more, on plan v2
    assert run.status == "awaiting_approval" and run.plan_version == 2
    with pytest.raises(Conflict) as second:
        approval_decide(membership=bob, approval_id=again.id, verdict="approved")
    assert second.value.extra["run_stopped"] is True
    run = drive(run)
    assert run.status == "blocked" and run.plan_version == 2
    assert "superseded twice for the same cause" in run.status_reason
    assert "amount or nights changed" in run.status_reason
    assert not ApprovalRequest.objects.filter(run=run, status="pending").exists()
    assert Plan.objects.filter(run=run).count() == 2
    claim.refresh_from_db()
    assert claim.status == ClaimStatus.DRAFT
