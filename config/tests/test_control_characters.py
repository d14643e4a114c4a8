"""No control character in any text a request carries: NUL, the other
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


# --- Lone surrogates: a legal JSON escape, no character ------------------------------------

LONE = "\\ud800"  # as a JSON text writes it: json.dumps cannot make one from a str


def post_json_text(client: Client, path: str, text: str):
    return client.post(path, text.encode(), content_type="application/json")


@pytest.mark.parametrize("body, field", [
    ('{"blueprint": "payroll_group_setup", "params": {"group_name": "Sales %s"}}' % LONE, "params.group_name"),
    ('{"blueprint": "payroll_group_setup", "params": {"k%s": "v"}}' % LONE, "params"),
])
def test_a_lone_surrogate_in_runs_params_is_a_400_naming_the_field_and_starts_nothing(demo, body, field):
    before = Run.objects.count()
    problem = refused(post_json_text(api("alice"), "/api/v1/runs/", body), field)
    assert "U+D800" in problem["detail"] and Run.objects.count() == before


def test_a_lone_surrogate_in_the_trial_is_a_400_naming_the_field(demo):
    body = '{"city": "shanghai%s", "base_salary": "10000"}' % LONE
    refused(post_json_text(api("alice"), "/api/v1/payroll/trial/", body), "city")


def test_a_surrogate_pair_is_one_character_and_text(demo):
    response = post_json_text(api("alice"), "/api/v1/conversations/", '{"title": "a \\ud83d\\ude00 b"}')
    assert response.status_code == 201, response.content


def strings_and_keys_lone(schema: dict, node: dict, depth: int = 0):
    """A body for a request schema with a lone surrogate in each string it documents (and in
    a key of each object), so that whichever field the operation reads first holds one."""
    node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]] if "$ref" in node else node
    for option in node.get("allOf", []) + node.get("anyOf", []) + node.get("oneOf", []):
        return strings_and_keys_lone(schema, option, depth)
    if node.get("type") == "object" or "properties" in node:
        body = {name: strings_and_keys_lone(schema, prop, depth + 1) for name, prop in node.get("properties", {}).items()}
        return {**body, f"key{LONE}": f"x{LONE}"}
    if node.get("type") == "array":
        return [strings_and_keys_lone(schema, node.get("items", {}), depth + 1)]
    return f"x{LONE}"


def test_a_lone_surrogate_in_every_json_operation_of_the_schema_is_a_4xx_problem_never_a_500(demo):
    ada = api("ada")
    schema = ada.get("/api/schema/?format=json", HTTP_ACCEPT="application/json").json()
    tried = 0
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            content = operation.get("requestBody", {}).get("content", {})
            if "application/json" not in content:
                continue
            body = strings_and_keys_lone(schema, content["application/json"].get("schema", {"type": "object"}))
            text = json.dumps(body).replace("\\\\ud800", "\\ud800")  # the escape, not its backslash
            url = path.replace("{", "").replace("}", "")  # an id nobody has: "id", "run_id"…
            url = "/".join("1" if part.endswith("id") and "{" + part + "}" in path else part for part in url.split("/"))
            response = ada.generic(method.upper(), url, text.encode(), content_type="application/json",
                                   HTTP_IDEMPOTENCY_KEY="lone-surrogate")
            tried += 1
            assert 400 <= response.status_code < 500, (method, path, response.status_code, response.content[:300])
            assert response["Content-Type"] == PROBLEM, (method, path)
    assert tried >= 15  # the schema documents 19 JSON operations now


@pytest.mark.parametrize("key", ["claim\x01one", "claim\x7f", "claim\u00e9"])
def test_an_idempotency_key_with_a_control_character_or_past_ascii_is_a_400_and_files_nothing(demo, key):
    from expenses.models import ExpenseClaim

    response = api("alice").post("/api/v1/expenses/claims/", {
        "category": "lodging", "city": "Beijing", "start_date": "2026-11-16", "nights": 2, "amount": "1400"},
        content_type="application/json", HTTP_IDEMPOTENCY_KEY=key)
    assert response.status_code == 400 and response.json()["code"] == "idempotency_key_invalid", response.content
    assert not ExpenseClaim.objects.exists()
