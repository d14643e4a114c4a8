"""The inbox, card, history and matrix pages, and the API's added fields."""
import re
from types import SimpleNamespace

import pytest
from django.test import Client

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from tests.helpers import drive, membership, waiting_approval
from config.words import localised
from hr.models import Candidate, OutboxEvent, Tan
from hr.services import Actor, tan_approve
from hr.supervisor import tan_event_consume
from workflows import cards
from workflows.models import Run
from workflows.services import run_start
from workflows.tools import TOOLS

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


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


# --- The card as typed rows, its words in the reader's language ----------------------------

RAW = re.compile(r"\{'|\{&#x27;|': |&#x27;: |\{&quot;|\{\"")  # str(dict) or JSON in HTML, escaped or not


def card_of(page: str) -> str:
    """The card's rows (what the agent will do and what it changes), without the page around them."""
    return page.split('data-testid="card-rows"', 1)[1].split('data-testid="routing"', 1)[0]


def matches_waiting() -> ApprovalRequest:
    """The Data Analyst TAN (Beijing) approved, with a candidate in Hangzhou among more matches than
    the threshold: the persist step waits for an approver."""
    m = membership("ada")
    Candidate.objects.create(tenant_id=m.tenant_id, name="Hu Yue", name_zh="胡悦", headline="Analyst",
                             headline_zh="分析师", location="Hangzhou", skills=["sql", "python", "tableau"],
                             seniority=2)
    tan = Tan.objects.get(title="Data Analyst")
    tan_approve(actor=Actor(tenant_id=m.tenant_id, user_id=m.user_id, role=m.role), tan_id=tan.id)
    run = drive(Run.objects.get(id=tan_event_consume(OutboxEvent.objects.get(tan=tan).id)))
    return ApprovalRequest.objects.get(run=run, status="pending")


def test_the_candidate_matches_card_is_a_ranked_table_in_the_readers_language():
    approval = matches_waiting()
    card = card_of(client_for("bob").get(f"/approvals/{approval.id}/").content.decode())
    assert 'data-testid="argument-table"' in card and card.count('data-testid="candidate-match"') >= 4
    assert "Maria Garcia" in card and "in Hangzhou, not Beijing" in card and not RAW.search(card)
    chinese = card_of(client_for("bob").get(f"/approvals/{approval.id}/", HTTP_ACCEPT_LANGUAGE="zh-hans")
                      .content.decode())
    assert "杭州" in chinese and "北京" in chinese and "胡悦" in chinese and "数据分析师" in chinese
    assert "Beijing" not in chinese and "Hangzhou" not in chinese and not RAW.search(chinese)


def test_the_expense_card_cites_the_limit_a_night_with_its_currency():
    run = drive(run_start(membership=membership("alice"), blueprint="expense_claim", params={
        "category": "lodging", "city": "Beijing", "start_date": "2026-11-16", "nights": 2, "amount": "1800"}))
    approval = ApprovalRequest.objects.get(run=run, status="pending")
    card = card_of(client_for("bob").get(f"/approvals/{approval.id}/").content.decode())
    verdict = card.split('data-testid="policy-verdict"', 1)[1]
    assert "Over the policy limit" in verdict and "900.00 CNY" in verdict and "750.00 CNY" in verdict
    assert "travel-v2" in verdict and "2026-01-01" in verdict and 'data-testid="policy-citation"' in verdict
    assert "1,800.00 CNY" in card and "2026-11-16" in card and not RAW.search(card)


