"""Incident reproduction: export a completed run's model calls, replay them with the
scripted backend, and get the same routes, tool calls and transitions."""
import json

import pytest
from django.core.management import call_command

from agents.orchestrator import message_post
from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from llm import scripted_reset
from payroll.models import PayrollGroup
from timeline.models import Activity
from timeline.services import conversation_create
from workflows.blueprints import blueprint_get
from workflows.executor import node_execute
from workflows.models import Node, Run, ToolCall, Transition
from workflows.tests.helpers import membership, no_broker

pytestmark = pytest.mark.django_db

ORDER = [n["key"] for n in blueprint_get("payroll_group_setup")["nodes"]]


@pytest.fixture(autouse=True)
def demo(monkeypatch):
    monkeypatch.setenv("KEEL_LLM", "builtin")
    call_command("seed_demo", verbosity=0)
    with no_broker():
        yield
    scripted_reset()


def drive_in_order(conv):
    """Like workers, but ready nodes run in plan order, so that parallel branches
    interleave the same way in the recording and in the replay."""
    for _ in range(100):
        ready = sorted(Node.objects.filter(run__conversation=conv, status="ready", retired_in__isnull=True),
                       key=lambda n: (n.run.created_at, ORDER.index(n.key)))
        if not ready:
            return
        next_id = node_execute(ready[0].id)
        while next_id:
            next_id = node_execute(next_id)


def play(turns, approvals):
    alice = membership("alice")
    conv = conversation_create(tenant_id=alice.tenant_id, user_id=alice.user_id)
    decisions = list(approvals)
    for text in turns:
        message_post(membership=alice, conversation_id=conv.id, text=text)
        drive_in_order(conv)
        for approval in ApprovalRequest.objects.filter(run__conversation=conv, status="pending"):
            decision = decisions.pop(0)
            approval_decide(membership=membership(decision["decided_by"]), approval_id=approval.id,
                            verdict=decision["verdict"])
            drive_in_order(conv)
    return conv


def trace(conv):
    routes = list(Activity.objects.filter(conversation=conv, kind="message").order_by("started_at")
                  .values_list("intent", "route"))
    tools = list(ToolCall.objects.filter(run__conversation=conv).order_by("started_at").values_list("tool", "status"))
    transitions = [(t.node.key if t.node else "run", t.from_status, t.to_status)
                   for t in Transition.objects.filter(run__conversation=conv).select_related("node")
                   .order_by("at", "id")]
    return routes, tools, _promotions_in_plan_order(transitions)


def _promotions_in_plan_order(transitions):
    """Nodes promoted pending → ready in one scheduler pass have no order among them (the
    engine walks them by their random ids): put each such batch in plan order."""
    out, batch = [], []
    for t in transitions + [None]:
        if t is not None and t[1:] == ("pending", "ready"):
            batch.append(t)
            continue
        out += sorted(batch, key=lambda b: ORDER.index(b[0]))
        batch = []
        if t is not None:
            out.append(t)
    return out


def test_an_exported_run_replays_to_the_same_routes_tool_calls_and_transitions(tmp_path, monkeypatch):
    turns = ["please set up a payroll group for sales with commission", "thanks!",
             "What is the Beijing lodging limit in 2026?"]
    recorded = play(turns, [{"verdict": "approved", "decided_by": "bob"}])
    run = Run.objects.get(conversation=recorded)
    assert run.status == "completed"
    path = tmp_path / "replay.json"
    call_command("export_script", str(run.id), output=str(path))
    script = json.loads(path.read_text())
    purposes = [c["purpose"] for c in script["calls"]]
    # No "react" since issue 11: one template fits "sales with commission", so it plans at once.
    assert purposes == ["intent", "requirements", "intent", "chat", "intent", "decide"]
    assert [t["text"] for t in script["turns"]] == turns
    assert script["approvals"] == [{"node": "import", "verdict": "approved", "decided_by": "bob", "comment": ""}]

    # Reproduce from the state the incident started in: without the group it created.
    PayrollGroup.objects.filter(tenant=run.tenant, name=run.params["group_name"]).delete()
    monkeypatch.setenv("KEEL_LLM", "scripted")
    monkeypatch.setenv("KEEL_LLM_SCRIPT", str(path))
    scripted_reset()
    replayed = play([t["text"] for t in script["turns"]], script["approvals"])
    assert trace(replayed) == trace(recorded)
    assert Run.objects.get(conversation=replayed).status == "completed"
    routes, _, transitions = trace(replayed)
    assert routes[0] == ("resolve", "plan") and ("import", "awaiting_approval", "ready") in transitions


def test_a_replay_that_needs_more_calls_than_recorded_stops_like_a_timeout(tmp_path, monkeypatch):
    path = tmp_path / "short.json"
    path.write_text(json.dumps({"responses": ["chat"]}))
    monkeypatch.setenv("KEEL_LLM", "scripted")
    monkeypatch.setenv("KEEL_LLM_SCRIPT", str(path))
    scripted_reset()
    alice = membership("alice")
    conv = conversation_create(tenant_id=alice.tenant_id, user_id=alice.user_id)
    result = message_post(membership=alice, conversation_id=conv.id, text="hi")
    assert Activity.objects.get(id=int(result["activity_id"])).route == "stopped"
