"""The expense claim in the conversation, in English and Chinese."""
import re
from datetime import date

import pytest

from expenses.reading.facts import facts_read
from agents.orchestrator import message_post
from approvals.models import ApprovalRequest
from expenses.models import ExpenseClaim
from timeline.services import conversation_create
from workflows.models import Run
from tests.helpers import drive, membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]
EN = "Please file an expense claim: lodging in Beijing, 2 nights from 2026-11-16, 1,800 yuan in total"
ZH = "报销上周北京出差两晚住宿费1800元"


def say(text: str, conversation=None, who: str = "alice"):
    m = membership(who)
    conversation = conversation or conversation_create(tenant_id=m.tenant_id, user_id=m.user_id)
    return conversation, message_post(membership=m, conversation_id=conversation.id, text=text)


def test_the_english_request_starts_a_claim_run_that_waits_for_an_approver():
    _, reply = say(EN)
    assert reply["intent"] == "resolve" and reply["run_id"]
    assert reply["reply"].startswith("I've filed an expense claim: lodging in Beijing, 2 nights from 2026-11-16, "
                                     "1,800 yuan (900 yuan a night).")
    assert "Please attach the invoice" in reply["reply"]  # none came with it
    assert "payroll" not in reply["reply"].lower() and "import" not in reply["reply"].lower()
    run = drive(Run.objects.get(id=int(reply["run_id"])))
    assert run.blueprint == "expense_claim" and run.status == "awaiting_approval"
    assert "750" in ApprovalRequest.objects.get(run=run).summary


def test_the_chinese_request_reads_last_week_two_nights_and_1800_yuan():
    facts = facts_read(ZH, today=date(2026, 11, 30))
    assert (facts.category, facts.city, facts.nights, str(facts.amount), facts.start_date) == \
        ("lodging", "Beijing", 2, "1800", date(2026, 11, 23))
    _, reply = say(ZH)
    assert reply["run_id"] and re.search(r"已提交报销申请：北京住宿，\d{4}-\d\d-\d\d起2晚，共1,800元（900元/晚）", reply["reply"])
    assert "请在此对话中附上发票" in reply["reply"]
    run = Run.objects.get(id=int(reply["run_id"]))
    assert run.params["lang"] == "zh" and run.params["nights"] == 2


def test_a_missing_amount_is_asked_for_and_the_answer_starts_the_claim():
    conversation, reply = say("Please file an expense claim: hotel in Shanghai, 3 nights from 2026-10-05")
    assert reply["run_id"] is None and "total amount" in reply["reply"]
    assert not ExpenseClaim.objects.exists()
    _, reply = say("2,100 yuan", conversation)
    run = Run.objects.get(id=int(reply["run_id"]))
    assert run.params["amount"] == "2100.00" and run.params["city"] == "Shanghai" and run.params["nights"] == 3


def test_a_missing_date_is_asked_for_in_chinese():
    _, reply = say("我要报销北京两晚住宿费1500元")
    assert reply["run_id"] is None and "入住日期" in reply["reply"]


def test_a_question_about_the_reimbursement_limit_is_still_a_policy_question():
    _, reply = say("北京住宿报销标准是多少？")
    assert reply["intent"] == "analyze" and reply["run_id"] is None and "750" in reply["reply"]
