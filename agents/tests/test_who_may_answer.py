"""A run's question is its starter's to answer, at every door: another member's answer is a 403
on the API and a plain sentence in the chat (in the reader's language), and the run still waits
for its starter. Changing the run is the starter's too; cancelling and retrying also an approver's
or a tenant admin's."""
import pytest
from rest_framework.test import APIClient

from agents.orchestrator import message_post
from approvals.models import ApprovalRequest
from console.selectors import run_panel
from timeline.services import conversation_create
from workflows.models import Node, Run
from tests.helpers import drive, membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]
ASKS = "Set up a monthly payroll group for our Hangzhou team"  # no Hangzhou template: it asks which one


def api(username: str) -> APIClient:
    client = APIClient()
    client.force_authenticate(membership(username).user)
    return client


def say(conv, username: str, text: str) -> dict:
    return message_post(membership=membership(username), conversation_id=conv.id, text=text)


def asking(username: str = "bob"):
    m = membership(username)
    conv = conversation_create(tenant_id=m.tenant_id, user_id=m.user_id)
    run = drive(Run.objects.get(id=int(say(conv, username, ASKS)["run_id"])))
    assert run.status == "awaiting_input", run.status_reason
    return conv, run


def still_asking(run) -> None:
    run.refresh_from_db()
    node = Node.objects.get(run=run, status="awaiting_input", retired_in__isnull=True)
    assert run.status == "awaiting_input" and node.question and "answer" not in node.arguments


def test_another_members_answer_is_a_403_and_the_starters_is_taken():
    _, run = asking("bob")
    refused = api("alice").post(f"/api/v1/runs/{run.id}/input/", {"answer": "Q1 by alice"}, format="json")
    assert refused.status_code == 403
    assert refused.json()["code"] == "not_allowed" and refused.json()["act"] == "answer"
    assert refused.json()["detail"] == "Only Bob Li, who started this run, may answer its question."
    still_asking(run)
    option = Node.objects.get(run=run, status="awaiting_input").question["options"][0]["answer"]
    assert api("bob").post(f"/api/v1/runs/{run.id}/input/", {"answer": option}, format="json").status_code == 200


def test_an_approver_may_not_answer_the_starters_question_but_may_cancel_the_run():
    _, run = asking("alice")
    assert api("bob").post(f"/api/v1/runs/{run.id}/input/", {"answer": "anything"}, format="json").status_code == 403
    still_asking(run)
    assert api("bob").post(f"/api/v1/runs/{run.id}/cancel/", {"reason": "stale"}, format="json").status_code == 200


def test_in_the_chat_another_members_pick_is_refused_with_a_plain_sentence():
    conv, run = asking("bob")
    reply = say(conv, "alice", "the first one")
    assert reply["reply"] == ("This question is for Bob Li, who started the run; only they can answer it. For "
                              "something of your own, start a new request.")
    still_asking(run)
    chinese = say(conv, "alice", "第一个")
    assert "Bob Li" in chinese["reply"] and "只有" in chinese["reply"] and "only they" not in chinese["reply"]
    still_asking(run)
    # The run's own starter answers in the same conversation.
    assert say(conv, "bob", "the first one")["run_id"] == str(run.id)
    run.refresh_from_db()
    assert run.status != "awaiting_input"


def test_in_the_chat_another_members_cancel_and_rename_are_refused_alike():
    conv, run = asking("bob")
    cancel = say(conv, "alice", "cancel")
    assert cancel["reply"] == "Only Bob Li, who started this run, an approver or a tenant admin may cancel it."
    rename = say(conv, "alice", "actually, call it Alice's Group")
    assert "Alice's Group" not in Run.objects.get(id=run.id).params.get("group_name", "")
    assert rename["reply"] in ("Only Bob Li, who started this run, may change it.", cancel["reply"]) or \
        "only they can answer it" in rename["reply"]
    still_asking(run)
    assert not ApprovalRequest.objects.filter(run=run).exists()


def test_the_run_panel_offers_the_answer_form_to_the_starter_only():
    _, run = asking("bob")
    assert run_panel(membership("bob"), run).can_answer
    assert not run_panel(membership("alice"), run).can_answer
