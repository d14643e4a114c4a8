"""A replay of every recorded run in the test suite is identical. Each
kind of run the suite records — a group setup from a message with an attachment, one whose
verification failed and was replanned with the next-best template, one whose acceptance
failed and was replanned by the rules, a rejection with replan, a person's direct import,
a whole-tenant restore, an expense claim filed in the chat, a candidate matching started by
an event — is replayed, and every replay is identical. (A replay of a run recorded before a
code change that alters a route reports the difference: test_run_replay.py.)"""
import json

import pytest
from django.apps import apps
from rest_framework.test import APIClient

from agents.models import ReplayResult
from agents.orchestrator import message_post
from agents.replay import replay_run
from approvals.models import ApprovalRequest, ApprovalRule
from approvals.services import approval_decide
from hr.models import OutboxEvent, Tan
from hr.services import Actor, tan_approve
from hr.supervisor import tan_event_consume
from llm import backend_scoped
from llm.replay import ReplayBackend
from payroll.records import services as payroll_services
from payroll.models import PayrollTemplate
from tests.payroll import actor_for
from tenants.models import Membership, Role, Tenant
from timeline.services import conversation_create
from workflows.models import Run
from workflows.services import node_input_answer, run_start
from tests.helpers import drive, membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]
REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"


def decide(run, verdict="approved", who="bob", **kwargs):
    for approval in ApprovalRequest.objects.filter(run=run, status="pending"):
        approval_decide(membership=membership(who), approval_id=approval.id, verdict=verdict, **kwargs)
    return drive(run)


def setup_run(group_name, **params):
    return drive(run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                           params={"request": REQUEST, "group_name": group_name, **params}))


def every_kind_of_run(monkeypatch) -> dict[str, Run]:
    alice = membership("alice")
    runs = {}
    # From a message with an attachment: interpret, match, snapshot, import, verify, assign.
    conv = conversation_create(tenant_id=alice.tenant_id, user_id=alice.user_id, title="t")
    started = message_post(membership=alice, conversation_id=conv.id, text=REQUEST,
                           attachment=("team.csv", b"employee_no\nD-0001\nD-0003\n"))
    runs["from a message"] = decide(drive(Run.objects.get(id=int(started["run_id"]))))
    # A verification that failed: undone, then the next-best template (and its own approval).
    monkeypatch.setenv("KEEL_FAULTS", "verify_import.item_unseen#Verify Replan+cn-sales-commission=on")
    runs["failed verification"] = decide(decide(setup_run("Verify Replan")))
    # An acceptance that failed (the model's requirements broke their schema), and a rejection with replan.
    bad = {"region": "Shanghai, China", "pay_frequency": "monthly", "items_named": [], "missing": []}
    with backend_scoped(ReplayBackend([json.dumps(bad)])):
        run = setup_run("Rules Replan")
    runs["failed acceptance, rejected"] = decide(run, "rejected", replan=True)
    # A step that waits for an answer (the name is taken), then the user's answer and the approval.
    waiting = setup_run(runs["from a message"].params["group_name"])
    assert waiting.status == "awaiting_input"
    node_input_answer(membership=alice, run_id=waiting.id, answer="Another Name")
    runs["asked for a name"] = decide(drive(waiting))
    # A person's direct import over the approval matrix's limits: a run with a second person.
    ApprovalRule.objects.filter(tool="import_template").update(limits={"headcount": "0"})
    template = PayrollTemplate.objects.get(code="cn-sh-monthly-salaried", version=1)
    client = APIClient()
    client.force_authenticate(membership("bob").user)
    response = client.post("/api/v1/payroll/groups/", {"template_id": str(template.id), "name": "By Hand"},
                           format="json", HTTP_IDEMPOTENCY_KEY="direct-1")
    assert response.status_code == 202, response.json()
    runs["direct import"] = decide(drive(Run.objects.get(id=int(response.json()["run_id"]))), who="ada")
    # A whole-tenant restore, approved by a second person.
    snapshot = payroll_services.snapshot_create(actor=actor_for("bob"), label="before", idempotency_key="s1")
    receipt = payroll_services.snapshot_restore(actor=actor_for("ada"), idempotency_key="r1",
                                                snapshot_id=int(snapshot.body["snapshot_id"]))
    runs["tenant restore"] = decide(drive(Run.objects.get(id=int(receipt.body["run_id"]))))
    # An expense claim filed in the chat (its policy decision is a model call of a step).
    conv = conversation_create(tenant_id=alice.tenant_id, user_id=alice.user_id, title="claim")
    started = message_post(membership=alice, conversation_id=conv.id, text=(
        "Please file an expense claim: lodging in Beijing, 2 nights from 2026-11-16, 1,800 yuan in total"))
    runs["expense claim"] = decide(drive(Run.objects.get(conversation=conv)))
    # A candidate matching started by an event (a TAN approved), not by a message.
    ada = membership("ada")
    tan = Tan.objects.get(title="Data Analyst")
    tan_approve(actor=Actor(tenant_id=ada.tenant_id, user_id=ada.user_id, role=ada.role), tan_id=tan.id)
    runs["candidate matching"] = drive(Run.objects.get(id=tan_event_consume(OutboxEvent.objects.get(tan=tan).id)))
    return runs


