"""The HR plane: a TAN's approval event starts candidate matching once; matches are
deterministic, explained, persisted once per TAN and candidate."""
import pytest

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from config.api import Conflict, Forbidden
from hr import matching
from hr.models import Match, OutboxEvent, Tan
from hr.services import Actor, tan_approve, tan_event_publish
from hr.supervisor import tan_event_consume
from hr.tasks import outbox_sweep
from timeline.models import Frame
from workflows.models import Run
from tests.helpers import drive, membership, statuses

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def actor(username: str) -> Actor:
    m = membership(username)
    return Actor(tenant_id=m.tenant_id, user_id=m.user_id, role=m.role)


def approve(title: str) -> tuple[Tan, Run]:
    tan = Tan.objects.get(title=title)
    tan_approve(actor=actor("ada"), tan_id=tan.id)
    event = OutboxEvent.objects.get(tan=tan)
    run_id = tan_event_consume(event.id)
    return tan, drive(Run.objects.get(id=run_id))


def test_an_approved_tan_starts_matching_that_records_explained_matches():
    tan, run = approve("Data Analyst")
    assert run.status == "completed", run.status_reason
    assert run.blueprint == "candidate_matching" and run.created_by.username == "ada"
    matches = list(Match.objects.filter(tan=tan).select_related("candidate"))
    assert [m.candidate.name for m in matches] == ["Maria Garcia", "Zhou Xin", "Chen Jing"]
    assert str(matches[0].score) == "1.000" and "3 of 3 skills" in matches[0].explanation
    assert "技能匹配" in matches[0].explanation_zh
    assert not ApprovalRequest.objects.filter(run=run).exists()
    trigger = Frame.objects.get(activity=run.activity, name="trigger: hr.tan.approved")
    assert "not by a chat message" in trigger.summary


def test_more_matches_than_the_threshold_wait_for_an_approver():
    tan, run = approve("Senior Backend Engineer")
    assert statuses(run)["persist"] == "awaiting_approval"
    assert not Match.objects.filter(tan=tan).exists()
    approval = ApprovalRequest.objects.get(run=run)
    assert "Record 5 matches" in approval.summary and "Li Wei (1.000)" in approval.summary
    with pytest.raises(Forbidden):  # ada approved the TAN, so the run is hers: four eyes
        approval_decide(membership=membership("ada"), approval_id=approval.id, verdict="approved")
    approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="approved")
    run = drive(run)
    assert run.status == "completed", run.status_reason
    assert Match.objects.filter(tan=tan).count() == 5


def test_a_duplicate_approval_event_starts_nothing_and_duplicates_no_match():
    tan, run = approve("Data Analyst")
    with pytest.raises(Conflict):
        tan_approve(actor=actor("bob"), tan_id=tan.id)
    assert OutboxEvent.objects.filter(tan=tan).count() == 1
    first = OutboxEvent.objects.get(tan=tan)
    assert tan_event_consume(first.id) is None  # redelivered
    from django.db import transaction
    with transaction.atomic():
        duplicate = tan_event_publish(tan=tan, actor=actor("ada"))  # a second event for the same TAN
    assert tan_event_consume(duplicate.id) is None
    duplicate.refresh_from_db()
    assert duplicate.outcome.startswith("duplicate: run")
    assert Run.objects.filter(blueprint="candidate_matching").count() == 1
    assert Match.objects.filter(tan=tan).count() == 3


def test_the_outbox_sweep_consumes_an_event_whose_hand_over_was_lost():
    tan = Tan.objects.get(title="Data Analyst")
    tan_approve(actor=actor("ada"), tan_id=tan.id)  # the send_task is patched away: lost
    OutboxEvent.objects.update(created_at=OutboxEvent.objects.get().created_at.replace(year=2020))
    assert outbox_sweep() == 1
    assert OutboxEvent.objects.get().run_id is not None


def test_a_business_user_cannot_approve_a_tan_and_nothing_is_published():
    tan = Tan.objects.get(title="Data Analyst")
    with pytest.raises(Forbidden):
        tan_approve(actor=actor("alice"), tan_id=tan.id)
    assert Tan.objects.get(id=tan.id).status == "draft" and not OutboxEvent.objects.exists()


