"""Replay as a developer tool. A recorded run is re-run in a sandbox against its
recorded model answers and decisions — no restart, no tenant changed — and the answer says
whether it went the same way; a code change that alters a route is reported."""
import json
from io import StringIO
from unittest import mock

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from agents.models import Message, ReplayResult
from agents.news import NEWS_TYPES, news_post
from agents.orchestrator import message_post
from agents.replay import replay_run, sandbox_delete, sandboxes_clean
from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from llm import backend_scoped
from llm.replay import ReplayBackend
from tests.payroll import state_of
from tenants.models import Membership, Tenant
from timeline.models import Event
from timeline.services import conversation_create
from workflows.models import Run
from workflows.services import run_start
from tests.helpers import drive, membership
from workflows.tools import TOOLS, NeedsInput

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]
REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"


def approve(run, verdict="approved", **kwargs):
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(
        run=run, status="pending").id, verdict=verdict, **kwargs)
    return drive(run)


def completed_run(**params):
    run = drive(run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                          params={"request": REQUEST, "group_name": "Shanghai Sales", **params}))
    return approve(run)


def test_a_completed_run_replays_identically_in_a_sandbox_and_changes_no_tenant(demo):
    run = completed_run()
    assert run.status == "completed"
    before = (state_of("demo"), state_of("other"), Run.objects.filter(tenant=run.tenant).count())
    rows = {m._meta.label: m.objects.count() for m in apps.get_models()}
    demo.reset_mock()
    result = replay_run(membership=membership("dora"), run_id=run.id)
    # Every row the replay made went with its sandbox, but the comparison.
    after = {m._meta.label: m.objects.count() for m in apps.get_models()}
    assert {k: after[k] - rows[k] for k in rows if after[k] != rows[k]} == {"agents.ReplayResult": 1}
    assert result["identical"], result["differences"]
    assert result["differences"] == []
    assert result["replayed"]["status"] == "completed"
    assert result["replayed"]["route"] == result["recorded"]["route"]
    assert (state_of("demo"), state_of("other"), Run.objects.filter(tenant=run.tenant).count()) == before
    assert not demo.called  # nothing of the replay reached the workers
    # Compared, the sandbox is gone with everything in it; the comparison is kept.
    assert not Tenant.objects.filter(slug=result["sandbox_tenant"]).exists()
    assert not Run.objects.filter(id=int(result["sandbox_run"])).exists()
    assert not User.objects.filter(username__startswith=result["sandbox_tenant"]).exists()
    kept = ReplayResult.objects.get(id=int(result["replay_id"]))
    assert (kept.run_id, kept.tenant_id, kept.status, kept.identical) == (run.id, run.tenant_id, "compared", True)
    assert kept.replayed == result["replayed"] and kept.sandbox_deleted_at is not None


def test_a_kept_sandbox_is_never_listed_and_the_periodic_cleanup_deletes_it():
    run = completed_run()
    result = replay_run(membership=membership("dora"), run_id=run.id, keep_sandbox=True)
    sandbox = Tenant.objects.get(slug=result["sandbox_tenant"])
    replay = Run.objects.get(id=int(result["sandbox_run"]))
    assert replay.tenant_id == sandbox.id != run.tenant_id
    assert sandbox.payroll_groups.filter(name="Shanghai Sales").count() == 1
    # Its events tell nobody anything: no news is posted into a sandbox (it goes as the replay ends).
    told = [e for e in Event.objects.filter(conversation_id=replay.conversation_id) if e.type.startswith(NEWS_TYPES)]
    assert {e.type for e in told} >= {"approval.requested", "run.status"}
    assert [news_post(e.id) for e in told] == [None] * len(told)
    assert not Message.objects.filter(conversation_id=replay.conversation_id, intent="news").exists()
    admin = Client()
    admin.force_login(User.objects.create_superuser("root", "root@example.com", "x" * 12))
    listed = admin.get("/admin/tenants/tenant/").content.decode()
    assert "Demo Manufacturing Co." in listed and result["sandbox_tenant"] not in listed
    assert "Replay of run" not in admin.get("/admin/tenants/membership/").content.decode()
    assert sandboxes_clean() == 0  # younger than the cleanup's age: a developer may be looking at it
    assert sandboxes_clean(older_than_seconds=0) == 1
    assert not Tenant.objects.filter(id=sandbox.id).exists() and not Run.objects.filter(id=replay.id).exists()
    assert ReplayResult.objects.get(id=int(result["replay_id"])).identical is True
    assert Tenant.objects.filter(slug="demo").exists()  # the cleanup touches sandboxes only
    assert sandbox_delete(run.tenant_id) is False


def test_a_replay_that_crashes_leaves_no_sandbox_and_says_it_was_abandoned():
    run = completed_run()
    with mock.patch("agents.replay._drive", side_effect=RuntimeError("a bug")), pytest.raises(RuntimeError):
        replay_run(membership=membership("dora"), run_id=run.id)
    assert not Tenant.objects.filter(sandbox=True).exists()
    assert ReplayResult.objects.get(run=run).status == "abandoned"


