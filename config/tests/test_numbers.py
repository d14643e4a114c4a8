"""Only ASCII digits are numbers: Python's int() and Decimal() read
any Unicode digit, so "١٢" (Arabic-Indic) was accepted as 12 for nights, amounts and
max_matches. A number in a request is a JSON number, or, in a query string or a form,
text of ASCII digits; anything else is a 400 naming the field."""
from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import Client

from expenses.models import ExpenseClaim
from hr.models import Tan
from tests.helpers import membership

PROBLEM = "application/problem+json"
CLAIM = {"category": "lodging", "city": "Beijing", "start_date": "2026-11-16", "nights": 2, "amount": "1400"}
TAN = {"title": "Fuzz Analyst", "location": "Beijing", "skills": ["sql"], "seniority": 2}


def api(username: str) -> Client:
    response = Client().post("/api/v1/auth/token/", {"username": username, "password": "keel-demo"},
                             content_type="application/json")
    assert response.status_code == 200, response.content
    return Client(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")


def claim_post(client: Client, key: str, **fields):
    return client.post("/api/v1/expenses/claims/", {**CLAIM, **fields}, content_type="application/json",
                       HTTP_IDEMPOTENCY_KEY=key)


def assert_refused(response, field: str) -> None:
    assert response.status_code == 400, (response.status_code, response.content[:300])
    assert response["Content-Type"] == PROBLEM
    problem = response.json()
    assert field in problem["detail"] or field in problem.get("errors", {}), problem


@pytest.mark.parametrize("value, expected", [("12", 12), (" 7 ", 7), ("-3", -3), (5, 5), (2.0, 2)])
def test_strict_int_reads_ascii_digits_and_json_numbers(value, expected):
    from config.api import strict_int

    assert strict_int(value) == expected


@pytest.mark.parametrize("value", ["١٢", "１２", "²", "1_000", "1e3", "", "0x1f", True, 2.5, None, "12a"])
def test_strict_int_refuses_every_other_digit_and_spelling(value):
    from config.api import strict_int

    with pytest.raises(ValueError):
        strict_int(value)


@pytest.mark.parametrize("value", ["١٤٠٠", "１４００", "1e3", "1_000", "NaN", "Infinity", "1.2.3"])
def test_strict_decimal_refuses_what_decimal_reads_but_no_person_writes(value):
    from config.api import strict_decimal

    with pytest.raises(ValueError):
        strict_decimal(value)
    assert strict_decimal("1400.50") == Decimal("1400.50") and strict_decimal(".5") == Decimal("0.5")


@pytest.mark.parametrize("nights", ["١٢", "2", "٢", True])
def test_the_claims_api_takes_nights_as_a_json_number_only(demo, nights):
    assert_refused(claim_post(api("alice"), "n1", nights=nights), "nights")
    assert not ExpenseClaim.objects.exists()


def test_the_claims_api_refuses_an_amount_in_other_digits(demo):
    alice = api("alice")
    assert_refused(claim_post(alice, "a1", amount="١٤٠٠"), "amount")
    assert_refused(claim_post(alice, "a2", amount="１４００"), "amount")
    assert not ExpenseClaim.objects.exists()
    response = claim_post(alice, "a3", amount="1,400.00")
    assert response.status_code == 201, response.content


def test_the_claim_page_refuses_nights_in_other_digits(demo):
    client = Client()
    client.force_login(membership("alice").user)
    form = {**CLAIM, "form_key": "p1", "nights": "٢", "currency": "CNY"}
    page = client.post("/expenses/", form, follow=True).content.decode()
    assert not ExpenseClaim.objects.exists() and "nights" in page


@pytest.mark.parametrize("max_matches", ["١٢", "12", "٥"])
def test_the_tans_api_takes_max_matches_as_a_json_number_only(demo, max_matches):
    before = Tan.objects.count()
    assert_refused(api("ada").post("/api/v1/hr/tans/", {**TAN, "max_matches": max_matches},
                                   content_type="application/json"), "max_matches")
    assert Tan.objects.count() == before


def test_the_tan_service_refuses_max_matches_in_other_digits(demo):
    from config.api import DomainError
    from hr.services import tan_create
    from tenants.actors import Actor

    with pytest.raises(DomainError) as refused:
        tan_create(actor=Actor.of_member(membership("ada")), title="Analyst", location="Beijing", skills="sql",
                   seniority=2, max_matches="١٢")
    assert refused.value.code == "invalid_max_matches"


@pytest.mark.parametrize("query", ["limit=١٢", "limit=１２", "limit=1_0"])
def test_a_numeric_list_filter_in_other_digits_is_a_400(demo, query):
    assert_refused(api("alice").get(f"/api/v1/runs/?{query}"), "limit")


def test_a_numeric_list_filter_in_ascii_digits_is_read(demo):
    response = api("alice").get("/api/v1/runs/?limit=12")
    assert response.status_code == 200, response.content


@pytest.mark.parametrize("path, field", [("/api/v1/metrics/?days=١٢", "days"),
                                         ("/api/v1/conversations/{conversation}/events/?after=١٢", "after")])
def test_other_numeric_query_parameters_refuse_other_digits(demo, path, field):
    alice = api("alice")
    conversation = alice.post("/api/v1/conversations/", {}, content_type="application/json").json()["id"]
    response = api("ada").get(path.format(conversation=conversation)) if "metrics" in path else \
        alice.get(path.format(conversation=conversation))
    assert response.status_code == 400 and f"`{field}`" in response.json()["detail"], response.content


def test_the_policy_api_takes_max_transitions_as_a_json_number_only(demo):
    response = api("alice").post("/api/v1/policy/answers/", {
        "question": "hotel limit in Beijing?", "date": "2026-11-16", "topic": "travel", "lang": "en",
        "max_transitions": "٨"}, content_type="application/json")
    assert_refused(response, "max_transitions")
