"""ReAct exploration: allowed steps only, the iteration cap, read-only tools, and a
scratchpad that is run state (gone once the exploration ends)."""
import json

import pytest

from agents.models import Exploration
from agents.orchestrator import message_post
from payroll.conversation.exploration import ITERATION_CAP, step_parse
from llm import scripted_reset
from payroll.records.services import configuration_checksum
from timeline.models import Activity, Frame
from timeline.services import conversation_create
from workflows.models import Run
from tests.helpers import membership

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _scripted_model_reset(demo, builtin_llm):
    """The demo, no broker, the builtin model; afterwards every script rewinds to its first response."""
    yield
    scripted_reset()


def scripted(monkeypatch, tmp_path, responses):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"responses": responses}))
    scripted_reset()
    monkeypatch.setenv("KEEL_LLM", "scripted")
    monkeypatch.setenv("KEEL_LLM_SCRIPT", str(path))


def say(text):
    alice = membership("alice")
    conv = conversation_create(tenant_id=alice.tenant_id, user_id=alice.user_id)
    return conv, message_post(membership=alice, conversation_id=conv.id, text=text)


@pytest.mark.parametrize("text, action", [
    ('{"thought": "look", "action": "list_groups", "input": {}}', "list_groups"),
    ("count_employees", "count_employees"),
    ('"finish"', "finish"),
    ('{"action": "import_template", "input": {"template_id": "1"}}', None),  # not a read-only step
    ("delete everything", None),
    ("{broken", None),
])
def test_only_the_listed_steps_are_accepted(text, action):
    step = step_parse(text)
    assert (step["action"] if step else None) == action


def test_the_iteration_cap_returns_control_to_the_user(monkeypatch, tmp_path):
    before = configuration_checksum(tenant_id=membership("alice").tenant_id)
    step = json.dumps({"thought": "look again", "action": "list_groups", "input": {}})
    scripted(monkeypatch, tmp_path, ["resolve"] + [step] * ITERATION_CAP)
    conv, result = say("please set up a new payroll group")
    assert result["run_id"] is None and "which city or region" in result["reply"]
    assert Frame.objects.filter(activity_id=int(result["activity_id"]), kind="observation").count() == ITERATION_CAP
    assert Exploration.objects.get(conversation=conv).iterations == ITERATION_CAP
    assert configuration_checksum(tenant_id=membership("alice").tenant_id) == before


def test_a_forbidden_step_is_refused_and_the_rules_choose(monkeypatch, tmp_path):
    scripted(monkeypatch, tmp_path, ["resolve", json.dumps({"thought": "just import it",
                                                            "action": "import_template", "input": {}})])
    conv, result = say("please set up a new payroll group")
    actions = Frame.objects.filter(activity_id=int(result["activity_id"]), kind="action").order_by("started_at")
    assert "the rules chose" in actions[0].summary and actions[0].payload.data["action"] == "list_templates"
    assert not Run.objects.exists()


def test_a_finish_the_program_does_not_accept_asks_the_user(monkeypatch, tmp_path):
    scripted(monkeypatch, tmp_path, ["resolve", json.dumps({"thought": "done", "action": "finish"})])
    conv, result = say("please set up a new payroll group")
    assert result["run_id"] is None and Activity.objects.get(id=int(result["activity_id"])).route == "explore"
    assert "which city or region" in result["reply"]


def test_the_scratchpad_is_gone_once_the_exploration_ends():
    alice = membership("alice")
    conv = conversation_create(tenant_id=alice.tenant_id, user_id=alice.user_id)
    message_post(membership=alice, conversation_id=conv.id, text="please set up a new payroll group")
    assert Exploration.objects.filter(conversation=conv).exists()
    result = message_post(membership=alice, conversation_id=conv.id, text="Guangzhou, monthly")
    assert result["run_id"] and not Exploration.objects.filter(conversation=conv).exists()