def test_scoring_is_deterministic_and_explained():
    tan = {"skills": ["python", "sql"], "location": "Beijing", "seniority": 2}
    people = [{"candidate_id": "1", "name": "B", "skills": ["Python", "SQL"], "location": "beijing", "seniority": 2},
              {"candidate_id": "2", "name": "A", "skills": ["python"], "location": "Remote", "seniority": 3},
              {"candidate_id": "3", "name": "C", "skills": ["java"], "location": "Paris", "seniority": 1}]
    ranked = matching.rank(tan, people, limit=5)
    assert ranked == matching.rank(tan, list(reversed(people)), limit=5)
    assert [(m["name"], m["score"]) for m in ranked] == [("B", "1.000"), ("A", "0.500")]
    assert ranked[1]["explanation"] == "1 of 2 skills (python); remote; senior, one level off."


def test_another_tenant_sees_no_tan_and_cannot_approve_one(client):
    tan = Tan.objects.get(title="Data Analyst")
    client.force_login(membership("oscar").user)
    assert client.get(f"/api/v1/hr/tans/{tan.id}/").status_code == 404
    assert client.post(f"/api/v1/hr/tans/{tan.id}/approve/").status_code == 404
    assert client.get(f"/api/v1/hr/tans/{tan.id}/matches/").status_code == 404
    assert client.get("/api/v1/hr/tans/").json()["results"] == []
    assert Tan.objects.get(id=tan.id).status == "draft"


def test_the_api_approves_once_and_lists_matches(client):
    tan = Tan.objects.get(title="Data Analyst")
    client.force_login(membership("ada").user)
    assert client.post(f"/api/v1/hr/tans/{tan.id}/approve/").json()["status"] == "approved"
    again = client.post(f"/api/v1/hr/tans/{tan.id}/approve/")
    assert again.status_code == 409 and "approved by ada" in again.json()["detail"]
    drive(Run.objects.get(id=tan_event_consume(OutboxEvent.objects.get(tan=tan).id)))
    body = client.get(f"/api/v1/hr/tans/{tan.id}/matches/").json()
    assert [m["candidate"] for m in body["results"]] == ["Maria Garcia", "Zhou Xin", "Chen Jing"]
    assert client.get(f"/api/v1/hr/tans/{tan.id}/").json()["matching_run"] is not None


def test_the_metrics_count_approved_persists_and_submits_without_duplicates():
    from console.metrics import metrics_for, period_parse
    from expenses.models import ExpenseClaim

    tan, run = approve("Senior Backend Engineer")
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                    verdict="approved")
    assert drive(run).status == "completed"
    claim_run = drive(run_start_claim())
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=claim_run).id,
                    verdict="approved")
    assert drive(claim_run).status == "completed" and ExpenseClaim.objects.get().status == "submitted"
    metric = metrics_for(tenant_id=membership("ada").tenant_id, period=period_parse({})).metric(
        "duplicate_side_effects")
    assert metric.value == 0 and metric.denominator == 2


def run_start_claim():
    from workflows.services import run_start

    return run_start(membership=membership("alice"), blueprint="expense_claim", params={
        "category": "lodging", "city": "Beijing", "start_date": "2026-11-16", "nights": 2, "amount": "1800"})


def test_a_skill_of_forty_characters_is_taken_though_lower_case_makes_it_longer(client):
    """"İ" lower-cased is two characters: the 40-character limit is on the skill as given."""
    client.force_login(membership("alice").user)
    skill = "İ" * 40
    made = client.post("/api/v1/hr/tans/", {"title": "Turkish desk", "location": "Shenzhen", "skills": [skill]},
                       content_type="application/json")
    assert made.status_code == 201, made.content
    assert Tan.objects.get(title="Turkish desk").skills == [skill.lower()]
    longer = client.post("/api/v1/hr/tans/", {"title": "Too long", "location": "Shenzhen", "skills": ["x" * 41]},
                         content_type="application/json")
    assert longer.status_code == 400 and not Tan.objects.filter(title="Too long").exists()
