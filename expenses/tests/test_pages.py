"""The expense and hiring pages: each member sees their tenant's records, another tenant's are 404."""
import pytest

from expenses.models import ExpenseClaim
from hr.models import OutboxEvent, Tan
from tests.helpers import membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]
PDF = b"%PDF-1.4\n%%EOF\n"


def test_alice_files_a_claim_on_the_page_uploads_an_invoice_and_submits_it(client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(membership("alice").user)
    form = {"form_key": "f1", "category": "lodging", "city": "Beijing", "start_date": "2026-11-16", "nights": "2",
            "amount": "1400", "currency": "CNY"}
    page = client.post("/expenses/", form)
    assert client.post("/expenses/", form).url == page.url  # a double submit replays: one claim
    claim = ExpenseClaim.objects.get()
    bad = client.post(f"/expenses/claims/{claim.id}/invoice/",
                      {"form_key": "i0", "file": SimpleUploadedFile("x.exe", b"MZ\x90\x00")}, follow=True)
    assert "must be a PDF, PNG or JPEG" in bad.content.decode()
    client.post(f"/expenses/claims/{claim.id}/invoice/", {"form_key": "i1", "file": SimpleUploadedFile("h.pdf", PDF)})
    client.post(f"/expenses/claims/{claim.id}/submit/", {"form_key": "s1"})
    claim.refresh_from_db()
    assert claim.status == "submitted" and claim.invoices.count() == 1
    assert "h.pdf" in client.get(f"/expenses/claims/{claim.id}/").content.decode()
    client.force_login(membership("oscar").user)
    assert client.get(f"/expenses/claims/{claim.id}/").status_code == 404
    assert "claim-row" not in client.get("/expenses/").content.decode()


def test_ada_approves_a_tan_on_the_page_and_oscar_cannot_see_it(client):
    tan = Tan.objects.get(title="Data Analyst")
    client.force_login(membership("alice").user)
    assert "approve-tan" not in client.get(f"/hiring/tans/{tan.id}/").content.decode()
    client.force_login(membership("ada").user)
    page = client.post(f"/hiring/tans/{tan.id}/approve/", follow=True).content.decode()
    assert "supervisor starts candidate matching" in page and OutboxEvent.objects.filter(tan=tan).count() == 1
    again = client.post(f"/hiring/tans/{tan.id}/approve/", follow=True).content.decode()
    assert "approved by ada" in again and OutboxEvent.objects.filter(tan=tan).count() == 1
    assert 'hx-trigger="every 1s"' in client.get(f"/hiring/tans/{tan.id}/").content.decode()
    client.force_login(membership("oscar").user)
    assert client.get(f"/hiring/tans/{tan.id}/").status_code == 404
    assert client.post(f"/hiring/tans/{tan.id}/approve/").status_code == 404


def test_an_upload_past_the_request_limit_is_a_clear_message_not_a_server_error():
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client
    from django.contrib.auth.models import User

    from expenses.models import ExpenseClaim, Invoice
    from expenses.records.services import Actor, claim_create
    from tests.helpers import membership

    m = membership("alice")
    receipt = claim_create(actor=Actor(tenant_id=m.tenant_id, user_id=m.user_id, role=m.role), idempotency_key="big",
                           category="lodging", city="Beijing", start_date="2026-11-16", nights=2, amount="1400")
    client = Client()
    client.force_login(User.objects.get(username="alice"))
    claim = ExpenseClaim.objects.get(id=int(receipt.body["application_id"]))
    response = client.post(f"/expenses/claims/{claim.id}/invoice/", {
        "form_key": "k", "file": SimpleUploadedFile("huge.pdf", b"%PDF-" + b"\0" * (7 * 1024 * 1024))}, follow=True)
    assert response.status_code == 200 and "larger than the limit of 5 MB" in response.content.decode()
    assert not Invoice.objects.exists()


def test_a_three_megabyte_invoice_is_filed_from_the_page_with_its_csrf_token():
    import re

    from django.contrib.auth.models import User
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client

    from expenses.records.services import Actor, claim_create

    m = membership("alice")
    receipt = claim_create(actor=Actor(tenant_id=m.tenant_id, user_id=m.user_id, role=m.role), idempotency_key="3mb",
                           category="lodging", city="Beijing", start_date="2026-11-16", nights=2, amount="1400")
    claim_id = receipt.body["application_id"]
    client = Client(enforce_csrf_checks=True)
    client.force_login(User.objects.get(username="alice"))
    page = client.get(f"/expenses/claims/{claim_id}/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    scan = b"%PDF-1.4\n" + b"\0" * (3 * 1024 * 1024)
    refused = client.post(f"/expenses/claims/{claim_id}/invoice/", {"form_key": "k", "file": SimpleUploadedFile(
        "scan.pdf", scan)})
    assert refused.status_code == 403  # no token: nothing filed
    assert not ExpenseClaim.objects.get(id=int(claim_id)).invoices.exists()
    response = client.post(f"/expenses/claims/{claim_id}/invoice/", {
        "form_key": "k", "csrfmiddlewaretoken": token, "file": SimpleUploadedFile("scan.pdf", scan)}, follow=True)
    assert response.status_code == 200 and "scan.pdf" in response.content.decode()
    assert ExpenseClaim.objects.get(id=int(claim_id)).invoices.get().size == len(scan)
