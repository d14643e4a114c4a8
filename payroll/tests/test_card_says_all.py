"""Every change an approval card makes is on the card: an employee moved out of another group
(that group's name and its owner), an employee created (with the salary), a salary set (old →
new). A salary Keel needs is asked before the approval, never after; the owners of what the
card changed are told afterwards, once, in their own conversation and language. Two runs that
want the same employee never both reach a card for it."""
from __future__ import annotations

import re
from decimal import Decimal

import pytest

from agents.models import Message
from agents.news import news_post
from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from payroll.models import Employee, EmployeePay, PayrollGroup
from timeline.models import Event
from workflows.models import Node, Run
from workflows.services import node_input_answer, run_start
from tests.helpers import client_for, drive, membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}
REQUEST = "set up a monthly payroll group for our Shanghai sales team, called '{name}'"


def start(who, name, **params):
    return drive(run_start(membership=membership(who), blueprint="payroll_group_setup",
                           params={"request": REQUEST.format(name=name), "group_name": name, **params}))


def approve(run, by="bob"):
    approval = ApprovalRequest.objects.get(run=run, status="pending")
    approval_decide(membership=membership(by), approval_id=approval.id, verdict="approved")
    return drive(run)


def post_news(conversation_id):
    for event in Event.objects.filter(conversation_id=conversation_id).order_by("seq"):
        news_post(event.id)  # what the news task does on a worker; a second post is a no-op


def card(approval, **lang) -> str:
    return client_for("bob").get(f"/approvals/{approval.id}/", **lang).content.decode()


def li_na():
    return Employee.objects.get(tenant=membership("alice").tenant, employee_no="D-0003")


def alices_csv_group():
    made = start("alice", "CSV Sales EN", employee_ids=[str(li_na().id)])
    made = approve(made)
    assert made.status == "completed", made.status_reason
    assert li_na().group.name == "CSV Sales EN"
    post_news(made.conversation_id)
    return made


def test_an_employee_moved_out_of_another_group_is_its_own_line_and_its_owner_is_told_once_in_chinese():
    made = alices_csv_group()
    before = Message.objects.filter(conversation_id=made.conversation_id).count()

    second = start("alice", "CSV销售中文", employee_ids=[str(li_na().id)])
    assert second.status == "awaiting_approval", second.status_reason
    approval = ApprovalRequest.objects.get(run=second, status="pending")
    [moved] = approval.diff["moved"]
    assert moved["employee_no"] == "D-0003" and moved["from_group"] == "CSV Sales EN"
    assert moved["owner"] == "Alice Chen"
    english = card(approval)
    line = re.search(r'data-testid="moved-employee"[^>]*>(.*?)</li>', english, re.S)
    assert line, english
    said = re.sub(r"<[^>]+>", " ", line.group(1))
    said = " ".join(said.split())
    assert "Li Na" in said and "D-0003" in said and "CSV Sales EN" in said and "CSV销售中文" in said
    assert "Alice Chen" in said, said
    assert "no existing group or item changes" not in english
    chinese = card(approval, **ZH)
    assert "移出" in chinese and "CSV Sales EN" in chinese

    done = approve(second)
    assert done.status == "completed", done.status_reason
    assert li_na().group.name == "CSV销售中文"
    post_news(made.conversation_id)
    post_news(made.conversation_id)  # redelivered: still one message
    told = list(Message.objects.filter(conversation_id=made.conversation_id).order_by("created_at")[before:])
    assert len(told) == 1, [m.text for m in told]
    assert "Li Na 李娜 (D-0003) was moved from your group “CSV Sales EN” to “CSV销售中文” by Bob Li's approval of " \
           "Alice Chen's run" in told[0].text, told[0].text
    assert told[0].link["href"] == f"/runs/{second.id}/"
    chat_zh = client_for("alice").get(f"/conversations/{made.conversation_id}/", **ZH).content.decode()
    assert "从您的薪资组“CSV Sales EN”移到了“CSV销售中文”" in chat_zh, "alice reads it in her language"
    # The second run's own conversation is told by its own news, not by a "moved" message.
    assert not Event.objects.filter(conversation_id=second.conversation_id, type="record.changed").exists()


