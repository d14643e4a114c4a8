import json

import pytest
from django.core.management import call_command
from django.test import Client

from tenants.models import Membership, Tenant

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def logged_in(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password="keel-demo")
    return client


def token_for(username: str) -> str:
    response = Client().post("/api/v1/auth/token/", {"username": username, "password": "keel-demo"},
                             content_type="application/json")
    assert response.status_code == 200
    return response.json()["token"]


def test_it_shows_alice_her_tenant_and_its_members():
    page = logged_in("alice").get("/").content.decode()
    assert "Demo Manufacturing Co." in page
    for name in ("Alice Chen", "Bob Li", "Dora Wang", "Ada Zhao"):
        assert name in page
    assert "Oscar" not in page


def test_it_shows_oscar_none_of_demos_members():
    page = logged_in("oscar").get("/").content.decode()
    assert "Other Trading Ltd." in page
    assert "Alice" not in page and "Bob Li" not in page


def test_it_sends_anonymous_visitors_to_the_login_page():
    response = Client().get("/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_it_refuses_a_wrong_password_with_a_clear_message():
    client = Client()
    response = client.post("/login/", {"username": "alice", "password": "wrong"})
    assert response.status_code == 400
    assert "do not match" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_it_issues_a_token_and_answers_who_i_am():
    token = token_for("bob")
    me = Client().get("/api/v1/me/", HTTP_AUTHORIZATION=f"Token {token}").json()
    assert me == {"username": "bob", "role": "approver", "tenant": "demo", "tenant_name": "Demo Manufacturing Co."}


def test_it_refuses_a_token_for_a_wrong_password():
    response = Client().post("/api/v1/auth/token/", {"username": "alice", "password": "nope"},
                             content_type="application/json")
    assert response.status_code == 400
    assert "Unable to log in" in json.dumps(response.json())


def test_it_answers_malformed_json_with_400_and_a_reason():
    response = Client().post("/api/v1/auth/token/", "{not json", content_type="application/json")
    assert response.status_code == 400
    assert "JSON parse error" in response.json()["detail"]


def test_it_answers_oscar_404_for_a_demo_member_by_api():
    alice_member = Membership.objects.get(user__username="alice")
    oscar = Client(HTTP_AUTHORIZATION=f"Token {token_for('oscar')}")
    response = oscar.get(f"/api/v1/members/{alice_member.id}/")
    assert response.status_code == 404
    assert response.json()["detail"] == "No such member."
    # The same id answers alice's own tenant.
    alice = Client(HTTP_AUTHORIZATION=f"Token {token_for('alice')}")
    assert alice.get(f"/api/v1/members/{alice_member.id}/").json()["username"] == "alice"


def test_it_lists_only_the_callers_tenant_members():
    oscar = Client(HTTP_AUTHORIZATION=f"Token {token_for('oscar')}")
    assert [m["username"] for m in oscar.get("/api/v1/members/").json()["results"]] == ["oscar"]


def test_it_answers_unknown_urls_with_404_in_json_or_html():
    api = Client().get("/api/v1/no-such-thing/")
    assert api.status_code == 404 and api.json()["code"] == "not_found"
    page = logged_in("alice").get("/no-such-page/")
    assert page.status_code == 404 and "Not found" in page.content.decode()


def test_it_refuses_the_api_without_credentials():
    assert Client().get("/api/v1/members/").status_code in (401, 403)


def test_seed_demo_is_idempotent():
    call_command("seed_demo", verbosity=0)
    assert Tenant.objects.count() == 2
    assert Membership.objects.count() == 5
    assert Membership.objects.get(user__username="ada").role == "admin"


def test_it_publishes_the_openapi_schema():
    response = logged_in("dora").get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    assert "/api/v1/auth/token/" in paths and "/api/v1/members/{member_id}/" in paths
