"""The approval card of a conversation's run: the user's own words and the
agent's assumptions, in the user's language; employees of an attached HR export that the
system of record does not have yet are proposed as new, created on approval (once,
in the tenant) and assigned; a rejection creates nothing."""
import io

import pytest
from openpyxl import Workbook

from agents.orchestrator import message_post
from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from config.words import words_render
from payroll.models import Employee
from tenants.models import Tenant
from timeline.services import conversation_create
from workflows.models import Run
from tests.helpers import drive, membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]


def say(text, attachment=None, username="alice"):
    m = membership(username)
    conv = conversation_create(tenant_id=m.tenant_id, user_id=m.user_id, title="")
    return message_post(membership=m, conversation_id=conv.id, text=text, attachment=attachment)


def workbook(rows):
    book = Workbook()
    sheet = book.active
    for row in rows:
        sheet.append(row)
    raw = io.BytesIO()
    book.save(raw)
    return raw.getvalue()


def export_with_one_new():
    # With the newcomer's salary: the trial after the import computes every employee.
    return workbook([["工号", "姓名", "部门", "城市", "基本工资"], ["D-0001", "", "", "", ""],
                     ["N-7001", "Lin Xiaoyu 林晓雨", "Sales", "Shanghai", "18000"]])


def started(result):
    run = drive(Run.objects.get(id=int(result["run_id"])))
    assert run.status == "awaiting_approval", run.status_reason
    return run, ApprovalRequest.objects.get(run=run)


def test_the_card_proposes_the_unknown_employee_and_approval_creates_and_assigns_them():
    result = say("set up a monthly payroll group for our Shanghai sales team with commission, called 'New Faces'",
                 attachment=("export.xlsx", export_with_one_new()))
    assert "not in the payroll system yet" in result["reply"]
    run, approval = started(result)
    [proposed] = approval.diff["new_employees"]
    assert {k: proposed[k] for k in ("employee_no", "name", "department", "location")} == {
        "employee_no": "N-7001", "name": "Lin Xiaoyu 林晓雨", "department": "Sales", "location": "Shanghai"}
    assert approval.measures["headcount"] == 2
    assert not Employee.objects.filter(employee_no="N-7001").exists()  # nothing before the decision
    approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="approved")
    run = drive(run)
    assert run.status == "completed", run.status_reason
    tenant = Tenant.objects.get(slug="demo")
    new = Employee.objects.get(tenant=tenant, employee_no="N-7001")
    assert new.name == "Lin Xiaoyu 林晓雨" and new.department == "Sales" and new.location == "Shanghai"
    assert new.group.name == "New Faces"
    assert Employee.objects.get(tenant=tenant, employee_no="D-0001").group_id == new.group_id
    assert Employee.objects.filter(employee_no="N-7001").count() == 1  # only in this tenant, once


def test_an_export_of_only_new_employees_creates_and_assigns_them_after_approval():
    """The run used to roll back after approval with "step assign failed
    (assign_employees: invalid arguments: [] should be non-empty)" when nobody on the list was
    in the system of record yet."""
    export = workbook([["工号", "姓名", "部门", "城市", "基本工资"],
                       ["N-7101", "He Jia 何佳", "Sales", "Shanghai", "17000"],
                       ["N-7102", "Sun Yue 孙悦", "Sales", "Shanghai", "16500"]])
    result = say("set up a monthly payroll group for our Shanghai sales team with commission, called 'All New'",
                 attachment=("export.xlsx", export))
    run, approval = started(result)
    approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="approved")
    run = drive(run)
    assert run.status == "completed", run.status_reason
    made = Employee.objects.filter(employee_no__in=["N-7101", "N-7102"]).select_related("group")
    assert sorted(e.group.name for e in made) == ["All New", "All New"]


def test_a_rejection_creates_nobody():
    result = say("set up a monthly payroll group for our Shanghai sales team with commission, called 'Not Yet'",
                 attachment=("export.xlsx", export_with_one_new()))
    run, approval = started(result)
    approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="rejected", comment="no")
    drive(run)
    assert not Employee.objects.filter(employee_no="N-7001").exists()


def test_a_row_with_an_unknown_number_and_no_name_is_still_refused():
    from config.api import DomainError
    with pytest.raises(DomainError) as caught:
        say("set up monthly payroll for Shanghai sales with commission",
            attachment=("team.csv", b"employee_no,name\nD-0001,\nN-9999,\n"))
    assert "Line 3" in caught.value.message


def test_the_card_carries_the_request_and_the_assumptions_in_the_users_language():
    result = say("Set up a payroll group for our Shanghai sales team with commission")
    _, approval = started(result)
    context = approval.measures["context"]
    assert context["request"] == "Set up a payroll group for our Shanghai sales team with commission"
    # Stored as words: each approver reads them in their own language (console/tests/test_approval_pages.py).
    shown = [words_render(a, "en") for a in context["assumptions"]]
    assert "assumed a monthly pay cycle; no pay cycle was stated" in shown
    assert any("no name was stated" in a for a in shown)

    result = say("帮我给上海销售团队建一个薪资组，有提成，叫“沪销一组”")
    _, approval = started(result)
    context = approval.measures["context"]
    assert context["lang"] == "zh" and context["request"].startswith("帮我给上海销售")
    assert [words_render(a, "zh-hans") for a in context["assumptions"]] == ["假定按月发薪：请求中没有说明发薪周期"]


def test_a_fully_stated_request_makes_no_assumption():
    result = say("set up a monthly payroll group for our Shanghai sales team with commission, called 'Stated'")
    _, approval = started(result)
    assert approval.measures["context"]["assumptions"] == []