def test_an_unknown_employees_salary_is_asked_before_the_approval_and_is_on_the_card():
    run = start("alice", "New People", new_employees=[
        {"employee_no": "X-9999", "name": "Xu Ming", "department": "Sales", "location": "Shanghai"},
        {"employee_no": "X-9998", "name": "Qian Li", "department": "Sales", "location": "Shanghai",
         "pay": {"base_salary": "15000"}}])
    assert run.status == "awaiting_input", run.status_reason
    assert not ApprovalRequest.objects.filter(run=run).exists(), "no approver is asked before the salary is known"
    question = Node.objects.get(run=run, status="awaiting_input", retired_in__isnull=True)
    assert question.key == "salaries"
    assert "Xu Ming (X-9999)" in question.question["text"] and "Qian Li" not in question.question["text"]
    node_input_answer(membership=membership("alice"), run_id=run.id, answer="12,000")
    run = drive(run)
    assert run.status == "awaiting_approval", run.status_reason
    approval = ApprovalRequest.objects.get(run=run, status="pending")
    english = card(approval)
    rows = dict(re.findall(r'data-testid="new-employee" data-key="([^"]+)"(.*?)</tr>', english, re.S))
    assert "12,000.00" in rows["X-9999"] and "15,000.00" in rows["X-9998"], rows
    pay = re.search(r'data-testid="pay-change" data-key="X-9999"(.*?)</tr>', english, re.S)
    assert pay and "new: 12,000.00" in " ".join(re.sub(r"<[^>]+>", " ", pay.group(1)).split()), english
    assert "after the approval" not in english
    assert not Employee.objects.filter(employee_no="X-9999").exists(), "nothing written before the approval"

    run = approve(run)
    assert run.status == "completed", run.status_reason
    assert Employee.objects.get(employee_no="X-9999").pay_history.get().base_salary == Decimal("12000")
    assert not Node.objects.filter(run=run, key="trial", question__isnull=False).exclude(question={}).exists()


def test_a_salary_change_for_an_employee_the_tenant_has_reads_old_to_new():
    employee = li_na()
    old = employee.pay_on(__import__("datetime").date.today())
    assert old is not None
    run = start("alice", "Raise", employee_ids=[str(employee.id)],
                employee_pay=[{"employee_id": str(employee.id), "pay": {"base_salary": "31000"}}])
    approval = ApprovalRequest.objects.get(run=run, status="pending")
    pay = re.search(r'data-testid="pay-change" data-key="D-0003"(.*?)</tr>', card(approval), re.S)
    said = " ".join(re.sub(r"<[^>]+>", " ", pay.group(1)).split())
    assert f"{Decimal(old.base_salary):,.2f} → 31,000.00" in said, said


def test_two_runs_wanting_the_same_employee_never_both_reach_a_card():
    made = alices_csv_group()
    first = start("alice", "Team One", employee_ids=[str(li_na().id)])
    second = start("bob", "Team Two", employee_ids=[str(li_na().id)])
    assert first.status == "awaiting_approval"
    assert second.status == "awaiting_input" and not ApprovalRequest.objects.filter(run=second).exists()
    assert f"run {first.id}" in Node.objects.get(run=second, status="awaiting_input").question["text"]
    assert approve(first).status == "completed"
    node_input_answer(membership=membership("bob"), run_id=second.id, answer="retry")
    second = drive(second)
    approval = ApprovalRequest.objects.get(run=second, status="pending")
    [moved] = approval.diff["moved"]
    assert moved["from_group"] == "Team One" and moved["owner"] == "Alice Chen", "the card is the one after the move"
    assert made.status == "completed"


def test_a_card_with_nothing_moved_says_no_existing_group_changes():
    employee = Employee.objects.filter(tenant=membership("alice").tenant, group__isnull=True,
                                       base_salary__gt=0).first()
    run = start("alice", "Fresh", employee_ids=[str(employee.id)])
    approval = ApprovalRequest.objects.get(run=run, status="pending")
    assert approval.diff.get("moved") == []
    assert "no existing group or item changes" in card(approval)
    assert not EmployeePay.objects.filter(source__startswith="answer").exists()
    assert PayrollGroup.objects.filter(name="Fresh").count() == 0
