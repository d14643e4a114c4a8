"""The expense system of record and the expense_claim blueprint, driven without a broker."""
import pytest

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from config.api import Conflict, DomainError, Forbidden, Unprocessable
from expenses.models import ClaimStatus, ExpenseClaim, Invoice
from expenses.records.services import Actor, PayloadTooLarge, claim_create, claim_submit, invoice_stage, invoice_upload
from workflows.models import ProvenanceBlock
from workflows.services import run_start
from tests.helpers import drive, membership, statuses

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]
PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
OVER = {"category": "lodging", "city": "Beijing", "start_date": "2026-11-16", "nights": 2, "amount": "1800"}
WITHIN = {**OVER, "amount": "1400"}


def actor(username: str) -> Actor:
    m = membership(username)
    return Actor(tenant_id=m.tenant_id, user_id=m.user_id, role=m.role)


def start(**params):
    return run_start(membership=membership("alice"), blueprint="expense_claim", params={**OVER, **params})


def test_it_asks_an_approver_for_an_over_limit_claim_and_the_card_cites_750():
    run = drive(start())
    assert run.status == "awaiting_approval"
    assert statuses(run)["submit"] == "awaiting_approval"
    approval = ApprovalRequest.objects.get(run=run, status="pending")
    assert "900.00 a night is over the limit of 750 yuan per room per night" in approval.summary
    assert "travel-v2" in approval.summary and "2026-01-01" in approval.summary
    cited = approval.arguments["policy_check"]["citation"]
    assert [c["line"] for c in cited] == [1, 2, 3] and "750" in cited[2]["text"]
    claim = ExpenseClaim.objects.get(id=int(approval.arguments["application_id"]))
    assert claim.status == ClaimStatus.DRAFT
    approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="approved")
    run = drive(run)
    assert run.status == "completed", run.status_reason
    claim.refresh_from_db()
    assert claim.status == ClaimStatus.SUBMITTED and claim.policy_verdict == "over_limit"
    assert str(claim.policy_limit) == "750.00"


def test_a_claim_within_the_limit_is_submitted_without_an_approval():
    run = drive(start(**WITHIN))
    assert run.status == "completed", run.status_reason
    assert not ApprovalRequest.objects.filter(run=run).exists()
    assert ExpenseClaim.objects.get(tenant=run.tenant).status == ClaimStatus.SUBMITTED


def test_a_2025_claim_is_judged_by_travel_v1():
    run = drive(start(start_date="2025-06-01", amount="1300"))  # 650 a night: over v1's 600
    approval = ApprovalRequest.objects.get(run=run, status="pending")
    assert "travel-v1" in approval.summary and "600" in approval.summary


def test_an_attached_invoice_is_filed_to_the_claim():
    invoice = invoice_stage(actor=actor("alice"), filename="hotel.pdf", content=PDF)
    run = drive(start(invoice_id=str(invoice.id), **WITHIN))
    assert run.status == "completed", run.status_reason
    assert statuses(run)["upload"] == "completed"
    invoice.refresh_from_db()
    assert invoice.claim is not None and invoice.claim.status == ClaimStatus.SUBMITTED


def test_a_tampered_application_id_is_a_provenance_block_and_submits_nothing():
    genuine = drive(start(**WITHIN))
    real = ExpenseClaim.objects.get(tenant=genuine.tenant).id
    run = drive(start(application_id=str(real + 1)))
    assert run.status in ("blocked", "failed")
    assert "provenance block on application_id" in run.status_reason
    assert ProvenanceBlock.objects.filter(run=run, key="application_id").exists()
    assert not ApprovalRequest.objects.filter(run=run).exists()
    assert ExpenseClaim.objects.filter(status=ClaimStatus.SUBMITTED).count() == 1


