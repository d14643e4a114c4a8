"""An invoice attached in the chat goes with the expense claim the message files: staged with
its checksum, then filed to the claim by the run's upload step. Bad files and invoices
without a claim are refused and change nothing."""
import hashlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from agents.models import Message
from expenses.models import ExpenseClaim, Invoice
from timeline.services import conversation_create
from workflows.models import Run
from tests.helpers import drive, membership, statuses

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]
PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
CLAIM = "Please file an expense claim: lodging in Beijing, 2 nights from 2026-11-16, 1,400 yuan in total"


def client_for(username):
    from django.contrib.auth.models import User

    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def conversation(username="alice"):
    m = membership(username)
    return conversation_create(tenant_id=m.tenant_id, user_id=m.user_id)


def post(conv, text, name="hotel.pdf", content=PDF, username="alice", csrf=True):
    """As the chat's form does: with the session's CSRF token in the X-CSRFToken header."""
    from django.contrib.auth.models import User

    client = Client(enforce_csrf_checks=True)
    client.force_login(User.objects.get(username=username))
    client.get("/console/")
    headers = {"X-CSRFToken": client.cookies["csrftoken"].value} if csrf else {}
    return client.post(f"/conversations/{conv.id}/upload/",
                       {"text": text, "attachment": SimpleUploadedFile(name, content)}, headers=headers)


def nothing_written(conv):
    return not Message.objects.filter(conversation=conv).exists() and not Invoice.objects.exists() \
        and not Run.objects.filter(conversation=conv).exists()


def test_a_pdf_attached_to_a_claim_message_is_filed_to_the_claim_with_its_checksum():
    conv = conversation()
    response = post(conv, CLAIM)
    assert response.status_code == 201, response.content
    body = response.json()
    assert "The invoice you attached is filed with the claim." in body["reply"]
    run = drive(Run.objects.get(id=int(body["run_id"])))
    assert run.status == "completed", run.status_reason  # 700 a night: within the limit
    assert statuses(run)["upload"] == "completed" and run.params["invoice_id"] == body["invoice_id"]
    claim = ExpenseClaim.objects.get(tenant=run.tenant)
    [invoice] = claim.invoices.all()
    assert invoice.filename == "hotel.pdf" and invoice.content_type == "application/pdf"
    assert invoice.checksum == hashlib.sha256(PDF).hexdigest() and bytes(invoice.content) == PDF
    assert Message.objects.get(conversation=conv, role="user").attachment_name == "hotel.pdf"
    page = client_for("alice").get(f"/expenses/claims/{claim.id}/").content.decode()
    assert "hotel.pdf" in page and invoice.checksum[:14] in page


def test_an_invoice_kept_while_keel_asks_for_the_amount_is_filed_with_the_answer():
    conv = conversation()
    asked = post(conv, "Please file an expense claim: lodging in Beijing, 2 nights from 2026-11-16",
                 name="receipt.png", content=b"\x89PNG\r\n\x1a\n" + b"\0" * 64).json()
    assert asked["run_id"] is None and "total amount" in asked["reply"]
    answered = client_for("alice").post(f"/api/v1/conversations/{conv.id}/messages/", {"text": "1,400 yuan"},
                                        content_type="application/json").json()
    run = drive(Run.objects.get(id=int(answered["run_id"])))
    assert run.params["invoice_id"] == asked["invoice_id"] and run.status == "completed", run.status_reason
    assert Invoice.objects.get(id=int(asked["invoice_id"])).claim.status == "submitted"


@pytest.mark.parametrize("name,content,status,code", [
    ("notes.pdf", b"just some text, not a PDF", 422, "invoice_type"),
    ("big.pdf", PDF + b"\0" * (5 * 1024 * 1024), 413, "invoice_too_large"),
    ("huge.pdf", PDF + b"\0" * (7 * 1024 * 1024), 413, "invoice_too_large"),  # past the request's own cap
    ("empty.pdf", b"", 400, "invoice_empty"),
])
def test_a_file_that_is_no_acceptable_invoice_is_refused_and_changes_nothing(name, content, status, code):
    conv = conversation()
    response = post(conv, CLAIM, name=name, content=content)
    assert response.status_code == status and response.json()["code"] == code, response.content
    assert nothing_written(conv)


def test_a_three_megabyte_scan_is_within_the_invoice_limit_though_past_the_general_upload_cap():
    conv = conversation()
    response = post(conv, CLAIM, name="scan.jpg", content=b"\xff\xd8\xff" + b"\0" * (3 * 1024 * 1024))
    assert response.status_code == 201, response.content
    assert Invoice.objects.get(id=int(response.json()["invoice_id"])).content_type == "image/jpeg"