def test_a_replay_of_every_recorded_run_is_identical(monkeypatch):
    runs = every_kind_of_run(monkeypatch)
    assert {kind: run.status for kind, run in runs.items()} == {
        "from a message": "completed", "failed verification": "completed",
        "failed acceptance, rejected": "awaiting_approval", "asked for a name": "completed",
        "direct import": "completed", "tenant restore": "completed", "expense claim": "completed",
        "candidate matching": "completed"}
    assert runs["failed verification"].plan_version == 2
    recorded = list(Run.objects.filter(tenant__sandbox=False).order_by("created_at"))
    assert {r.blueprint for r in recorded} == {"payroll_group_setup", "payroll_direct_import",
                                               "payroll_tenant_restore", "expense_claim", "candidate_matching"}
    dora = membership("dora")
    rows = {m._meta.label: m.objects.count() for m in apps.get_models()}
    different = {}
    for run in recorded:
        developer = dora if run.tenant_id == dora.tenant_id else Membership.objects.filter(
            tenant_id=run.tenant_id, role=Role.DEVELOPER).first()
        result = replay_run(membership=developer, run_id=run.id)
        if not result["identical"]:
            different[f"{run.blueprint} {run.params.get('group_name', '')} ({run.status})"] = result["differences"]
    assert different == {}, json.dumps(different, indent=1, ensure_ascii=False)
    assert ReplayResult.objects.filter(identical=True).count() == len(recorded)
    assert not Tenant.objects.filter(sandbox=True).exists()  # every sandbox went once compared
    # Nothing else is left of the replays anywhere (no tenant, record, memory, user or event).
    after = {m._meta.label: m.objects.count() for m in apps.get_models()}
    assert {k: after[k] - rows[k] for k in rows if after[k] != rows[k]} == {"agents.ReplayResult": len(recorded)}


def test_a_failure_replan_recorded_before_a_fix_replays_showing_the_route_it_no_longer_takes(monkeypatch):
    monkeypatch.setenv("KEEL_FAULTS", "verify_import.item_unseen#Verify Replan+cn-sales-commission=on")
    run = decide(decide(setup_run("Verify Replan")))
    assert run.status == "completed" and run.plan_version == 2
    monkeypatch.delenv("KEEL_FAULTS")  # the code changed: the first verification passes now
    result = replay_run(membership=membership("dora"), run_id=run.id)
    assert not result["identical"]
    plans = next(d for d in result["differences"] if d["what"] == "plans")
    assert plans["recorded"] == ["v1: initial", "v2: failure_after_undo of verify"]
    assert plans["replayed"] == ["v1: initial"]
    verify = next(d for d in result["differences"] if d["what"] == "transitions" and d["step"] == "verify")
    assert "v1: in_progress → failed" in verify["recorded"] and "v1: in_progress → completed" in verify["replayed"]
