"""The admin timeline: developers and tenant admins of one tenant, read-only."""
import pytest
from django.urls import reverse

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from timeline.models import Activity, Event, Frame
from workflows.models import (
    CoordinateConsumption,
    Node,
    Plan,
    ProvenanceBlock,
    Run,
    StateCoordinate,
    ToolCall,
    Transition,
)
from workflows.services import run_start
from tests.helpers import drive, membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def start(username: str, group_name: str) -> Run:
    return drive(run_start(membership=membership(username), blueprint="payroll_group_setup",
                           params={"request": "set up a monthly payroll group for our Shanghai sales team with "
                                              "commission", "group_name": group_name}))


@pytest.fixture
def runs():
    """demo: a completed run; other: a run waiting for approval, with a provenance block."""
    ours = start("alice", "Shanghai Sales")
    approval = ApprovalRequest.objects.get(run=ours, status="pending")
    approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="approved")
    ours = drive(ours)
    assert ours.status == "completed"
    theirs = start("oscar", "Oscar Imports")
    ProvenanceBlock.objects.create(tenant=theirs.tenant, run=theirs, node=theirs.nodes.get(key="import"),
                                   key="template_id", supplied="1", expected="2", reason="differs")
    return ours, theirs


def as_user(client, username: str):
    client.force_login(membership(username).user)
    return client


def change_url(obj) -> str:
    return reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_change", args=[obj.pk])


def test_dora_sees_demos_activities_and_not_others(client, runs):
    ours, theirs = runs
    html = as_user(client, "dora").get(reverse("admin:timeline_activity_changelist")).content.decode()
    # The run's activity by its title; the step's by the blueprint's title for the step, its key as code.
    assert "Payroll group setup: Shanghai Sales" in html and "Match template" in html and "<code>match</code>" in html
    assert "Oscar Imports" not in html


def test_dora_gets_a_404_for_another_tenants_activity(client, runs):
    _, theirs = runs
    activity = Activity.objects.filter(run=theirs).first()
    assert as_user(client, "dora").get(change_url(activity)).status_code == 404


@pytest.mark.parametrize("model", [Run, Node, Transition, Plan, ToolCall, StateCoordinate, ProvenanceBlock,
                                   ApprovalRequest, Activity, Frame, Event])
