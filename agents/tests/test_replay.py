"""Incident reproduction: export a completed run's model calls, replay them with the
scripted backend, and get the same routes, tool calls and transitions — a payroll run,
an expense claim filed in the chat (its policy decision is a model call of a step), and a
candidate-matching run started by an event instead of a message."""
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
from workflows.blueprints import Door, blueprint_get
from workflows.executor import steps_execute
from workflows.models import Node, Run, ToolCall, Transition
from workflows.services import run_start
from tests.helpers import RUNNABLE, membership, plan_unplanned

pytestmark = pytest.mark.django_db



def plan_position(blueprint: str, key: str) -> int:
    keys = [n["key"] for n in blueprint_get(blueprint)["nodes"]]
    return keys.index(key) if key in keys else len(keys)


@pytest.fixture(autouse=True)
def _scripted_model_reset(demo, builtin_llm):
    """The demo, no broker, the builtin model; afterwards every script rewinds to its first response."""
    yield
    scripted_reset()


def drive_in_order(conv):
    """Like workers, but ready nodes run in plan order, so that parallel branches
    interleave the same way in the recording and in the replay."""
    for _ in range(100):
        plan_unplanned(Run.objects.filter(conversation=conv))
        ready = sorted(Node.objects.filter(RUNNABLE, run__conversation=conv, retired_in__isnull=True),
                       key=lambda n: (n.run.created_at, plan_position(n.run.blueprint, n.key)))
        if not ready:
            return
        steps_execute(ready[0].id)


def play(turns, approvals):
    alice = membership("alice")
    conv = conversation_create(tenant_id=alice.tenant_id, user_id=alice.user_id)
    decisions = list(approvals)
    for text in turns:
        message_post(membership=alice, conversation_id=conv.id, text=text)
        drive_in_order(conv)
        for approval in ApprovalRequest.objects.filter(run__conversation=conv, status="pending"):
            if not decisions:
                break  # a diverged replay asks for a decision the recording never needed
            decision = decisions.pop(0)
            approval_decide(membership=membership(decision["decided_by"]), approval_id=approval.id,
                            verdict=decision["verdict"])
            drive_in_order(conv)
    return conv


def trace(conv, blueprint="payroll_group_setup"):
    routes = list(Activity.objects.filter(conversation=conv, kind="message").order_by("started_at")
                  .values_list("intent", "route"))
    tools = list(ToolCall.objects.filter(run__conversation=conv).order_by("started_at").values_list("tool", "status"))
    transitions = [(t.node.key if t.node else "run", t.from_status, t.to_status)
                   for t in Transition.objects.filter(run__conversation=conv).select_related("node")
                   .order_by("at", "id")]
    return routes, tools, _promotions_in_plan_order(transitions, blueprint)


def _promotions_in_plan_order(transitions, blueprint):
    """Nodes promoted pending → ready in one scheduler pass have no order among them (the
    engine walks them by their random ids): put each such batch in plan order."""
    out, batch = [], []
    for t in transitions + [None]:
        if t is not None and t[1:] == ("pending", "ready"):
            batch.append(t)
            continue
        out += sorted(batch, key=lambda b: plan_position(blueprint, b[0]))
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
    # No "react": one template fits "sales with commission", so it plans at once.
    # No "requirements": the run decides on the requirements the conversation
    # understood (params["requirements"], with what is met and not), never a second reading.
    assert purposes == ["intent", "intent", "chat", "intent", "decide"], purposes
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


def replay_with(path, monkeypatch):
    monkeypatch.setenv("KEEL_LLM", "scripted")
    monkeypatch.setenv("KEEL_LLM_SCRIPT", str(path))
    scripted_reset()


