import json

import pytest
from django.test import Client

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo", "builtin_llm")]


def logged_in(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password="keel-demo")
    return client


def post(client: Client, body: dict):
    return client.post("/api/v1/policy/answers/", json.dumps(body), content_type="application/json")


def test_it_answers_alice_with_750_and_the_complete_citation():
    response = post(logged_in("alice"), {"question": "Beijing lodging", "date": "2026-09-14", "topic": "travel",
                                         "lang": "en"})
    assert response.status_code == 200
    body = response.json()
    assert body["state"] == "ANSWERED" and body["model_calls"] == 1
    assert body["path"] == ["RETRIEVED", "VERIFIED", "DECIDED", "COMPOSED", "ANSWERED"]
    assert body["answer"]["amount"] == "750" and body["answer"]["unit"] == "yuan per room per night"
    assert [c["line"] for c in body["answer"]["citation"]] == [1, 2, 3]


def test_it_stops_at_the_cap_of_2():
    body = post(logged_in("alice"), {"question": "Beijing lodging", "date": "2026-09-14", "topic": "travel",
                                     "lang": "en", "max_transitions": 2}).json()
    assert (body["state"], body["path"], body["model_calls"]) == ("STOPPED", ["RETRIEVED", "VERIFIED"], 0)


def test_it_answers_oscar_from_his_own_tenants_empty_corpus():
    body = post(logged_in("oscar"), {"question": "Beijing lodging", "date": "2026-09-14", "topic": "travel",
                                     "lang": "en"}).json()
    assert (body["state"], body["reason"], body["model_calls"]) == ("ABSTAINED", "insufficient_evidence", 0)


@pytest.mark.parametrize("body, field", [
    ({"date": "2026-09-14", "topic": "travel", "lang": "en"}, "question"),
    ({"question": "Beijing lodging", "date": "14/09/2026", "topic": "travel", "lang": "en"}, "date"),
    ({"question": "Beijing lodging", "date": "2026-09-14", "topic": "travel", "lang": "fr"}, "lang"),
    ({"question": "Beijing lodging", "date": "2026-09-14", "topic": "travel", "lang": "en", "max_transitions": 0},
     "max_transitions"),
])
def test_it_refuses_bad_input_with_400_and_the_field(body, field):
    response = post(logged_in("alice"), body)
    assert response.status_code == 400
    assert field in response.json()["detail"] and field in response.json()["errors"]


def test_it_refuses_anonymous_callers():
    assert post(Client(), {"question": "x", "date": "2026-09-14", "topic": "travel", "lang": "en"}).status_code in (401, 403)


def test_it_is_in_the_openapi_schema():
    schema = logged_in("dora").get("/api/schema/", HTTP_ACCEPT="application/json").json()
    operation = schema["paths"]["/api/v1/policy/answers/"]["post"]
    assert "requestBody" in operation and "200" in operation["responses"]
