"""The inbox, card, history and matrix pages, and the API's added fields."""
import pytest
from django.test import Client

from approvals.services import approval_decide
from approvals.tests.helpers import seed, waiting_approval
from workflows.tests.helpers import membership, no_broker

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def demo():
    seed()
    with no_broker():
        yield


def client_for(username: str) -> Client:
    client = Client()
    client.force_login(membership(username).user)
    return client


def test_it_shows_bob_the_queue_and_the_diff():
    approval = waiting_approval()
    page = client_for("bob").get("/approvals/").content.decode()
    assert 'data-testid="queue-item"' in page and "Shanghai Sales" in page
    assert "Exactly what the import will change" in page
    for item in approval.diff["items"]:
        assert f'data-key="{item["code"]}"' in page
    assert "Alice Chen" in page and approval.node.goal in page
    assert "New payroll group" in page and "Safety snapshot" in page


def test_it_shows_a_business_user_a_read_only_notice():
    waiting_approval()
    page = client_for("alice").get("/approvals/").content.decode()
    assert 'data-testid="read-only-notice"' in page and 'data-action="approve"' not in page


def test_it_shows_the_requester_why_she_may_not_approve():
    approval = waiting_approval("ada", group_name="Ada's own")
    page = client_for("ada").get(f"/approvals/{approval.id}/").content.decode()
    assert "four-eyes" in page and 'data-testid="refusal"' in page


def test_it_shows_the_first_decision_on_a_decided_card():
    approval = waiting_approval()
    approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="rejected", comment="wrong team")
    page = client_for("ada").get(f"/approvals/{approval.id}/card/").content.decode()
    assert 'data-testid="first-decision"' in page and "Bob Li" in page and "wrong team" in page


def test_it_hides_another_tenants_approval():
    approval = waiting_approval()
    assert client_for("oscar").get(f"/approvals/{approval.id}/").status_code == 404
    assert client_for("oscar").get(f"/approvals/runs/{approval.run_id}/history/").status_code == 404
    assert client_for("oscar").get(f"/api/v1/approvals/{approval.id}/").status_code == 404


def test_it_shows_a_runs_approval_history():
    approval = waiting_approval("ada", group_name="History")
    client_for("ada").post(f"/api/v1/approvals/{approval.id}/approve/", {}, content_type="application/json")
    client_for("bob").post(f"/api/v1/approvals/{approval.id}/approve/", {"comment": "fine"},
                           content_type="application/json")
    page = client_for("bob").get(f"/approvals/runs/{approval.run_id}/history/").content.decode()
    assert page.count('data-testid="history-decision"') == 2
    assert 'data-type="approval.refused"' in page and 'data-type="approval.approved"' in page
    history = client_for("bob").get(f"/api/v1/approvals/history/{approval.run_id}/").json()
    assert [(d["user"], d["accepted"]) for d in history["decisions"]] == [("ada", False), ("bob", True)]


def test_the_api_carries_the_desk_fields_and_refuses_with_reasons():
    approval = waiting_approval("ada", group_name="Api")
    bob = client_for("bob")
    listed = bob.get("/api/v1/approvals/?status=pending").json()["results"]
    row = next(a for a in listed if a["id"] == str(approval.id))
    assert row["needs_role"] == "approver" and row["goal"] == approval.node.goal
    assert row["requester"] == {"username": "ada", "name": "Ada Zhao"} and row["waited_seconds"] >= 0
    assert row["diff"]["groups"][0]["name"] == "Api" and row["measures"]["headcount"] > 0
    refused = client_for("ada").post(f"/api/v1/approvals/{approval.id}/approve/", {},
                                     content_type="application/json")
    assert refused.status_code == 403 and refused.json()["code"] == "four_eyes"
    assert client_for("alice").post(f"/api/v1/approvals/{approval.id}/approve/", {},
                                    content_type="application/json").status_code == 403
    assert bob.post(f"/api/v1/approvals/{approval.id}/approve/", {}, content_type="application/json").status_code == 200
    again = bob.post(f"/api/v1/approvals/{approval.id}/reject/", {}, content_type="application/json")
    assert again.status_code == 409 and again.json()["decided_by"] == "bob"


def test_ada_edits_the_matrix_and_bob_may_only_read_it():
    page = client_for("bob").get("/approvals/matrix/").content.decode()
    assert 'data-testid="matrix-read-only"' in page
    form = {"tool": "import_template", "roles": ["approver", "admin"], "deadline_hours": "8",
            "remind_minutes": "30", "headcount_limit": "5", "monthly_gross_limit": "", "above_limit_role": "admin"}
    assert client_for("bob").post("/approvals/matrix/", form).status_code == 403
    response = client_for("ada").post("/approvals/matrix/", form, follow=True)
    assert "Saved the rule" in response.content.decode()
    approval = waiting_approval()
    assert approval.needs_role == "admin"
    assert (approval.deadline - approval.created_at).total_seconds() == pytest.approx(8 * 3600, abs=5)
    bad = client_for("ada").post("/approvals/matrix/", {**form, "roles": []}, follow=True).content.decode()
    assert "at least one role" in bad


def test_numbers_that_are_not_plain_numbers_are_refused_before_anything_changes():
    from approvals.models import ApprovalRule

    before = list(ApprovalRule.objects.values_list("tool", "deadline_seconds", "limits"))
    form = {"tool": "import_template", "roles": ["approver", "admin"], "deadline_hours": "8",
            "remind_minutes": "30", "headcount_limit": "5", "monthly_gross_limit": "", "above_limit_role": "admin"}
    for field, value in [("deadline_hours", "inf"), ("deadline_hours", "1e300"), ("headcount_limit", "²"),
                         ("monthly_gross_limit", "NaN")]:
        for who in ("alice", "ada"):  # a business user gets no 500 either: numbers are parsed first
            response = client_for(who).post("/approvals/matrix/", {**form, field: value}, follow=True)
            assert response.status_code in (200, 403), (who, field, value, response.status_code)
            if who == "ada":
                assert "must be" in response.content.decode()
    assert list(ApprovalRule.objects.values_list("tool", "deadline_seconds", "limits")) == before
    assert client_for("bob").get("/approvals/queue/?selected=²").status_code == 400