def test_the_agent_cannot_submit_an_over_limit_claim_without_an_approval():
    claim_id = claim_create(actor=actor("alice"), idempotency_key="k1", **OVER).body["application_id"]
    agent = Actor(tenant_id=membership("alice").tenant_id, user_id=membership("alice").user_id, role=None)
    with pytest.raises(Forbidden):
        claim_submit(actor=agent, claim_id=claim_id, idempotency_key="k2",
                     policy={"verdict": "within_limit", "limit": "750"})  # 900 a night: the record disagrees
    assert ExpenseClaim.objects.get(id=claim_id).status == ClaimStatus.DRAFT


def test_a_write_replays_with_its_key_and_refuses_another_request_under_it():
    first = claim_create(actor=actor("alice"), idempotency_key="same", **OVER)
    again = claim_create(actor=actor("alice"), idempotency_key="same", **OVER)
    assert again.replayed and again.body == first.body
    with pytest.raises(Unprocessable):
        claim_create(actor=actor("alice"), idempotency_key="same", **WITHIN)
    assert ExpenseClaim.objects.count() == 1


@pytest.mark.parametrize("fields, message", [
    ({"amount": "-5"}, "amount"), ({"amount": "12.345"}, "two decimals"), ({"nights": 0}, "nights"),
    ({"category": "yacht"}, "category"), ({"start_date": "16/11/2026"}, "YYYY-MM-DD"), ({"city": " "}, "city"),
    ({"currency": "XYZ"}, "currency")])
def test_bad_claim_input_gets_a_clear_error_and_changes_nothing(fields, message):
    with pytest.raises(DomainError) as err:
        claim_create(actor=actor("alice"), idempotency_key="bad", **{**OVER, **fields})
    assert message in err.value.message
    assert ExpenseClaim.objects.count() == 0


def test_an_invoice_must_be_a_small_pdf_or_image():
    claim_id = claim_create(actor=actor("alice"), idempotency_key="k", **OVER).body["application_id"]
    with pytest.raises(Unprocessable):
        invoice_upload(actor=actor("alice"), claim_id=claim_id, filename="x.pdf", content=b"MZ\x90\x00 not a pdf",
                       idempotency_key="i1")
    with pytest.raises(PayloadTooLarge):
        invoice_upload(actor=actor("alice"), claim_id=claim_id, filename="big.pdf",
                       content=PDF + b"0" * (5 * 1024 * 1024), idempotency_key="i2")
    receipt = invoice_upload(actor=actor("alice"), claim_id=claim_id, filename="ok.pdf", content=PDF,
                             idempotency_key="i3")
    assert receipt.body["content_type"] == "application/pdf" and len(receipt.body["checksum"]) == 64
    assert Invoice.objects.count() == 1


def test_an_approver_decides_a_submitted_claim_but_not_their_own():
    claim_id = claim_create(actor=actor("bob"), idempotency_key="b", **WITHIN).body["application_id"]
    claim_submit(actor=actor("bob"), claim_id=claim_id, idempotency_key="s")
    from expenses.records.services import claim_decide
    with pytest.raises(Forbidden):
        claim_decide(actor=actor("bob"), claim_id=claim_id, verdict="approved", idempotency_key="d1")
    claim_decide(actor=actor("ada"), claim_id=claim_id, verdict="approved", idempotency_key="d2")
    with pytest.raises(Conflict):
        claim_decide(actor=actor("ada"), claim_id=claim_id, verdict="rejected", idempotency_key="d3")
    assert ExpenseClaim.objects.get(id=claim_id).status == ClaimStatus.APPROVED


def test_another_tenant_never_sees_a_claim(client):
    claim_id = claim_create(actor=actor("alice"), idempotency_key="k", **OVER).body["application_id"]
    client.force_login(membership("oscar").user)
    assert client.get(f"/api/v1/expenses/claims/{claim_id}/").status_code == 404
    assert client.get("/api/v1/expenses/claims/").json()["results"] == []
    response = client.post(f"/api/v1/expenses/claims/{claim_id}/submit/", {}, content_type="application/json",
                           HTTP_IDEMPOTENCY_KEY="x")
    assert response.status_code == 404
    assert ExpenseClaim.objects.get(id=claim_id).status == ClaimStatus.DRAFT