def test_an_english_request_reads_in_chinese_to_a_chinese_approver():
    approval = waiting_approval()  # alice asked in English
    assert approval.summary_words and approval.summary.startswith("Import template")
    page = client_for("bob").get(f"/approvals/{approval.id}/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    summary = page.split('data-testid="card-summary">', 1)[1].split("</h2>", 1)[0]
    assert "导入" in summary and "Import template" not in summary
    assumptions = page.split('data-testid="assumptions"', 1)[1].split("</ul>", 1)[0]
    assert "薪资组命名为“Shanghai Sales”：请求中没有给出名称" in assumptions and "no name was stated" not in assumptions
    api = client_for("bob").get(f"/api/v1/approvals/{approval.id}/", HTTP_ACCEPT_LANGUAGE="zh-hans").json()
    assert "导入" in api["summary"]
    assert api["measures"]["context"]["assumptions"] == ["薪资组命名为“Shanghai Sales”：请求中没有给出名称"]


def test_a_chinese_request_reads_in_english_to_an_english_approver():
    run = drive(run_start(membership=membership("alice"), blueprint="payroll_group_setup", params={
        "request": "帮我给上海销售团队建一个按月发薪的薪资组，有提成", "group_name": "沪销二组"}))
    approval = ApprovalRequest.objects.get(run=run, status="pending")
    page = client_for("bob").get(f"/approvals/{approval.id}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    summary = page.split('data-testid="card-summary">', 1)[1].split("</h2>", 1)[0]
    assert "Import template" in summary and "“沪销二组”" in summary
    assumptions = page.split('data-testid="assumptions"', 1)[1].split("</ul>", 1)[0]
    assert "named the group “沪销二组”; no name was stated" in assumptions
    assert page.count('data-testid="original-request"') == 1 and "帮我给上海销售团队" in page  # as typed


def test_a_tool_without_a_card_shows_its_arguments_and_diff_as_rows(monkeypatch):
    approval = waiting_approval()
    monkeypatch.delitem(cards.CARDS, "import_template")
    monkeypatch.setattr(TOOLS["import_template"], "argument_describe", None)
    approval.arguments = {**approval.arguments, "place": {"city": localised("Hangzhou", "杭州"), "nights": 2},
                          "people": [{"name": "Li Wei", "score": "1.000"}, {"name": "Zhou Xin", "score": "0.800"}]}
    approval.save(update_fields=["arguments"])
    for language, city in (("en", "Hangzhou"), ("zh-hans", "杭州")):
        card = card_of(client_for("bob").get(f"/approvals/{approval.id}/", HTTP_ACCEPT_LANGUAGE=language)
                       .content.decode())
        assert 'data-testid="arguments"' in card and 'data-testid="argument-table"' in card
        assert city in card and "Zhou Xin" in card and 'data-testid="diff"' in card
        assert "pension_ee" in card.split('data-testid="diff"', 1)[1]  # the diff's items, as a table
        assert not RAW.search(card), card[:2000]
    rows = cards.generic_card(SimpleNamespace(tenant_id=0, tool="no_such_tool", arguments={"when": {"from": "a"}},
                                              diff=None, measures={}))
    assert rows[0]["rows"][0]["fields"][0]["value"]["row"] == "fields"


def test_the_desk_puts_the_card_first_folds_the_queue_and_carries_the_keyboard_questions():
    """On a phone the card comes first and the queue folds into one line (approvals.css);
    `a`, `r` and `R` ask once before deciding, in the page's language (data-fmt-ask-*, approvals.js)."""
    first = waiting_approval(group_name="Fold One")
    waiting_approval(group_name="Fold Two")
    page = client_for("bob").get("/approvals/").content.decode()
    assert "keel/approvals.css" in page
    assert page.index('data-testid="approval-card"') < page.index('data-testid="approval-queue"')
    assert page.index('data-testid="approval-card"') < page.index('data-testid="queue-item"')
    fold = re.search(r'<details class="queue-fold"[^>]*>\s*<summary[^>]*>(.*?)</summary>', page, re.S)
    assert fold, "the queue folds into a <details> with a summary"
    assert re.search(r'data-testid="queue-summary-count">2<', fold.group(1))
    assert f'data-deadline="{first.deadline.isoformat()}"' in fold.group(1)  # the next deadline comes first
    assert 'data-testid="decision-bar"' in page and 'data-testid="decision-confirm"' in page
    for testid in ("approve", "reject", "replan", "comment", "toast", "queue-count", "decision-message"):
        assert f'data-testid="{testid}"' in page
    assert 'data-fmt-ask-approve="Approve this step? Press a again or Enter to approve; Esc cancels."' in page
    assert 'data-fmt-ask-reject="Reject this step? Press r again or Enter to reject; Esc cancels."' in page
    assert 'data-fmt-ask-replan="Reject this step and ask for another plan?' in page
    assert 'data-fmt-cancelled="Cancelled: nothing was decided."' in page
    # The queue partial the page swaps in on a push is the body of the fold, without a second fold.
    partial = client_for("bob").get("/approvals/queue/").content.decode()
    assert 'data-testid="queue-item"' in partial and "queue-fold" not in partial