def test_every_registered_model_shows_dora_her_tenant_only(client, runs, model):
    ours, theirs = runs
    as_user(client, "dora")
    listing = client.get(reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist"))
    assert listing.status_code == 200
    tenant_path = {Run: "tenant", Activity: "conversation__tenant", Frame: "activity__conversation__tenant",
                   Event: "conversation__tenant", Node: "run__tenant", Transition: "run__tenant",
                   Plan: "run__tenant"}.get(model, "tenant")
    if model is not ProvenanceBlock:  # demo's run had none
        assert listing.context["cl"].result_count == model.objects.filter(**{tenant_path: ours.tenant}).count() > 0
    theirs_obj = model.objects.filter(**{tenant_path: theirs.tenant}).first()
    assert client.get(change_url(theirs_obj)).status_code == 404


def test_the_activity_page_lists_its_frames_as_a_waterfall(client, runs):
    ours, _ = runs
    activity = Activity.objects.get(run=ours, node_key="match")
    call = ToolCall.objects.get(run=ours, tool="match_salary_template")
    html = as_user(client, "dora").get(change_url(activity)).content.decode()
    assert 'data-testid="frames-waterfall"' in html and 'class="keel-bar"' in html
    assert "match_salary_template" in html and str(call.id) in html
    assert "payload" in html  # developers see the frames' payloads
    assert 'name="_save"' not in html  # read-only: statuses change only through transitions


@pytest.mark.parametrize("term", ["run", "tool", "call", "state key"])
def test_activities_are_found_by_run_tool_call_id_and_state_key(client, runs, term):
    ours, theirs = runs
    call = ToolCall.objects.get(run=ours, tool="import_template")
    q = {"run": str(ours.id), "tool": "import_template", "call": str(call.id), "state key": "template_id"}[term]
    found = as_user(client, "dora").get(reverse("admin:timeline_activity_changelist"), {"q": q}).context["cl"]
    titles = {a.title for a in found.result_list}
    assert titles and all(a.run_id == ours.id for a in found.result_list)
    if term in ("tool", "call"):
        assert titles == {"node import"}


def test_the_provenance_chain_lists_the_producer_and_the_consumers(client, runs):
    ours, _ = runs
    coordinate = StateCoordinate.objects.get(run=ours, key="template_id")
    consumers = [link.call for link in CoordinateConsumption.objects.filter(coordinate=coordinate)]
    assert consumers
    html = as_user(client, "dora").get(change_url(coordinate)).content.decode()
    assert f'href="{change_url(coordinate.call)}"' in html
    assert f"match_salary_template · call {coordinate.call_id}" in html
    for call in consumers:
        assert f'href="{change_url(call)}"' in html and f"{call.tool} · call {call.id}" in html


def test_a_tool_call_links_the_coordinates_it_consumed(client, runs):
    ours, _ = runs
    call = ToolCall.objects.get(run=ours, tool="import_template")
    coordinate = StateCoordinate.objects.get(run=ours, key="template_id")
    html = as_user(client, "dora").get(change_url(call)).content.decode()
    assert f'href="{change_url(coordinate)}"' in html


def test_a_business_user_is_refused_the_admin(client, runs):
    ours, _ = runs
    as_user(client, "alice")
    for url in (reverse("admin:index"), change_url(Activity.objects.filter(run=ours).first())):
        answer = client.get(url)
        assert answer.status_code == 302 and answer["Location"].startswith(reverse("admin:login"))
    assert "not authorized to access this page" in client.get(reverse("admin:login")).content.decode()


def test_developers_and_tenant_admins_log_in_to_the_admin_and_business_users_do_not(client):
    for username, allowed in (("dora", True), ("ada", True), ("alice", False), ("bob", False)):
        client.logout()
        answer = client.post(reverse("admin:login"), {"username": username, "password": "keel-demo",
                                                      "next": reverse("admin:index")})
        assert (answer.status_code == 302) is allowed, username
        if allowed:
            assert client.get(reverse("admin:index")).status_code == 200


def test_the_admin_index_offers_the_timeline_models_only(client):
    html = as_user(client, "dora").get(reverse("admin:index")).content.decode()
    for name in ("Activities", "Frames", "Events", "Runs", "Nodes", "Tool calls", "State coordinates",
                 "Approval requests", "Provenance blocks"):
        assert name in html, name
    assert "Memberships" not in html and "Users" not in html


def test_the_admin_timeline_reads_in_chinese_with_its_codes_as_code(client, runs):
    ours, _ = runs
    as_user(client, "dora")
    listing = client.get(reverse("admin:timeline_activity_changelist"), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "Keel 管理后台" in listing and "匹配模板" in listing and "<code>match</code>" in listing
    assert "node match" not in listing and "Started at" not in listing
    activity = Activity.objects.get(run=ours, node_key="match")
    page = client.get(change_url(activity), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "瀑布图（" in page and "Every frame of this activity" not in page
    assert "<code>match_salary_template</code>" in page  # a tool's name is a code, shown as one
    frames = client.get(reverse("admin:timeline_frame_changelist"), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "模型调用：<code>" in frames and "model: " not in frames


def test_a_frame_name_is_a_sentence_in_the_readers_language_around_its_code():
    from django.utils import translation

    from timeline.shown import frame_name_shown

    with translation.override("zh-hans"):
        assert frame_name_shown("route → plan") == "路由 → <code>plan</code>"
        assert frame_name_shown("retry 2 of 3") == "第 2 次重试（共 3 次）"
        assert frame_name_shown("acceptance") == "验收"
        assert frame_name_shown("match_salary_template") == "<code>match_salary_template</code>"
    with translation.override("en"):
        assert frame_name_shown("model: intent") == "model call: <code>intent</code>"
        assert frame_name_shown("plan v2") == "plan v2"
        assert frame_name_shown("<b>x</b>") == "<code>&lt;b&gt;x&lt;/b&gt;</code>"
