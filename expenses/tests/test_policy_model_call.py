"""The policy check's one model call goes through the engine's tool_model_call: it is
capped and counted on the run, and it is a frame of the check step, with its tokens and
cost, on the developer timeline."""
from decimal import Decimal

import pytest
from django.test import Client

import llm
from llm import ModelResult
from timeline.models import Frame
from workflows.models import Node, Run
from workflows.services import run_start
from tests.helpers import drive, membership

pytestmark = pytest.mark.django_db
OVER = {"category": "lodging", "city": "Beijing", "start_date": "2026-11-16", "nights": 2, "amount": "1800"}


class PricedBackend:
    """A paid model's answer: the graph's one decision, with real-looking usage and cost."""
    name = "priced"

    def complete(self, messages, *, purpose, tools, choices, max_tokens, stream, on_delta, response_format=None):
        assert purpose == "decide" and choices and max_tokens == 16  # the walk's options reach the model
        return ModelResult(text="use_evidence", provider="priced", model="priced-1", input_tokens=211,
                           output_tokens=3, cost=Decimal("0.00042"), latency_ms=12, prompt=messages)


@pytest.fixture(autouse=True)
def _priced_model(demo, monkeypatch):
    """The demo, no broker, and every model call answered by PricedBackend."""
    monkeypatch.setattr(llm, "backend_get", lambda: PricedBackend())


def client_for(username):
    from django.contrib.auth.models import User

    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def test_the_policy_decision_is_a_counted_frame_of_the_check_step_on_the_developer_timeline():
    run = drive(run_start(membership=membership("alice"), blueprint="expense_claim", params=OVER))
    assert run.status == "awaiting_approval"  # 900 a night, over travel-v2's 750
    check = Node.objects.get(run=run, key="check")
    frame = Frame.objects.get(activity_id=check.activity_id, kind="model_call")
    assert frame.name == "model: decide"
    assert (frame.gen_ai_usage_input_tokens, frame.gen_ai_usage_output_tokens) == (211, 3)
    assert frame.cost == Decimal("0.00042")
    assert Run.objects.get(id=run.id).model_calls == 1  # counted under the run's model-call cap
    assert frame.activity.cost == Decimal("0.00042")  # rolled up: the run page's and metrics' totals

    html = client_for("dora").get(f"/conversations/{run.conversation_id}/timeline/?view=developer"
                                  "&kind=model_call").content.decode()
    assert 'data-frame-kind="model_call"' in html and "model call: <code>decide</code>" in html
    assert "211/3" in html  # the frame's tokens, in/out


def test_the_run_model_call_cap_stops_the_check_instead_of_calling_past_it():
    run = run_start(membership=membership("alice"), blueprint="expense_claim", params=OVER)
    Run.objects.filter(id=run.id).update(model_call_cap=0)
    run = drive(run)
    check = Node.objects.get(run=run, key="check")
    assert check.status == "failed" and "model-call cap" in check.status_reason
    assert not Frame.objects.filter(activity_id=check.activity_id, kind="model_call").exists()
