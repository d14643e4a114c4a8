"""What the API answers and the pages show when something is refused reads in the
caller's language (Accept-Language, or the language the person chose), and refusing still changes
nothing. Texts that are data by design (routing reasons, step goals, blueprint titles) are stored
as written and shown in the reader's language."""
import pytest
from django.utils import translation

from approvals.matrix import approval_route, routing_reason_shown
from approvals.models import ApprovalRequest, ApprovalStatus
from approvals.services import approval_decide
from expenses.models import ClaimStatus, ExpenseClaim
from expenses.records.services import Actor, claim_create, claim_submit
from tests.helpers import client_for, membership, run_to_approval

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]
CLAIM = {"category": "lodging", "city": "Beijing", "start_date": "2026-11-16", "nights": 2, "amount": "1400"}
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-Hans"}
EN = {"HTTP_ACCEPT_LANGUAGE": "en"}


def submitted_claim_of(username: str) -> int:
    actor = Actor.of_member(membership(username))
    claim_id = claim_create(actor=actor, idempotency_key="c", **CLAIM).body["application_id"]
    claim_submit(actor=actor, claim_id=claim_id, idempotency_key="s")
    return int(claim_id)


def approve_own_claim(client, claim_id: int, key: str, **headers):
    return client.post(f"/api/v1/expenses/claims/{claim_id}/approve/", {}, content_type="application/json",
                       HTTP_IDEMPOTENCY_KEY=key, **headers)


def test_a_refusal_reads_in_the_language_the_caller_asks_for_and_changes_nothing():
    claim_id = submitted_claim_of("bob")
    bob = client_for("bob")
    zh = approve_own_claim(bob, claim_id, "zh", **ZH)
    assert zh.status_code == 403 and zh["Content-Type"] == "application/problem+json"
    body = zh.json()
    assert body["detail"] == "此申请是你提交的，必须由其他人决定（四眼原则）。"
    assert body["title"] == "无权操作" and body["code"] == "four_eyes"  # the code stays a code
    en = approve_own_claim(bob, claim_id, "en", **EN).json()
    assert en["detail"] == "You filed this claim, so someone else must decide it (four-eyes rule)."
    assert en["title"] == "Forbidden"
    assert ExpenseClaim.objects.get(id=claim_id).status == ClaimStatus.SUBMITTED


def test_a_bad_value_and_an_unknown_endpoint_read_in_chinese():
    alice = client_for("alice")
    bad = alice.post("/api/v1/expenses/claims/", {**CLAIM, "amount": "lots"}, content_type="application/json",
                     HTTP_IDEMPOTENCY_KEY="bad", **ZH)
    assert bad.status_code == 400
    assert bad.json()["detail"] == "金额必须是数字，而不是 'lots'。" and bad.json()["title"] == "请求错误"
    invalid = alice.post("/api/v1/expenses/claims/", {**CLAIM, "nights": "many"}, content_type="application/json",
                         HTTP_IDEMPOTENCY_KEY="invalid", **ZH).json()
    assert invalid["detail"].startswith("请求无效。 nights: ") and "请填写合法的整数" in invalid["detail"]
    assert ExpenseClaim.objects.count() == 0
    missing = alice.get("/api/v1/no-such-thing/", **ZH)
    assert missing.status_code == 404 and missing.json()["detail"] == "/api/v1/no-such-thing/ 没有 API 端点。"


def test_the_language_a_person_chose_wins_over_the_browsers():
    claim_id = submitted_claim_of("bob")
    bob = client_for("bob")
    assert bob.post("/language/", {"language": "zh-hans", "next": "/"}).status_code == 302
    body = approve_own_claim(bob, claim_id, "chosen", **EN).json()
    assert body["detail"] == "此申请是你提交的，必须由其他人决定（四眼原则）。"


def test_routing_reasons_are_stored_as_meaning_and_read_in_chinese():
    route = approval_route(tenant_id=membership("ada").tenant_id, tool="a_tool_without_a_row", measures={})
    assert route.reason == "An approver or a tenant admin may approve."  # the English, kept for search
    with translation.override("zh-hans"):
        assert routing_reason_shown(route.reason_words) == "审批人或租户管理员可以批准。"
        # a reason stored as prose before reasons were words reads as it was written
        assert routing_reason_shown("Something a later version wrote.") == "Something a later version wrote."
    with translation.override("en"):
        assert routing_reason_shown(route.reason_words) == "An approver or a tenant admin may approve."


def test_the_approvals_page_names_decisions_and_steps_in_chinese():
    run = run_to_approval()
    approval = ApprovalRequest.objects.get(run=run)
    assert approval.routing_reason.endswith("may approve.")  # stored as written
    approval_decide(membership=membership("bob"), approval_id=approval.id, verdict=ApprovalStatus.APPROVED)
    page = client_for("bob").get(f"/approvals/{approval.id}/", **ZH).content.decode()
    recent = page.split('data-testid="recent"', 1)[1].split("</ul>", 1)[0]
    assert "已批准" in recent and ">approved<" not in recent
    assert "步骤“将模板导入新薪资组”" in page and "Import the template into a new group" not in page
    assert "审批矩阵：在上限之内：审批人或租户管理员可以批准。" in page
    assert "此审批状态为“%(status)s”" in page  # approvals.js's refusal, translated, on the page
    history = client_for("bob").get(f"/approvals/runs/{run.id}/history/", **ZH).content.decode()
    assert "薪资组设置" in history and "Payroll group setup" not in history
