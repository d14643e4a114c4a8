"""The chat message path: the request answers once the reply and the run's first
records are committed, together; a worker plans the run after. A lost planning message is
recovered by the sweep, a second one changes nothing, and a turn that fails before its
commit leaves no run behind."""
from datetime import timedelta
from unittest import mock

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.memory import ledger_sync
from agents.models import LedgerEntry, Message
from agents.orchestrator import message_post
from timeline.models import Event
from timeline.services import conversation_create
from workflows.dispatch import PLAN_RUN
from workflows.models import Node, Plan, Run
from workflows.services import run_plan
from workflows.tasks import sweep
from tests.helpers import drive, membership, no_broker
from tests.demo import demo_ensure

pytestmark = pytest.mark.django_db

COMPLETE = "set up a monthly payroll group for our Shanghai sales team with commission"


@pytest.fixture(autouse=True)
def production(monkeypatch, settings):
    monkeypatch.setenv("KEEL_LLM", "builtin")
    settings.EMBEDDED = False  # planning goes to a worker, as in production
    demo_ensure()


def say(text=COMPLETE):
    alice = membership("alice")
    conv = conversation_create(tenant_id=alice.tenant_id, user_id=alice.user_id)
    return conv, message_post(membership=alice, conversation_id=conv.id, text=text)


def plans_sent(sent) -> list[int]:
    return [c.kwargs["args"][0] for c in sent.call_args_list if c.args[0] == PLAN_RUN]


def test_the_reply_and_the_run_commit_together_and_a_worker_plans_the_run(django_capture_on_commit_callbacks):
    with no_broker() as sent, django_capture_on_commit_callbacks(execute=True):
        conv, result = say()
    run = Run.objects.get(id=int(result["run_id"]))
    assert result["reply"].startswith("I've started setting up “Shanghai Sales” with the template")
    reply = Message.objects.get(conversation=conv, role="assistant")
    assert reply.run_id == run.id and reply.text == result["reply"]
    assert LedgerEntry.objects.filter(run=run, milestone="run:started").exists()
    # Not planned in the request: the plan is the worker's, asked for once the commit is done.
    assert not Node.objects.filter(run=run).exists() and plans_sent(sent) == [run.id]

    with no_broker():
        assert run_plan(run.id) is True
        assert run_plan(run.id) is False  # a redelivered message changes nothing
    assert Plan.objects.filter(run=run).count() == 1
    assert Event.objects.filter(run_id=run.id, type="run.started").count() == 1
    assert drive(run).status == "awaiting_approval"


def test_a_turn_that_fails_before_its_commit_leaves_no_run_and_no_plan_request(django_capture_on_commit_callbacks):
    with no_broker() as sent, django_capture_on_commit_callbacks(execute=True), \
            mock.patch("agents.orchestrator.activity_close", side_effect=RuntimeError("the process died")), \
            pytest.raises(RuntimeError):
        say()
    assert not Run.objects.exists() and not Message.objects.filter(role="assistant").exists()
    assert plans_sent(sent) == []


def test_the_sweep_plans_a_run_whose_planning_message_was_lost():
    with no_broker():
        _, result = say()  # the commit hook never runs here: the message is "lost"
        run = Run.objects.get(id=int(result["run_id"]))
        Run.objects.filter(id=run.id).update(created_at=run.created_at - timedelta(minutes=5))
        with mock.patch("workflows.tasks.plan_run.delay") as delay:
            assert sweep()["unplanned"] == 1
        delay.assert_called_once_with(run.id)


def test_the_ledger_catches_up_in_a_constant_number_of_statements():
    with no_broker():
        conv, result = say()
        run_plan(int(result["run_id"]))  # the worker's part
        drive(Run.objects.get(id=int(result["run_id"])))
        with CaptureQueriesContext(connection) as first:
            ledger_sync(conversation_id=conv.id)
        entries = LedgerEntry.objects.filter(conversation=conv).count()
        with CaptureQueriesContext(connection) as again:
            ledger_sync(conversation_id=conv.id)
    assert entries >= 3 and LedgerEntry.objects.filter(conversation=conv).count() == entries  # once per milestone
    assert len(first.captured_queries) <= 3 and len(again.captured_queries) <= 3


@pytest.mark.django_db(transaction=True)
def test_a_turns_frames_are_recorded_as_it_goes_and_its_membership_read_once(client):
    """The turn's frames (the model call, the intent, the route) are written as the turn
    reaches them, each by itself (one statement on PostgreSQL, no BEGIN/COMMIT around it),
    not inside the reply's transaction; the request reads the caller's membership once
    (the language middleware's read serves the view)."""
    from agents import orchestrator, turn_context
    from timeline import model_frames
    from timeline.models import Frame

    seen = []

    def recording(real):
        def record(**kwargs):
            seen.append((kwargs["kind"], connection.in_atomic_block))
            return real(**kwargs)
        return record

    client.force_login(membership("alice").user)
    conv = client.post("/api/v1/conversations/", {}, content_type="application/json").json()["id"]
    with no_broker(), CaptureQueriesContext(connection) as queries, \
            mock.patch.object(orchestrator, "frame_record", recording(orchestrator.frame_record)), \
            mock.patch.object(turn_context, "frame_record", recording(turn_context.frame_record)), \
            mock.patch.object(model_frames, "frame_record", recording(model_frames.frame_record)):
        response = client.post(f"/api/v1/conversations/{conv}/messages/", {"text": COMPLETE},
                               content_type="application/json")
    assert response.status_code == 201 and response.json()["run_id"]
    alone = [kind for kind, in_transaction in seen if not in_transaction]
    assert {"model_call", "intent", "route"} <= set(alone), seen
    recorded = Frame.objects.filter(activity_id=int(response.json()["activity_id"]))
    assert {"model_call", "intent", "route"} <= set(recorded.values_list("kind", flat=True))
    assert sum("tenants_membership" in q["sql"] for q in queries.captured_queries) == 1


def test_a_conversation_keeps_its_first_goal_and_its_first_title():
    from agents.memory import narrative_context
    from timeline.models import Conversation

    with no_broker():
        conv, first = say("please set up a new payroll group")  # where? it asks
        second = message_post(membership=membership("alice"), conversation_id=conv.id, text="Guangzhou, paid monthly")
    assert first["run_id"] is None and second["run_id"]
    assert "Goal: please set up a new payroll group" in narrative_context(conversation_id=conv.id)
    assert Conversation.objects.get(id=conv.id).title == "please set up a new payroll group"