def test_without_the_csrf_token_it_is_refused_and_changes_nothing():
    conv = conversation()
    assert post(conv, CLAIM, csrf=False).status_code == 403
    assert nothing_written(conv)


def test_an_invoice_without_a_claim_is_refused_and_changes_nothing():
    conv = conversation()
    response = post(conv, "What is the housing fund rate for Shanghai employees?")
    assert response.status_code == 400 and "expense claim only" in response.json()["detail"]
    assert nothing_written(conv)


def test_another_tenants_conversation_is_404_and_changes_nothing():
    conv = conversation()
    response = post(conv, CLAIM, username="oscar")
    assert response.status_code == 404
    assert nothing_written(conv)


# --- An invoice sent later in the same conversation -------------------------------------

OVER = "Please file an expense claim: lodging in Beijing, 2 nights from 2026-11-16, 1,800 yuan in total"


def api_post(conv, text, name="hotel.pdf", content=PDF, username="alice"):
    """As an API client does: the messages endpoint, multipart with the attachment."""
    return client_for(username).post(f"/api/v1/conversations/{conv.id}/messages/",
                                     {"text": text, "attachment": SimpleUploadedFile(name, content)})


def test_the_first_reply_names_the_claim_and_asks_for_the_invoice():
    conv = conversation()
    body = client_for("alice").post(f"/api/v1/conversations/{conv.id}/messages/", {"text": OVER},
                                    content_type="application/json").json()
    assert body["reply"].startswith("I've filed an expense claim: lodging in Beijing, 2 nights from 2026-11-16, "
                                    "1,800 yuan (900 yuan a night).")
    assert "Please attach the invoice" in body["reply"] and "payroll" not in body["reply"].lower()


def test_an_invoice_sent_in_a_later_message_is_filed_to_the_conversations_claim():
    conv = conversation()
    first = client_for("alice").post(f"/api/v1/conversations/{conv.id}/messages/", {"text": OVER},
                                     content_type="application/json").json()
    run = drive(Run.objects.get(id=int(first["run_id"])))
    assert run.status == "awaiting_approval"  # 900 a night: over the limit, the claim is still a draft
    claim = ExpenseClaim.objects.get(tenant=run.tenant)
    assert not claim.invoices.exists()
    later = api_post(conv, "Here is the hotel invoice")
    assert later.status_code == 201, later.content
    body = later.json()
    assert body["reply"] == ("I've filed the invoice “hotel.pdf” with your expense claim (lodging in Beijing, "
                             "2 nights from 2026-11-16, 1,800 yuan (900 yuan a night)).")
    assert body["run_id"] == first["run_id"]
    [invoice] = claim.invoices.all()
    assert invoice.filename == "hotel.pdf" and invoice.checksum == hashlib.sha256(PDF).hexdigest()
    assert Message.objects.filter(conversation=conv, role="user", attachment_name="hotel.pdf").count() == 1
    again = api_post(conv, "Here it is again").json()  # the same file twice is filed once
    assert "already filed" in again["reply"] and claim.invoices.count() == 1
    assert Invoice.objects.count() == 1  # nothing staged and left behind


def test_a_later_invoice_in_chinese_is_told_in_chinese():
    conv = conversation()
    first = client_for("alice").post(f"/api/v1/conversations/{conv.id}/messages/", {"text": OVER},
                                     content_type="application/json").json()
    drive(Run.objects.get(id=int(first["run_id"])))
    body = api_post(conv, "这是酒店发票", name="fapiao.png", content=b"\x89PNG\r\n\x1a\n" + b"\0" * 64).json()
    assert body["reply"].startswith("已把发票“fapiao.png”归入报销单（北京住宿，2026-11-16起2晚，共1,800元")


def test_a_later_invoice_for_a_claim_already_submitted_is_refused_in_the_chat_and_not_kept():
    conv = conversation()
    first = client_for("alice").post(f"/api/v1/conversations/{conv.id}/messages/", {"text": CLAIM},
                                     content_type="application/json").json()
    run = drive(Run.objects.get(id=int(first["run_id"])))
    assert run.status == "completed"  # within the limit: submitted
    body = api_post(conv, "Here is the hotel invoice").json()
    assert body["reply"].startswith("I couldn't file the invoice with the claim (lodging in Beijing")
    assert "only while the claim is a draft" in body["reply"]
    assert not Invoice.objects.exists()


def test_an_invoice_on_the_messages_api_with_no_claim_in_the_conversation_is_refused():
    conv = conversation()
    response = api_post(conv, "Here is the hotel invoice")
    assert response.status_code == 400 and response.json()["code"] == "invoice_without_claim"
    assert nothing_written(conv)
