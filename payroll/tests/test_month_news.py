"""The month's run tells the conversation that started it what it owes: the close waits for an
approver (with the totals and the flagged count), the month closed (net pay, headcount, the
files), the close was rejected (the month is open again), a closed month was reopened — each
once, in the reader's language."""
import pytest

from agents.models import Message
from agents.news import news_post
from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from config.words import words_render
from payroll.models import PayrollMonth
from payroll.records import months
from payroll.tests.test_month import NOVEMBER
from tests.helpers import drive, membership
from tests.payroll import month_group, month_inputs
from timeline.models import Event
from timeline.services import conversation_create

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


@pytest.fixture
def group(demo):
    return month_group()


def told(conversation_id) -> list[str]:
    """Post the news of every event (twice: a redelivery posts nothing again); the messages in English."""
    for _ in range(2):
        for event in Event.objects.filter(conversation_id=conversation_id).order_by("seq"):
            news_post(event.id)
    return [words_render(m.words, "en") for m in Message.objects.filter(conversation_id=conversation_id,
                                                                       ).exclude(news_of="").order_by("id")]


def said_in_chinese(conversation_id) -> list[str]:
    return [words_render(m.words, "zh-hans") for m in Message.objects.filter(conversation_id=conversation_id,
                                                                            ).exclude(news_of="").order_by("id")]


def start(group, who="alice"):
    conversation = conversation_create(tenant_id=group.tenant_id, user_id=membership(who).user_id)
    started = months.month_start(membership=membership(who), group_id=group.id, year=2026, month=11,
                                 conversation_id=conversation.id)
    return conversation.id, started.month, drive(started.run)


def decide(run, verdict, comment=""):
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(
        run=run, status="pending").id, verdict=verdict, comment=comment)
    return drive(run)


def test_alice_is_told_the_close_waits_then_that_it_closed_with_its_totals_and_files(group):
    month_inputs(group, 2026, 11, NOVEMBER)
    conversation_id, month, run = start(group)
    totals = PayrollMonth.objects.get(id=month.id).totals
    waiting = [t for t in told(conversation_id) if "waiting for" in t]
    assert len(waiting) == 1
    net = f"{float(totals['net']):,.2f}"
    assert f"“Shanghai Sales” for 2026-11" in waiting[0] and f"{totals['headcount']} employees" in waiting[0]
    assert net in waiting[0] and "flagged for a look" in waiting[0]
    decide(run, "approved")
    messages = told(conversation_id)
    closed = [t for t in messages if "is closed" in t]
    assert len(closed) == 1 and net in closed[0] and f"for {totals['headcount']} employees" in closed[0]
    assert "bank-2026-11.csv, bank-2026-11.xlsx, iit-2026-11.xlsx" in closed[0]
    chinese = said_in_chinese(conversation_id)
    assert any("等待" in t and net in t for t in chinese) and any("已关账" in t for t in chinese)


def test_alice_is_told_who_rejected_the_close_and_that_the_month_is_open_again(group):
    month_inputs(group, 2026, 11, NOVEMBER)
    conversation_id, month, run = start(group)
    decide(run, "rejected", "overtime looks wrong")
    messages = told(conversation_id)
    rejected = [t for t in messages if "rejected" in t]
    assert len(rejected) == 1 and "overtime looks wrong" in rejected[0] and "open again" in rejected[0]
    assert not any("is closed" in t for t in messages)
    assert any("重新打开" in t or "草稿" in t for t in said_in_chinese(conversation_id))


def test_the_admin_is_told_when_the_month_is_reopened(group):
    month_inputs(group, 2026, 11, NOVEMBER)
    _, month, run = start(group)
    decide(run, "approved")
    conversation = conversation_create(tenant_id=group.tenant_id, user_id=membership("ada").user_id)
    reopen = months.month_reopen(membership=membership("ada"), month_id=month.id, reason="a wrong bonus")
    reopen.conversation_id = conversation.id
    reopen.save(update_fields=["conversation_id"])
    reopen = decide(drive(reopen), "approved")
    assert reopen.status == "completed", reopen.status_reason
    messages = told(conversation.id)
    assert any("is reopened" in t and "void" in t for t in messages)
