"""POST /api/v1/conversations/{id}/messages/: the contract, tenant scoping, and bad
input answered with a clear 4xx that changes nothing."""
import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from agents.models import Message
from timeline.models import Activity, Event, Frame
from workflows.models import Run


pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]

COMPLETE = "set up a monthly payroll group for our Shanghai sales team with commission"


def client(username="alice") -> APIClient:
    api = APIClient()
    api.force_authenticate(User.objects.get(username=username))
    return api


def new_conversation(api) -> str:
    response = api.post("/api/v1/conversations/", {"title": "t"}, format="json")
    assert response.status_code == 201
    return response.json()["id"]


def counts():
    return (Message.objects.count(), Activity.objects.count(), Event.objects.count(), Frame.objects.count(),
            Run.objects.count())


def test_it_answers_with_the_contract_and_ids_as_strings():
    api = client()
    conv = new_conversation(api)
    response = api.post(f"/api/v1/conversations/{conv}/messages/", {"text": COMPLETE}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"activity_id", "intent", "understood", "reply", "run_id"}
    assert body["intent"] == body["understood"] == "resolve" and isinstance(body["activity_id"], str) and isinstance(body["run_id"], str)
    chat = api.post(f"/api/v1/conversations/{conv}/messages/", {"text": "hi"}, format="json").json()
    assert chat["intent"] == "chat" and chat["run_id"] is None
    history = api.get(f"/api/v1/conversations/{conv}/messages/").json()
    assert [(m["role"], m["text"]) for m in history][0] == ("user", COMPLETE) and len(history) == 4


def test_a_multipart_message_carries_the_attachment():
    api = client()
    conv = new_conversation(api)
    upload = SimpleUploadedFile("team.csv", b"employee_no\nD-0001\nD-0002\n", content_type="text/csv")
    response = api.post(f"/api/v1/conversations/{conv}/messages/", {"text": COMPLETE, "attachment": upload},
                        format="multipart")
    assert response.status_code == 201, response.json()
    assert Run.objects.get(id=int(response.json()["run_id"])).params["employee_ids"]
    received = Event.objects.get(conversation_id=int(conv), type="message.received").data
    assert received["attachment"] == {"name": "team.csv", "rows": 2}


def test_another_tenants_conversation_and_an_unknown_one_answer_404():
    conv = new_conversation(client("alice"))
    before = counts()
    assert client("oscar").post(f"/api/v1/conversations/{conv}/messages/", {"text": "hi"},
                                format="json").status_code == 404
    assert client("oscar").get(f"/api/v1/conversations/{conv}/messages/").status_code == 404
    assert client("alice").post("/api/v1/conversations/12345/messages/", {"text": "hi"},
                                format="json").status_code == 404
    assert counts() == before


@pytest.mark.parametrize("name, data, code, words", [
    ("empty text", {"text": "   "}, "text_empty", "empty"),
    ("no text", {}, "invalid", "text"),
    ("oversized text", {"text": "x" * 4001}, "text_too_long", "4000"),
])
def test_bad_text_is_refused_and_changes_nothing(name, data, code, words):
    api = client()
    conv = new_conversation(api)
    before = counts()
    response = api.post(f"/api/v1/conversations/{conv}/messages/", data, format="json")
    assert response.status_code == 400 and response.json()["code"] == code and words in response.json()["detail"]
    assert counts() == before


@pytest.mark.parametrize("filename, content, code, words", [
    ("team.txt", b"employee_no\nD-0001\n", "attachment_type", "CSV or XLSX"),
    ("team.pdf", b"%PDF-1.4 employee_no", "invoice_without_claim", "expense claim only"),  # an invoice needs a claim
    ("team.xlsx", b"employee_no\nD-0001\n", "attachment_type", "not an XLSX"),
    ("team.csv", b"PK\x03\x04binary", "attachment_type", "workbook"),
    ("team.csv", b"employee_no\n" + b"D-0001\n" * 200_000, "attachment_too_large", "larger than"),
    ("team.csv", b"employee_no,name\nD-0001,\nD-0002,a,b,c\n", "attachment_malformed", "Line 3"),
    ("team.csv", b"employee_no\nD-0001\nD-9999\n", "attachment_unknown_employee", "Line 3"),
    ("team.csv", b"id,salary\n1,2\n", "attachment_header", "Line 1"),
    ("team.csv", b"employee_no\nD-0001\n\"unterminated\n", "attachment_malformed", "Line"),
    ("team.csv", b"employee_no\n\xff\xfe\n", "attachment_encoding", "Line 2"),
    ("team.csv", b"", "attachment_empty", "empty"),
])
def test_a_bad_attachment_is_refused_with_the_reason_and_changes_nothing(filename, content, code, words):
    api = client()
    conv = new_conversation(api)
    before = counts()
    upload = SimpleUploadedFile(filename, content)
    response = api.post(f"/api/v1/conversations/{conv}/messages/", {"text": COMPLETE, "attachment": upload},
                        format="multipart")
    assert response.status_code == 400, response.json()
    assert response.json()["code"] == code and words in response.json()["detail"], response.json()
    assert counts() == before


def test_another_tenants_employees_are_not_found_in_a_list():
    api = client("oscar")
    conv = new_conversation(api)
    upload = SimpleUploadedFile("team.csv", b"employee_no\nD-0001\n")
    response = api.post(f"/api/v1/conversations/{conv}/messages/", {"text": COMPLETE, "attachment": upload},
                        format="multipart")
    assert response.status_code == 400 and "Line 2" in response.json()["detail"]


def test_every_conversation_endpoint_is_in_the_openapi_schema():
    schema = client().get("/api/schema/?format=json").json()
    paths = schema["paths"]
    for path in ["/api/v1/conversations/", "/api/v1/conversations/{conversation_id}/messages/",
                 "/api/v1/conversations/{conversation_id}/events/", "/api/v1/policy/answers/",
                 "/api/v1/runs/", "/api/v1/runs/{run_id}/", "/api/v1/runs/{run_id}/input/"]:
        assert path in paths, path
    post = paths["/api/v1/conversations/{conversation_id}/messages/"]["post"]
    assert {"application/json", "multipart/form-data"} <= set(post["requestBody"]["content"])
    assert "201" in post["responses"] and "400" in post["responses"]