def test_a_run_from_a_message_with_an_attachment_replays_identically():
    m = membership("alice")
    conv = conversation_create(tenant_id=m.tenant_id, user_id=m.user_id, title="t")
    result = message_post(membership=m, conversation_id=conv.id, text=REQUEST,
                          attachment=("team.csv", b"employee_no\nD-0001\nD-0003\n"))
    run = approve(drive(Run.objects.get(id=int(result["run_id"]))))
    assert run.status == "completed"
    replayed = replay_run(membership=membership("dora"), run_id=run.id)
    assert replayed["identical"], replayed["differences"]
    assert "assign" in replayed["replayed"]["steps"]


def test_a_rejection_with_replan_and_a_failed_acceptance_replay_identically():
    bad = {"region": "Shanghai, China", "pay_frequency": "monthly", "items_named": [], "missing": []}
    # A model that proposes requirements breaking their schema (recorded like any model call).
    with backend_scoped(ReplayBackend([json.dumps(bad)])):
        run = drive(run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                              params={"request": REQUEST, "group_name": "Shanghai Sales"}))
    run = approve(run, "rejected", replan=True)
    assert run.plan_version == 3
    result = replay_run(membership=membership("dora"), run_id=run.id)
    assert result["identical"], result["differences"]
    assert result["replayed"]["plans"] == ["v1: initial", "v2: failure of interpret", "v3: rejection of import"]


def test_a_code_change_that_alters_a_route_is_reported():
    run = completed_run()

    def ask(ctx, arguments):
        raise NeedsInput("Which template?", [{"label": "A", "answer": "A"}])
    with mock.patch.object(TOOLS["match_salary_template"], "fn", ask):
        result = replay_run(membership=membership("dora"), run_id=run.id)
    assert not result["identical"]
    match = next(d for d in result["differences"] if d["what"] == "transitions" and d["step"] == "match")
    assert match["recorded"][-1] == "v1: in_progress → completed"
    assert match["replayed"][-1] == "v1: in_progress → awaiting_input"
    status = next(d for d in result["differences"] if d["what"] == "status")
    assert (status["recorded"], status["replayed"]) == ("completed", "awaiting_input")


def test_the_api_is_for_developers_and_admins_of_the_run_s_tenant():
    run = completed_run()
    def client(username):
        c = APIClient()
        c.force_authenticate(membership(username).user)
        return c
    assert client("alice").post(f"/api/v1/runs/{run.id}/replay/").status_code == 403
    # A developer of another tenant does not find the run at all.
    Membership.objects.filter(user__username="oscar").update(role="developer")
    assert client("oscar").post(f"/api/v1/runs/{run.id}/replay/").status_code == 404
    response = client("dora").post(f"/api/v1/runs/{run.id}/replay/")
    assert response.status_code == 200
    body = response.json()
    assert body["identical"] is True and body["differences"] == [] and body["replay_id"]


def test_the_developer_timeline_has_a_replay_button_that_answers_with_the_verdict():
    run = completed_run()
    page = Client()
    page.force_login(membership("dora").user)
    html = page.get(f"/conversations/{run.conversation_id}/timeline/?view=developer").content.decode()
    assert f'data-testid="replay-{run.id}"' in html and f'hx-post="/runs/{run.id}/replay/"' in html
    verdict = page.post(f"/runs/{run.id}/replay/").content.decode()
    assert "Identical" in verdict and 'data-testid="replay-verdict"' in verdict
    business = Client()
    business.force_login(membership("alice").user)
    assert business.post(f"/runs/{run.id}/replay/").status_code == 403


def test_manage_py_replay_prints_the_verdict():
    run = completed_run()
    out = StringIO()
    call_command("replay", str(run.id), stdout=out)
    result = json.loads(out.getvalue())
    assert result["identical"] is True and result["run"] == str(run.id)


def test_a_run_whose_match_used_experience_replays_identically():
    first = completed_run(template_code="cn-sh-monthly-salaried")
    assert first.status == "completed"
    run = drive(run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                          params={"request": "please create a Shanghai sales payroll group, paid every month, "
                                             "with commission", "group_name": "Sales B"}))
    assert run.status == "awaiting_approval"
    result = replay_run(membership=membership("dora"), run_id=run.id, keep_sandbox=True)
    assert result["identical"], result["differences"]
    sandbox = Tenant.objects.get(slug=result["sandbox_tenant"])
    from timeline.models import Frame
    assert Frame.objects.filter(activity__run_id=int(result["sandbox_run"]), kind="memory").exists()
    assert Run.objects.get(id=int(result["sandbox_run"])).tenant_id == sandbox.id


