"""The claim's history records the policy check's finding as words: a claim checked in
Chinese reads in English for an English reader (the limit's unit too), and in Chinese for a
Chinese one; a history row written before words reads as it was written."""
import pytest
from django.conf import settings
from django.utils import translation

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from expenses.models import ClaimTransition, ExpenseClaim
from expenses.records.services import reason_shown
from tests.helpers import client_for, drive, membership
from workflows.services import run_start

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]
OVER = {"category": "lodging", "city": "Beijing", "start_date": "2026-11-16", "nights": 2, "amount": "1800",
        "lang": "zh"}


@pytest.fixture(autouse=True)
def _default_language_after():
    yield
    translation.activate(settings.LANGUAGE_CODE)


def page(url: str, language: str) -> str:
    response = client_for("alice").get(url, HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200, response.content[:500]
    return response.content.decode()


def submitted_claim() -> ExpenseClaim:
    run = drive(run_start(membership=membership("alice"), blueprint="expense_claim", params=OVER))
    approval = ApprovalRequest.objects.get(run=run, status="pending")
    approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="approved")
    assert drive(run).status == "completed"
    return ExpenseClaim.objects.get(id=int(approval.arguments["application_id"]))


def test_the_history_reads_the_check_in_the_readers_language():
    claim = submitted_claim()
    zh = page(f"/expenses/claims/{claim.id}/", "zh-hans")
    assert "每晚 900.00 CNY，超出 750 元/间/晚 的标准（travel-v2，自 2026-01-01 起生效）。" in zh
    assert "a night is over the limit" not in zh
    en = page(f"/expenses/claims/{claim.id}/", "en")
    assert ("900.00 CNY a night is over the limit of 750 yuan per room per night (travel-v2, in force from "
            "2026-01-01).") in en
    assert "元/间/晚" not in en and "超出" not in en


def test_a_history_row_written_before_words_reads_as_written():
    claim = submitted_claim()
    ClaimTransition.objects.filter(claim=claim, to_status="submitted").update(
        reason="900.00 CNY a night is over the limit of 750 元/间/晚 (travel-v2, in force from 2026-01-01).")
    assert "900.00 CNY a night is over the limit of 750 元/间/晚" in page(f"/expenses/claims/{claim.id}/", "zh-hans")
    assert reason_shown("submitted") == "submitted" and reason_shown("{not json") == "{not json"
