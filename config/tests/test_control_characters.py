"""No control character in any text a request carries (issue 30, defect 3): NUL, the other
C0 controls but tab, line feed and carriage return, DEL and the C1 controls, in a JSON
string or key at any depth, a form or multipart field, a file name or a query parameter,
are a 400 naming the field — never a 500 (PostgreSQL's text and jsonb refuse NUL)."""
from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from timeline.models import Conversation
from workflows.models import Run

PROBLEM = "application/problem+json"
REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"


def api(username: str) -> Client:
    response = Client().post("/api/v1/auth/token/", {"username": username, "password": "keel-demo"},
                             content_type="application/json")
    assert response.status_code == 200, response.content
    return Client(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")


def refused(response, field: str) -> dict:
    assert response.status_code == 400, (response.status_code, response.content[:400])
    assert response["Content-Type"] == PROBLEM
    problem = response.json()
    assert problem["code"] == "control_character", problem
    assert field in problem["errors"] and problem["detail"].startswith("Invalid request."), problem
    assert f"{field}: " in problem["detail"] if field != "non_field_errors" else True, problem
    return problem


def test_a_nul_in_a_list_filter_is_a_400_naming_it(demo):
    problem = refused(api("alice").get("/api/v1/expenses/claims/?status=%00"), "status")
    assert "U+0000" in problem["detail"]


@pytest.mark.parametrize("query, field", [("status=pending%01", "status"), ("x%00=1", "x\x00"),
                                          ("status=%C2%85", "status"), ("status=%7F", "status")])
def test_a_control_character_in_any_query_parameter_is_a_400(demo, query, field):
    refused(api("alice").get(f"/api/v1/approvals/?{query}"), field)


@pytest.mark.parametrize("where", ["group_name", "request", "template_code"])
def test_a_nul_in_a_runs_params_is_a_400_naming_the_field_and_starts_nothing(demo, where):
    params = {"request": REQUEST, "group_name": "Sales East", where: "Sales\x00East"}
    before = (Run.objects.count(), Conversation.objects.count())
    response = api("alice").post("/api/v1/runs/", {"blueprint": "payroll_group_setup", "params": params},
                                 content_type="application/json")
    refused(response, f"params.{where}")
    assert (Run.objects.count(), Conversation.objects.count()) == before


def test_keys_and_strings_at_any_depth_are_checked(demo):
    alice = api("alice")
    deep = {"title": "ok", "extra": {"list": ["fine", {"inner": "bad\x1b[31m"}]}}
    refused(alice.post("/api/v1/conversations/", deep, content_type="application/json"), "extra.list.1.inner")
    refused(alice.post("/api/v1/conversations/", {"title": "ok", "k\x00": 1}, content_type="application/json"),
            "non_field_errors")
    refused(alice.post("/api/v1/conversations/", {"title": "C1 \u009b here"}, content_type="application/json"),
            "title")


def test_tab_line_feed_and_carriage_return_are_text(demo):
    response = api("alice").post("/api/v1/conversations/", {"title": "two\tcolumns\r\nand lines"},
                                 content_type="application/json")
    assert response.status_code == 201, response.content


def test_a_control_character_in_a_multipart_field_is_a_400(demo):
    # (A file name's control characters Django drops itself, as it parses the form.)
    alice = api("alice")
    conversation = alice.post("/api/v1/conversations/", {}, content_type="application/json").json()["id"]
    refused(alice.post(f"/api/v1/conversations/{conversation}/messages/", {"text": "hello\x00"}), "text")
    refused(alice.post(f"/api/v1/conversations/{conversation}/messages/", {"text": "hello", "note\x01": "x"}),
            "note\x01")


def test_a_control_character_in_a_page_form_is_the_400_page(demo):
    client = Client()
    response = client.post("/login/", {"username": "alice\x00", "password": "keel-demo"})
    assert response.status_code == 400 and response["Content-Type"].startswith("text/html")
    assert "username" in response.content.decode() and "U+0000" in response.content.decode()


def test_a_control_character_in_a_page_multipart_form_is_the_400_page(demo):
    from tests.helpers import membership

    client = Client()
    client.force_login(membership("alice").user)
    claim = json.loads(api("alice").post(
        "/api/v1/expenses/claims/", {"category": "lodging", "city": "Beijing", "start_date": "2026-11-16",
                                     "nights": 2, "amount": "1400"},
        content_type="application/json", HTTP_IDEMPOTENCY_KEY="c1").content)["application_id"]
    response = client.post(f"/expenses/claims/{claim}/invoice/",
                           {"form_key": "k\x00", "file": SimpleUploadedFile("h.pdf", b"%PDF-1.4\n%%EOF\n")})
    assert response.status_code == 400 and "form_key" in response.content.decode()