def test_an_expense_claim_filed_in_the_chat_replays_with_its_policy_decision(tmp_path, monkeypatch):
    from expenses.models import ExpenseClaim

    turns = ["Please file an expense claim: lodging in Beijing, 2 nights from 2026-11-16, 1,800 yuan in total"]
    recorded = play(turns, [{"verdict": "approved", "decided_by": "bob"}])
    run = Run.objects.get(conversation=recorded)
    assert run.blueprint == "expense_claim" and run.status == "completed", run.status_reason
    path = tmp_path / "claim.json"
    call_command("export_script", str(run.id), output=str(path))
    script = json.loads(path.read_text())
    # The check step's decision is recorded like any model call, on the run's conversation.
    assert [(c["purpose"], c["node"]) for c in script["calls"]] == [("intent", None), ("decide", "check")]
    assert script["responses"][1] == "use_evidence"
    assert script["approvals"] == [{"node": "submit", "verdict": "approved", "decided_by": "bob", "comment": ""}]
    first = ExpenseClaim.objects.get(tenant=run.tenant)

    replay_with(path, monkeypatch)
    replayed = play([t["text"] for t in script["turns"]], script["approvals"])
    assert trace(replayed, "expense_claim") == trace(recorded, "expense_claim")
    again = ExpenseClaim.objects.exclude(id=first.id).get(tenant=run.tenant)
    assert (again.status, again.policy_verdict, str(again.policy_limit)) == ("submitted", "over_limit", "750.00")
    routes, tools, _ = trace(replayed, "expense_claim")
    assert routes[0][1] == "expense_claim" and ("check_claim_policy", "succeeded") in tools


def test_a_replay_whose_policy_decision_differs_takes_another_route(tmp_path, monkeypatch):
    """The replay really is driven by the script: an "abstain" where the recording said
    "use_evidence" leaves the claim without a cited limit (still for an approver)."""
    turns = ["Please file an expense claim: lodging in Beijing, 2 nights from 2026-11-16, 1,400 yuan in total"]
    recorded = play(turns, [])
    run = Run.objects.get(conversation=recorded)
    assert run.status == "completed" and not ApprovalRequest.objects.filter(run=run).exists()
    path = tmp_path / "claim.json"
    call_command("export_script", str(run.id), output=str(path))
    script = json.loads(path.read_text())
    script["responses"][1] = "abstain"
    path.write_text(json.dumps(script))
    replay_with(path, monkeypatch)
    replayed = play([t["text"] for t in script["turns"]], [])
    assert trace(replayed, "expense_claim") != trace(recorded, "expense_claim")
    assert ApprovalRequest.objects.filter(run__conversation=replayed, status="pending").exists()


def test_an_event_started_matching_run_replays_from_its_trigger(tmp_path, monkeypatch):
    from hr.models import Match, OutboxEvent, Tan
    from hr.services import Actor, matches_withdraw, tan_approve
    from hr.supervisor import tan_event_consume

    ada = membership("ada")
    tan = Tan.objects.get(title="Data Analyst")
    tan_approve(actor=Actor(tenant_id=ada.tenant_id, user_id=ada.user_id, role=ada.role), tan_id=tan.id)
    run = Run.objects.get(id=tan_event_consume(OutboxEvent.objects.get(tan=tan).id))
    drive_in_order(run.conversation)
    run.refresh_from_db()
    assert run.status == "completed", run.status_reason
    matched = list(Match.objects.filter(tan=tan).values_list("candidate__name", "rank", "score"))
    path = tmp_path / "matching.json"
    call_command("export_script", str(run.id), output=str(path))
    script = json.loads(path.read_text())
    # No message started it and no model was asked: the trigger and the params say how to start it again.
    assert script["turns"] == [] and script["responses"] == [] and script["calls"] == []
    assert script["trigger"] == {"event": str(OutboxEvent.objects.get(tan=tan).id), "type": "hr.tan.approved",
                                 "tan": str(tan.id)}
    assert script["blueprint"] == "candidate_matching" and script["started_by"] == "ada"
    assert script["params"]["tan_id"] == str(tan.id)

    # The state the run started from: the TAN approved, no matches yet.
    matches_withdraw(actor=Actor(tenant_id=ada.tenant_id, user_id=None, role=None), tan_id=tan.id, run_id=run.id)
    assert not Match.objects.filter(tan=tan).exists()
    replay_with(path, monkeypatch)  # an empty script: any model call would stop the replay
    again = run_start(membership=membership(script["started_by"]), blueprint=script["blueprint"],
                      params=script["params"], door=Door.REPLAY)  # a recorded start, enacted again
    drive_in_order(again.conversation)
    again.refresh_from_db()
    assert again.status == "completed", again.status_reason
    assert trace(again.conversation, "candidate_matching") == trace(run.conversation, "candidate_matching")
    assert list(Match.objects.filter(tan=tan).values_list("candidate__name", "rank", "score")) == matched
    assert set(Match.objects.filter(tan=tan).values_list("run_id", flat=True)) == {again.id}
