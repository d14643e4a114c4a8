"""What a card, the provenance table and the admin show of a stored value is
what a person reads — a table, a list, a name in their language — never a Python dict."""
import re

import pytest
from django.utils import translation

from approvals.models import ApprovalRequest
from config.words import localised, value_text, words
from hr.models import OutboxEvent, Tan
from hr.services import Actor, tan_approve
from hr.supervisor import tan_event_consume
from tests.helpers import client_for, drive, membership
from workflows.models import Run, StateCoordinate

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]
RAW = re.compile(r"\{'|\{&#x27;|': |&#x27;: |\{&quot;|\{\"")  # str(dict) or JSON in HTML, escaped or not


def matches_waiting() -> ApprovalRequest:
    m = membership("ada")
    tan = Tan.objects.get(title="Senior Backend Engineer")
    tan_approve(actor=Actor(tenant_id=m.tenant_id, user_id=m.user_id, role=m.role), tan_id=tan.id)
    run = drive(Run.objects.get(id=tan_event_consume(OutboxEvent.objects.get(tan=tan).id)))
    return ApprovalRequest.objects.get(run=run)


def test_the_candidate_matches_card_is_a_table_of_candidates_not_a_dict():
    approval = matches_waiting()
    page = client_for("bob").get(f"/approvals/{approval.id}/").content.decode()
    card = page.split('data-testid="card-rows"', 1)[1].split("</form>", 1)[0]
    assert "<table" in card and "Li Wei" in card
    assert not RAW.search(card), card[:2000]


def test_a_chinese_approver_reads_the_card_and_the_provenance_without_a_dict():
    approval = matches_waiting()
    page = client_for("bob").get(f"/approvals/{approval.id}/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    card = page.split('data-testid="card-rows"', 1)[1].split("</form>", 1)[0]
    assert "<table" in card and not RAW.search(card)
    assert StateCoordinate.objects.filter(run=approval.run).exists()
    timeline = client_for("dora").get(f"/conversations/{approval.run.conversation_id}/timeline/?view=developer",
                                      HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert timeline.status_code == 200
    values = re.findall(r'<code class="coordinate-value">(.*?)</code>', timeline.content.decode(), re.S)
    assert values and not any(RAW.search(v) for v in values), values


def test_a_value_reads_as_a_person_reads_it_in_either_language():
    value = {"city": localised("Hangzhou", "杭州"), "skills": ["python", "sql"], "nights": 2}
    with translation.override("en"):
        assert value_text(value) == "City: Hangzhou · Skills: python, sql · Nights: 2"
    with translation.override("zh-hans"):
        assert value_text(value) == "City: 杭州 · Skills: python、sql · Nights: 2"
        assert value_text(words("Done: %(what)s.", what="x")) == "完成了：x。"
    assert value_text(None) == "—"
    assert len(value_text("x" * 1000)) == 400