def test_a_different_choice_on_the_same_route_is_reported():
    run = drive(run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                          params={"request": REQUEST, "group_name": "Shanghai Sales"}))
    assert run.status == "awaiting_approval"
    tool = TOOLS["match_salary_template"]
    real = tool.fn
    with mock.patch.object(tool, "fn", lambda ctx, arguments: real(ctx, {**arguments,
                                                                          "template_code": "cn-sh-monthly-salaried"})):
        result = replay_run(membership=membership("dora"), run_id=run.id)
    assert not result["identical"]
    match = next(d for d in result["differences"] if d["what"] == "tool_calls" and d["step"] == "match")
    assert "Shanghai monthly salaried staff" in match["replayed_text"]
    assert "Shanghai monthly salaried staff" not in match["recorded_text"]


# --- The conversation turns that shaped the run are re-driven too ------------------------------

def chat(*texts):
    alice = membership("alice")
    conv = conversation_create(tenant_id=alice.tenant_id, user_id=alice.user_id, title="t")
    results = [message_post(membership=alice, conversation_id=conv.id, text=t) for t in texts]
    return conv, results


def test_the_turns_that_started_a_run_are_posted_again_in_the_sandbox_and_compared():
    from llm import backend_get

    _, results = chat("hi there", REQUEST)
    run = approve(drive(Run.objects.get(id=int(results[1]["run_id"]))))
    result = replay_run(membership=membership("dora"), run_id=run.id, keep_sandbox=True)
    assert result["identical"], result["differences"]
    turns = result["replayed"]["turns"]
    assert [(t["text"], t["intent"], t["route"]) for t in turns] == [("hi there", "chat", "chat"),
                                                                    (REQUEST, "resolve", "plan")]
    assert turns == result["recorded"]["turns"]
    assert "I've started setting up “Shanghai Sales”" in turns[1]["reply"]
    assert any(d.startswith("intent intent resolve") for d in turns[1]["decisions"])
    # The replayed run is the one the replayed turn started, in the sandbox's conversation.
    replay = Run.objects.get(id=int(result["sandbox_run"]))
    from agents.models import Message
    started = Message.objects.get(conversation_id=replay.conversation_id, role="assistant", run=replay)
    assert started.activity.title == REQUEST
    assert backend_get().name == "builtin"  # nobody else's backend changed


def test_an_answer_given_in_the_chat_is_posted_again():
    completed_run()  # "Shanghai Sales" exists: the next run asks for another name
    conv, results = chat(REQUEST)
    run = drive(Run.objects.get(id=int(results[0]["run_id"])))
    assert run.status == "awaiting_input", run.status_reason
    answered = message_post(membership=membership("alice"), conversation_id=conv.id, text="the first one")
    assert Run.objects.get(id=run.id).status != "awaiting_input", answered["reply"]
    run = approve(drive(run))
    assert run.status == "completed" and run.params["group_name"] == "Shanghai Sales"
    result = replay_run(membership=membership("dora"), run_id=run.id)
    assert result["identical"], result["differences"]
    assert [(t["text"], t["route"]) for t in result["replayed"]["turns"]] == [(REQUEST, "plan"),
                                                                             ("the first one", "resume_run")]
    assert "Shanghai Sales (2)" in result["replayed"]["turns"][1]["reply"]


def test_a_code_change_that_routes_a_turn_elsewhere_is_reported_as_a_turn_difference():
    _, results = chat(REQUEST)
    run = drive(Run.objects.get(id=int(results[0]["run_id"])))
    with mock.patch("agents.orchestrator.signal_parse", return_value="chat"):
        result = replay_run(membership=membership("dora"), run_id=run.id)
    assert not result["identical"]
    turn = {d["what"]: d for d in result["differences"] if d["what"].startswith("turn ")}
    assert (turn["turn intent"]["recorded"], turn["turn intent"]["replayed"]) == ("resolve", "chat")
    assert turn["turn route"]["recorded"] == "plan" and turn["turn route"]["replayed"] != "plan"
    assert turn["turn route"]["step"].startswith("turn 1: set up a monthly payroll group")
    # The run itself was replayed from its params and went the same way: only the turn differs.
    assert {d["what"] for d in result["differences"]} <= {"turn intent", "turn route", "turn reply",
                                                           "turn decisions", "model_calls"}


def test_the_kept_comparison_is_in_the_admin_for_the_run_s_tenant_only():
    run = completed_run()
    result = replay_run(membership=membership("dora"), run_id=run.id)
    page = Client()
    page.force_login(membership("dora").user)
    listed = page.get("/admin/agents/replayresult/").content.decode()
    assert result["replay_id"] in listed
    detail = page.get(f"/admin/agents/replayresult/{result['replay_id']}/change/")
    assert detail.status_code == 200 and f"Replay of run {run.id}" in detail.content.decode()
    Membership.objects.filter(user__username="oscar").update(role="developer")
    other = Client()
    other.force_login(membership("oscar").user)
    assert result["replay_id"] not in other.get("/admin/agents/replayresult/").content.decode()
    assert other.get(f"/admin/agents/replayresult/{result['replay_id']}/change/").status_code == 404
