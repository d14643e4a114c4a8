"""The schema tells the truth: what it documents as valid the API
accepts, what it documents as invalid the API refuses — for blank-allowed strings
(spectacular's `oneOf`), list filters, maxLength and control characters. The schema
fuzz (tests/integration/test_schema_fuzz.py) checks the same against a live server."""
from __future__ import annotations

import jsonschema
import pytest
from django.test import Client

PROBLEM = "application/problem+json"


def api(username: str) -> Client:
    response = Client().post("/api/v1/auth/token/", {"username": username, "password": "keel-demo"},
                             content_type="application/json")
    assert response.status_code == 200, response.content
    return Client(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")


@pytest.fixture
def schema(demo) -> dict:
    response = api("ada").get("/api/schema/?format=json", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    return response.json()


def query_parameter(schema: dict, path: str, name: str) -> dict:
    parameters = schema["paths"][path]["get"].get("parameters", [])
    found = [p["schema"] for p in parameters if p["in"] == "query" and p["name"] == name]
    assert found, f"{path} documents no query parameter {name}"
    return found[0]


def test_a_blank_allowed_string_takes_the_empty_string_as_the_api_does(schema):
    title = schema["components"]["schemas"]["ConversationCreateInput"]["properties"]["title"]
    jsonschema.validate("", title)  # `oneOf` matched "" twice and refused it
    jsonschema.validate("Quarterly close", title)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate("a\x00b", title)
    response = api("alice").post("/api/v1/conversations/", {"title": ""}, content_type="application/json")
    assert response.status_code == 201


def test_no_request_schema_keeps_a_one_of_that_matches_a_string_twice(schema):
    def one_ofs(node):
        if isinstance(node, dict):
            if "oneOf" in node:
                yield node["oneOf"]
            for value in node.values():
                yield from one_ofs(value)
        elif isinstance(node, list):
            for value in node:
                yield from one_ofs(value)

    blank = {"type": "string", "maxLength": 0}
    assert not [options for options in one_ofs(schema) if blank in options]


@pytest.mark.parametrize("path, value", [("/api/v1/expenses/claims/", "submitted"), ("/api/v1/approvals/", "pending")])
def test_a_list_filter_is_documented_with_its_blank_and_refuses_the_unknown(schema, path, value):
    status = query_parameter(schema, path, "status")
    assert value in status["enum"] and "" in status["enum"]
    alice = api("alice")
    assert alice.get(f"{path}?status=").status_code == 200
    assert alice.get(f"{path}?status={value}").status_code == 200
    refused = alice.get(f"{path}?status=bogus")
    assert refused.status_code == 400 and refused["Content-Type"] == PROBLEM


def test_every_free_text_query_parameter_says_it_takes_no_control_character(schema):
    for path, item in schema["paths"].items():
        for operation in item.values():
            for parameter in operation.get("parameters", []) if isinstance(operation, dict) else []:
                spec = parameter["schema"]
                if parameter["in"] == "query" and spec.get("type") == "string" and "enum" not in spec \
                        and "format" not in spec:
                    with pytest.raises(jsonschema.ValidationError):
                        jsonschema.validate("a\x00", spec)


def test_max_length_counts_what_was_sent_as_the_schema_says(demo):
    padded = " " * 10 + "x" * 200  # the title's maxLength is 200; DRF trimmed, then measured: accepted
    response = api("alice").post("/api/v1/conversations/", {"title": padded}, content_type="application/json")
    assert response.status_code == 400 and "title" in response.json()["errors"], response.content


def test_the_schema_is_valid_openapi_3_0_for_a_strict_client_generator(tmp_path):
    from django.core.management import call_command

    # drf-spectacular's --validate checks the document against the OpenAPI 3.0 meta-schema and
    # raises on the first keyword 3.0 does not have (propertyNames, a 3.1 keyword, did).
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yml"))
    assert (tmp_path / "schema.yml").read_text().startswith("openapi: 3.0")


def test_an_allowance_name_longer_than_the_schema_says_is_a_400_naming_it(demo):
    employee = {"employee_no": "E1", "base_salary": "10000", "allowances": {"x" * 101: "100"}}
    response = api("alice").post("/api/v1/payroll/trial/", {"city": "shanghai", "employees": [employee]},
                                 content_type="application/json")
    assert response.status_code == 400 and "100" in response.content.decode(), response.content
