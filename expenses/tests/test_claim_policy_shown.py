"""The claim page shows the policy verdict the run reached: a claim over the limit waits for its
approver with the check done, so "not checked" there would contradict the run."""
import pytest

from django.utils import translation

from approvals.models import ApprovalRequest

from expenses.models import ExpenseClaim, PolicyVerdict
from workflows.models import StateCoordinate
from workflows.services import run_start
from tests.helpers import client_for, drive, membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]
OVER = {"category": "lodging", "city": "Shanghai", "start_date": "2026-12-01", "nights": 3, "amount": "3000"}


@pytest.mark.parametrize("lang, verdict, unchecked", [("en", "Over the policy limit", "not checked"),
                                                      ("zh-CN", "超出政策限额", "未检查")])
def test_a_claim_waiting_for_its_approver_shows_the_verdict_its_run_reached(lang, verdict, unchecked):
    run = drive(run_start(membership=membership("alice"), blueprint="expense_claim", params=OVER))
    assert run.status == "awaiting_approval"
    claim = ExpenseClaim.objects.get(id=int(ApprovalRequest.objects.get(run=run).arguments["application_id"]))
    assert claim.policy_verdict == ""  # the claim records it at its submit, which waits
    check = StateCoordinate.objects.get(run=run, key="policy_check").value
    with translation.override("zh-hans" if lang.startswith("zh") else "en"):
        verdict = str(PolicyVerdict(check["verdict"]).label)
    assert check["verdict"] != ""
    html = client_for("bob").get(f"/expenses/claims/{claim.id}/", HTTP_ACCEPT_LANGUAGE=lang).content.decode()
    policy = html.split('data-testid="policy"', 1)[1].split("</td>", 1)[0]
    assert verdict in policy and unchecked not in policy, policy
    assert f'href="/runs/{run.id}/"' in policy
    listed = client_for("bob").get("/expenses/", HTTP_ACCEPT_LANGUAGE=lang).content.decode()
    row = listed.split(f'/expenses/claims/{claim.id}/', 1)[1].split("</tr>", 1)[0]
    assert verdict in row and unchecked not in row, row


def test_a_claim_no_run_checked_still_says_not_checked():
    client = client_for("alice")
    client.post("/expenses/", {"form_key": "k1", "category": "meals", "city": "Beijing",
                                      "start_date": "2026-12-01", "nights": 0, "amount": "80"})
    claim = ExpenseClaim.objects.get(amount="80")
    policy = client.get(f"/expenses/claims/{claim.id}/").content.decode().split('data-testid="policy"', 1)[1]
    assert "not checked" in policy.split("</td>", 1)[0]


def test_the_claims_list_reads_every_waiting_claims_verdict_in_the_same_few_queries():
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def listed() -> tuple[str, int]:
        with CaptureQueriesContext(connection) as queries:
            html = client_for("bob").get("/expenses/").content.decode()
        return html, len(queries.captured_queries)

    runs = [drive(run_start(membership=membership("alice"), blueprint="expense_claim",
                            params={**OVER, "city": city})) for city in ("Shanghai", "Beijing")]
    _, two = listed()
    runs += [drive(run_start(membership=membership("alice"), blueprint="expense_claim",
                             params={**OVER, "city": city})) for city in ("Shenzhen", "Guangzhou", "Hangzhou")]
    html, five = listed()
    assert five == two  # not one more query per claim
    for run in runs:
        claim_id = ApprovalRequest.objects.get(run=run).arguments["application_id"]
        row = html.split(f'/expenses/claims/{claim_id}/', 1)[1].split("</tr>", 1)[0]
        assert "not checked" not in row and "verdict-" in row, row
