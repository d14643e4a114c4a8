"""Running a month from the chat: "run November payroll for Shanghai Sales", "发11月工资",
"发上海销售11月的工资" start the month's workflow for that group; Keel asks which group when the
text names none and the tenant has several, and starts nothing twice."""
from datetime import date
from unittest import mock

import pytest

from agents.evaluation import evaluate, labelled_requests, pending_state
from agents.orchestrator import message_post
from payroll.conversation.evaluation import labelled_requests as setup_rows
from payroll.conversation.month_evaluation import READ_ON
from payroll.models import PayrollGroup, PayrollMonth
from payroll.reading.month_request import month_request_read
from tests.helpers import drive, membership, no_broker
from tests.payroll import month_group, tenant
from timeline.services import conversation_create
from workflows.models import Run

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]


def second_group():
    return PayrollGroup.objects.create(tenant=tenant("demo"), name="Beijing Engineering", city="beijing")


def say(*texts, username="alice"):
    m = membership(username)
    conv = conversation_create(tenant_id=m.tenant_id, user_id=m.user_id)
    with no_broker():
        return conv, [message_post(membership=m, conversation_id=conv.id, text=t) for t in texts]


def test_it_runs_november_for_the_group_the_request_names():
    group = month_group()
    second_group()
    conv, (said,) = say("run November payroll for Shanghai Sales")
    month = PayrollMonth.objects.get(group=group)
    assert (month.year, month.month) == (date.today().year, 11)
    assert said["run_id"] == str(month.run_id) and month.run.conversation_id == conv.id
    assert "Shanghai Sales" in said["reply"] and "November" in said["reply"]
    with no_broker():
        assert drive(month.run).status in ("awaiting_input", "awaiting_approval")  # gather asks, or it computed


def test_it_reads_a_chinese_request_naming_the_group_in_chinese():
    group = month_group()
    second_group()
    _, (said,) = say("发上海销售11月的工资")
    assert PayrollMonth.objects.get(group=group).month == 11
    assert said["run_id"]


def test_with_several_groups_and_none_named_it_asks_which_and_the_answer_starts_it():
    month_group()
    other = second_group()
    conv, (asked, answered) = say("发11月工资", "Beijing Engineering")
    assert asked["run_id"] is None and {o["label"] for o in asked["options"]} >= {"Shanghai Sales",
                                                                                  "Beijing Engineering"}
    assert answered["run_id"] and PayrollMonth.objects.get(group=other).month == 11
    assert pending_state(conv.id, "payroll_month") is None
    assert not PayrollMonth.objects.exclude(group=other).exists()


def test_the_only_group_needs_no_question():
    group = month_group()
    _, (said,) = say("发11月工资")
    assert said["run_id"] and PayrollMonth.objects.get(group=group).month == 11


def test_a_month_that_exists_is_named_and_nothing_starts_again():
    group = month_group()
    say("run November payroll for Shanghai Sales")
    runs = Run.objects.count()
    _, (said,) = say("run November payroll for Shanghai Sales", username="bob")
    month = PayrollMonth.objects.get(group=group)
    assert said["run_id"] is None and "exists already" in said["reply"] and f"/payroll/months/{month.id}/" in said["reply"]
    assert Run.objects.count() == runs


def test_early_in_the_year_december_asks_which_year():
    group = month_group()
    with mock.patch("payroll.conversation.month.timezone.localdate", return_value=date(2027, 1, 5)):
        conv, (asked, answered) = say("run December payroll for Shanghai Sales", "2026")
    assert asked["run_id"] is None and [o["label"] for o in asked["options"]] == ["2026", "2027"]
    month = PayrollMonth.objects.get(group=group)
    assert (month.year, month.month) == (2026, 12) and answered["run_id"] == str(month.run_id)


def test_no_setup_request_of_the_labelled_set_reads_as_a_month():
    assert not [r["t"] for r in setup_rows() if month_request_read(r["t"], READ_ON)]


def test_the_labelled_month_requests_are_understood():
    rows = [r for r in labelled_requests() if r["_domain"] == "payroll_month"]
    assert {r["s"] for r in rows} == {"tune", "heldout"}
    score = evaluate([r for r in rows if r["s"] == "tune"])
    assert score.accuracy("intent") == 1.0 and score.accuracy("month") == 1.0 and score.accuracy("group") == 1.0, \
        score.misses
