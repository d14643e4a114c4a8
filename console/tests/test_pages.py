import pytest

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from tests.helpers import PROMPT, client_for, drive, membership, run_to_approval

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def test_it_lists_the_tenants_conversations_in_the_console():
    run = run_to_approval()
    page = client_for("alice").get("/console/")
    assert page.status_code == 200
    assert "Shanghai Sales" in page.content.decode()
    assert f"/conversations/{run.conversation_id}/" in page.content.decode()
    assert "Shanghai Sales" not in client_for("oscar").get("/console/").content.decode()


def test_it_starts_a_new_conversation_from_the_console():
    response = client_for("alice").post("/console/", {"title": "Beijing Ops"})
    assert response.status_code == 302
    page = client_for("alice").get(response["Location"])
    assert "Beijing Ops" in page.content.decode()


def test_it_draws_the_run_panel_waiting_on_an_approver():
    run = run_to_approval()
    html = client_for("alice").get(f"/conversations/{run.conversation_id}/").content.decode()
    assert 'data-node="import"' in html and "status-awaiting_approval" in html
    assert "3 of 6 steps" in html
    assert "Waiting on:</strong> an approver (ada, bob)" in html
    assert "<svg" in html


def test_it_shows_completion_after_the_approval():
    run = run_to_approval()
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                    verdict="approved")
    drive(run)
    html = client_for("alice").get(f"/conversations/{run.conversation_id}/panel/").content.decode()
    assert "6 of 6 steps" in html and "Waiting on" not in html
    assert 'data-testid="run-status">Completed' in html


def test_it_shows_the_run_page_with_its_plan_versions():
    run = run_to_approval()
    html = client_for("alice").get(f"/runs/{run.id}/").content.decode()
    assert "Plan versions" in html and "v1" in html and "initial plan" in html


def test_oscar_gets_404_for_alices_conversation_run_and_timeline():
    run = run_to_approval()
    oscar = client_for("oscar")
    assert oscar.get(f"/conversations/{run.conversation_id}/").status_code == 404
    assert oscar.get(f"/conversations/{run.conversation_id}/timeline/").status_code == 404
    assert oscar.get(f"/runs/{run.id}/").status_code == 404


def test_alice_is_refused_the_developer_timeline():
    run = run_to_approval()
    assert client_for("alice").get(f"/conversations/{run.conversation_id}/timeline/?view=developer").status_code == 403


def test_the_business_timeline_shows_summaries_and_never_the_prompt():
    run = run_to_approval()
    alice = client_for("alice")
    pages = [alice.get(f"/conversations/{run.conversation_id}/timeline/"),
             alice.get(f"/conversations/{run.conversation_id}/"),
             alice.get(f"/runs/{run.id}/"),
             alice.get(f"/api/v1/conversations/{run.conversation_id}/events/?after=0")]
    for page in pages:
        assert page.status_code == 200
        assert PROMPT not in page.content.decode()
    assert "Understood the request" in pages[0].content.decode()


def test_the_developer_timeline_shows_frames_waits_and_provenance():
    run = run_to_approval()
    html = client_for("dora").get(f"/conversations/{run.conversation_id}/timeline/?view=developer").content.decode()
    assert "match_salary_template" in html or "match" in html
    assert 'data-coordinate="template_id"' in html
    assert "Approval wait" in html
    assert "wf-bar" in html


def test_the_developer_timeline_reads_in_chinese_with_its_codes_as_code():
    run = run_to_approval()
    html = client_for("dora").get(f"/conversations/{run.conversation_id}/timeline/?view=developer",
                                  HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert '<option value="tool_call" >工具调用</option>' in html and '<option value="info" >信息</option>' in html
    assert '<span class="chip kind-plan">计划</span>' in html and "计划 v1" in html
    assert "于步骤 <code>match</code>" in html and "回执 <code>" in html
    assert "<code>match_salary_template</code>" in html  # a tool's name is a code, shown as one
    assert " tok<" not in html and "plan v1" not in html


def test_the_developer_timeline_shows_which_call_produced_the_template_id():
    from workflows.models import StateCoordinate

    run = run_to_approval()
    coordinate = StateCoordinate.objects.get(run=run, key="template_id")
    html = client_for("dora").get(f"/conversations/{run.conversation_id}/timeline/?view=developer").content.decode()
    produced = html.split('data-testid="produced-by-template_id"')[1].split("</td>")[0]
    assert str(coordinate.call_id) in produced and coordinate.producer in produced


def test_the_payload_loads_on_demand_for_developers_only():
    from timeline.models import Frame

    run = run_to_approval()
    frame = Frame.objects.get(activity__run=run, kind="model_call")
    response = client_for("dora").get(f"/frames/{frame.id}/payload/")
    assert response.status_code == 200 and PROMPT in response.content.decode()
    assert client_for("alice").get(f"/frames/{frame.id}/payload/").status_code == 403
    assert client_for("oscar").get(f"/frames/{frame.id}/payload/").status_code == 404


def test_the_developer_timeline_filters_by_kind_and_errors():
    run = run_to_approval()
    dora = client_for("dora")
    url = f"/conversations/{run.conversation_id}/timeline/?view=developer"
    only_models = dora.get(url + "&kind=model_call").content.decode()
    assert 'data-frame-kind="model_call"' in only_models and 'data-frame-kind="tool_call"' not in only_models
    errors = dora.get(url + "&errors=1").content.decode()
    assert 'data-frame-kind="tool_call"' not in errors


def test_the_dag_is_layered_by_dependency_depth():
    from types import SimpleNamespace

    from console.dag import dag_layout

    def node(key, *deps, run_when="completed"):
        return SimpleNamespace(key=key, goal=key, tool=key, status="pending", depends_on=list(deps),
                               run_when=run_when)

    dag = dag_layout([node("interpret"), node("match", "interpret"), node("snapshot", "interpret"),
                      node("import", "match", "snapshot"), node("verify", "import"),
                      node("restore", "import", run_when="failed")])
    x = {n.key: n.x for n in dag.nodes}
    assert x["interpret"] < x["match"] == x["snapshot"] < x["import"] < x["verify"] == x["restore"]
    assert len(dag.edges) == 6
    assert [p["compensation"] for p in dag.edge_paths].count(True) == 1


def test_the_timeline_index_lists_conversations_with_the_views_the_role_may_open():
    run = run_to_approval()
    alice = client_for("alice").get("/timeline/").content.decode()
    dora = client_for("dora").get("/timeline/").content.decode()
    timeline = f"/conversations/{run.conversation_id}/timeline/"
    assert timeline in alice and f"{timeline}?view=developer" not in alice
    assert f"{timeline}?view=developer" in dora


def test_the_panel_asks_the_user_when_the_run_waits_for_an_answer():
    from django.db import transaction

    from workflows.models import Node
    from workflows.transitions import node_transition

    run = run_to_approval()
    verify = Node.objects.get(run=run, key="verify")
    with transaction.atomic():
        Node.objects.filter(id=verify.id).update(status="in_progress")
        verify.refresh_from_db()
        node_transition(verify, "awaiting_input", expected="in_progress", reason="Which cost centre?",
                        question={"text": "Which cost centre should the group use?", "options": []})
    html = client_for("alice").get(f"/conversations/{run.conversation_id}/panel/").content.decode()
    assert "Which cost centre should the group use?" in html
    assert f'data-url="/api/v1/runs/{run.id}/input/"' in html
