"""The conversation on the `openai` backend against a loopback OpenAI-protocol server
(tests/fake_openai.py): structured output for intent and requirements, tool calling for
ReAct and configuration questions, streamed replies, one repair then a recorded fallback."""
import json

import pytest

from agents.orchestrator import message_post
from payroll.reading.matching import template_decide
from payroll.models import PayrollTemplate
from tests.fake_openai import FakeOpenAI
from timeline.models import Event, Frame
from timeline.services import conversation_create
from workflows.models import Run
from tests.helpers import drive, membership, no_broker
from tests.demo import demo_ensure

pytestmark = pytest.mark.django_db

REQUEST = "hey can u set up pay for the hangzhou engineering folks? monthly pls, call it HZ Eng"
REQUIREMENTS = {"region": None, "city": "Hangzhou", "pay_frequency": "monthly", "population": "engineering",
                "items_named": [], "group_name": "HZ Eng", "name_stated": True, "headcount": None, "legacy": False}


@pytest.fixture
def server(monkeypatch):
    fake = FakeOpenAI.start()
    monkeypatch.setenv("KEEL_LLM", "openai")
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    monkeypatch.setenv("KEEL_LLM_MODEL", "fake-model")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    demo_ensure()
    with no_broker():
        yield fake
    fake.stop()


def say(text, conv=None, username="alice"):
    m = membership(username)
    conv = conv or conversation_create(tenant_id=m.tenant_id, user_id=m.user_id, title="")
    return conv, message_post(membership=m, conversation_id=conv.id, text=text)


def frames(result, kind=None):
    qs = Frame.objects.filter(activity_id=int(result["activity_id"])).order_by("started_at", "id")
    return list(qs.filter(kind=kind) if kind else qs)


def test_a_payroll_request_goes_intent_requirements_template_run_on_the_model(server):
    server.script("intent", [json.dumps({"signal": "resolve", "reason": "asks to set up pay"})])
    server.script("requirements", [json.dumps(REQUIREMENTS)])
    _, result = say(REQUEST)
    assert result["intent"] == "resolve" and result["run_id"], result
    # structured output was asked for, with the strict schema, for both
    for key in ("intent", "requirements"):
        body = server.seen(key)[0]["body"]
        assert body["response_format"]["type"] == "json_schema"
        assert body["response_format"]["json_schema"]["strict"] is True
    run = Run.objects.get(id=int(result["run_id"]))
    assert run.params["group_name"] == "HZ Eng" and run.params["requirements"]["region"] == "CN-Hangzhou"
    # the one decision function: what the conversation told, the run does
    decision = template_decide(run.params["requirements"], PayrollTemplate.objects.prefetch_related("items"))
    run = drive(run)
    interpret = run.nodes.get(key="interpret")
    assert interpret.status == "completed"
    match = run.nodes.get(key="match")
    if decision.kind == "clear":
        assert decision.chosen.name in result["reply"]
        assert run.status == "awaiting_approval"
        assert match.output["template_name"] == decision.chosen.name
    else:
        assert run.status == "awaiting_input" and match.status == "awaiting_input"
    assert not [f for f in frames(result, "validation") if "fallback" in f.name]
    assert len(server.seen("requirements")) == 1  # the run read no second time


def test_malformed_json_is_repaired_once_then_the_rules_take_over_and_say_so(server):
    server.script("intent", ["resolve, I think", json.dumps({"signal": "resolve", "reason": "set-up request"})])
    server.script("requirements", ["{not json", json.dumps({"region": "CN-SH"})])  # bad, then incomplete
    _, result = say("set up a monthly payroll group for our Shanghai sales team with commission")
    assert result["intent"] == "resolve" and result["run_id"]
    validations = {f.name: f for f in frames(result, "validation")}
    repaired = validations["intent: repaired"]
    assert "not JSON" in repaired.summary
    fallback = validations["requirements: fallback to rules"]
    assert fallback.status == "error" and "invalid 2 times" in fallback.summary and "rules" in fallback.summary
    assert len(server.seen("intent")) == 2 and len(server.seen("requirements")) == 2
    repair_prompt = server.seen("requirements")[1]["body"]["messages"][-1]["content"]
    assert "does not match the required JSON schema" in repair_prompt
    run = Run.objects.get(id=int(result["run_id"]))
    assert run.params["requirements"]["population"] == "sales"  # the rules' reading, recorded as such
    assert "commission" in run.params["requirements"]["items_named"]


def test_a_configuration_question_is_answered_through_a_tool_call_and_streams(server):
    server.chunk = 3
    server.script("intent", [json.dumps({"signal": "analyze", "reason": "asks which groups exist"})])
    server.script("tools", [{"content": "I'll look at the groups.",
                             "tool_calls": [{"name": "list_groups", "arguments": {}}]}])
    server.script("tool_result", ["You have these payroll groups, as the records show."])
    _, result = say("which payroll groups do we have?")
    assert result["intent"] == "analyze" and result["reply"] == "You have these payroll groups, as the records show."
    offered = {t["function"]["name"] for t in server.seen("tools")[0]["body"]["tools"]}
    assert offered == {"list_templates", "list_groups", "count_employees"}
    answer_request = server.seen("tool_result")[0]["body"]
    assert answer_request["stream"] is True
    tool_message = answer_request["messages"][-1]
    assert tool_message["role"] == "tool" and "groups" in tool_message["content"]
    action = frames(result, "action")[0]
    assert action.name == "action: list_groups" and action.payload.data["chosen_by"] == "model"
    deltas = Event.objects.filter(type="message.delta", data__activity=result["activity_id"]).order_by("seq")
    assert deltas.count() >= 2
    assert "".join(e.data["text"] for e in deltas) == result["reply"]


def test_a_tool_call_outside_the_read_only_tools_is_refused_and_the_rules_choose(server):
    server.script("intent", [json.dumps({"signal": "analyze", "reason": "a question"})])
    server.script("tools", [{"content": "", "tool_calls": [{"name": "import_template", "arguments": {}}]}])
    _, result = say("how many employees do we have by department?")
    fallback = next(f for f in frames(result, "validation"))
    assert fallback.name == "tool call: fallback to rules"
    assert frames(result, "action")[0].name == "action: count_employees"
    assert "employees by department" in result["reply"]


def test_react_exploration_calls_the_registry_tools_as_functions(server):
    server.script("intent", [json.dumps({"signal": "resolve", "reason": "set-up request"})])
    server.script("requirements", [json.dumps({**REQUIREMENTS, "city": None, "population": None,
                                               "group_name": "Crew", "pay_frequency": None})])
    server.script("tools", [{"content": "Look at the catalog first.",
                             "tool_calls": [{"name": "list_templates", "arguments": {"region": None}}]},
                            {"content": "", "tool_calls": [{"name": "ask_user", "arguments": {}}]}])
    _, result = say("set up payroll for our crew, call it Crew")
    assert result["run_id"] is None and "city or region" in result["reply"]
    offered = {t["function"]["name"] for t in server.seen("tools")[0]["body"]["tools"]}
    assert {"list_templates", "ask_user", "finish"} <= offered
    actions = [f.name for f in frames(result, "action")]
    assert actions[:2] == ["action: list_templates", "action: ask_user"]
    thought = frames(result, "thought")[0]
    assert thought.payload.data["tool_calls"][0]["name"] == "list_templates"
