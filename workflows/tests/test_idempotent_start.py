"""`POST runs/` and `POST conversations/{id}/messages/` with an Idempotency-Key: a client
that retries after a lost answer gets the first answer and no second run or turn."""
import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from agents.models import Message
from workflows.models import Run

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]

REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"
START = {"blueprint": "payroll_group_setup", "params": {"request": REQUEST, "group_name": "Retried Sales"}}


def api(username: str = "alice") -> APIClient:
    client = APIClient()
    client.force_authenticate(User.objects.get(username=username))
    return client


def start(client: APIClient, key: str | None, body: dict = START):
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
    return client.post("/api/v1/runs/", body, format="json", **headers)


def test_a_retried_start_answers_the_first_run_and_starts_one():
    alice = api()
    first = start(alice, "start-1")
    again = start(alice, "start-1")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and again.headers["Idempotency-Replayed"] == "true"
    assert Run.objects.filter(params__group_name="Retried Sales").count() == 1


def test_the_same_key_for_another_request_is_refused_and_starts_nothing():
    alice = api()
    assert start(alice, "start-2").status_code == 201
    other = start(alice, "start-2", {**START, "params": {**START["params"], "group_name": "Other Sales"}})
    assert other.status_code == 422 and other.json()["code"] == "idempotency_key_reused"
    assert not Run.objects.filter(params__group_name="Other Sales").exists()


def test_without_a_key_each_request_starts_a_run_and_a_blank_key_is_refused():
    alice = api()
    assert start(alice, None).status_code == start(alice, None).status_code == 201
    assert Run.objects.filter(params__group_name="Retried Sales").count() == 2
    blank = start(alice, "  ")
    assert blank.status_code == 400 and blank.json()["code"] == "idempotency_key_required"
    assert Run.objects.filter(params__group_name="Retried Sales").count() == 2


def test_a_refused_start_leaves_its_key_free_for_the_retry():
    alices = api().post("/api/v1/conversations/", {"title": "t"}, format="json").json()["id"]
    refused = start(api("oscar"), "start-3", {**START, "conversation": alices})  # another tenant's conversation
    assert refused.status_code == 404
    assert start(api(), "start-3").status_code == 201


def test_a_retried_message_answers_the_first_reply_and_posts_one_turn():
    alice = api()
    conversation = alice.post("/api/v1/conversations/", {"title": "t"}, format="json").json()["id"]
    url = f"/api/v1/conversations/{conversation}/messages/"
    first = alice.post(url, {"text": REQUEST}, format="json", HTTP_IDEMPOTENCY_KEY="message-1")
    again = alice.post(url, {"text": REQUEST}, format="json", HTTP_IDEMPOTENCY_KEY="message-1")
    assert first.status_code == again.status_code == 201 and again.json() == first.json()
    assert Message.objects.filter(conversation_id=conversation, role="user").count() == 1
    assert Run.objects.filter(conversation_id=conversation).count() == 1
    changed = alice.post(url, {"text": "cancel"}, format="json", HTTP_IDEMPOTENCY_KEY="message-1")
    assert changed.status_code == 422
    assert Message.objects.filter(conversation_id=conversation, role="user").count() == 1
