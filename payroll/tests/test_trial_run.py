"""A payroll group is set up when a trial month computes: salaries in the system of
record (EmployeePay, from an HR export in English or Chinese), the trial step of the setup run
(months 1–3 for every employee of the new group, its totals as its receipt), its question when a
salary is missing, its block when the city has no rules, and what people see of it: the
approval card, the chat's news, the payslip and rules pages."""
from __future__ import annotations

import re
from datetime import date
from decimal import Decimal

import pytest

from agents.orchestrator import message_post
from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from payroll.reading.attachments import employee_list_parse
from payroll.models import Employee, EmployeePay, PayrollGroup, PayrollTemplate
from payroll.records.services import employee_pay_record
from tests.payroll import actor_for, tenant
from timeline.services import conversation_create
from workflows.models import Node, Run, ToolCall
from tests.helpers import drive, membership, statuses

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]

EXPORT_ZH = ("工号,姓名,部门,城市,基本工资,岗位津贴,交通补贴,专项附加扣除\n"
             "T-1001,王芳,Sales,Shanghai,\"18,000\",1500,300,2000\n"
             "T-1002,李强,Sales,Shanghai,12000,800,,1000\n"
             "T-1003,陈静,Sales,Shanghai,9000,,,\n"
             "T-1004,赵磊,Sales,Shanghai,25000,2000,500,3000\n").encode()


def say(text, attachment=None, username="alice", conversation=None):
    m = membership(username)
    conv = conversation or conversation_create(tenant_id=m.tenant_id, user_id=m.user_id, title="")
    return message_post(membership=m, conversation_id=conv.id, text=text, attachment=attachment), conv


def approve(run):
    approval = ApprovalRequest.objects.get(run=run, status="pending")
    approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="approved")
    return drive(run)


def started(text, attachment=None):
    result, conv = say(text, attachment)
    run = drive(Run.objects.get(id=int(result["run_id"])))
    assert run.status == "awaiting_approval", run.status_reason
    return run, conv


def trial_output(run) -> dict:
    call = ToolCall.objects.filter(run=run, tool="trial_payroll", status=ToolCall.Status.SUCCEEDED).latest("id")
    return call.result


# --- salaries in the system of record ---------------------------------------------------------

def test_it_reads_salaries_from_an_export_with_chinese_headers():
    parsed = employee_list_parse(tenant_id=tenant("demo").id, filename="export.csv", raw=EXPORT_ZH)
    first = parsed.new_employees[0]
    assert first["employee_no"] == "T-1001"
    assert first["pay"] == {"base_salary": "18000.00", "allowances": {"岗位津贴": "1500.00", "交通补贴": "300.00"},
                            "special_additional_deductions": "2000.00", "deductions_breakdown": {}}
    assert parsed.new_employees[2]["pay"]["allowances"] == {}
    assert "pay" in parsed.new_employees[3]


def test_it_reads_english_headers_deductions_by_kind_and_existing_employees_pay():
    raw = (b"Employee ID,Name,Base salary,allowance: Meal,Children's education,Elderly support\n"
           b"D-0001,,9100,400,1000,2000\n")
    parsed = employee_list_parse(tenant_id=tenant("demo").id, filename="team.csv", raw=raw)
    assert parsed.new_employees == []
    [entry] = parsed.employee_pay
    assert entry["employee_id"] == parsed.employee_ids[0]
    assert entry["pay"] == {"base_salary": "9100.00", "allowances": {"Meal": "400.00"},
                            "special_additional_deductions": "3000.00",
                            "deductions_breakdown": {"children_education": "1000.00", "elderly_support": "2000.00"}}


def test_it_refuses_an_amount_that_is_not_one():
    from config.api import DomainError
    with pytest.raises(DomainError) as caught:
        employee_list_parse(tenant_id=tenant("demo").id, filename="x.csv",
                            raw="工号,姓名,基本工资\nT-1,张三,一万\n".encode())
    assert "Line 2" in caught.value.message


def test_pay_on_reads_the_row_in_force_and_falls_back_to_base_salary():
    employee = Employee.objects.filter(tenant=tenant("demo"), base_salary__gt=0).first()
    assert employee.pay_on(date(2026, 1, 1)).base_salary == employee.base_salary  # the fallback, not saved
    employee_pay_record(actor=actor_for("bob"), idempotency_key="pay-1", source="test", employee_pay=[
        {"employee_id": str(employee.id), "pay": {"base_salary": "30000", "effective_from": "2026-02-01"}}])
    employee_pay_record(actor=actor_for("bob"), idempotency_key="pay-2", source="test", employee_pay=[
        {"employee_id": str(employee.id), "pay": {"base_salary": "30000", "effective_from": "2026-02-01"}}])
    assert EmployeePay.objects.filter(employee=employee).count() == 1  # the same pay is not written twice
    assert employee.pay_on(date(2026, 2, 15)).base_salary == Decimal("30000")
    assert employee.pay_on(date(2026, 1, 31)).base_salary == employee.base_salary
    employee.refresh_from_db()
    assert employee.base_salary == Decimal("30000")


def test_a_business_user_may_not_change_pay():
    from config.api import Forbidden
    employee = Employee.objects.filter(tenant=tenant("demo")).first()
    with pytest.raises(Forbidden):
        employee_pay_record(actor=actor_for("alice"), idempotency_key="pay-x", source="test", employee_pay=[
            {"employee_id": str(employee.id), "pay": {"base_salary": "1"}}])


# --- the trial step of the setup run --------------------------------------------------------

SETUP = "set up a monthly payroll group for our Shanghai sales team with commission, called '{name}'"


def test_a_run_drives_to_completion_with_a_trial_whose_totals_are_the_calculations():
    from payroll.records.calculation import EmployeeInput, trial

    run, _ = started(SETUP.format(name="Trial Sales"), ("export.csv", EXPORT_ZH))
    run = approve(run)
    assert run.status == "completed", run.status_reason
    assert statuses(run)["trial"] == "completed"
    output = trial_output(run)
    assert [e["employee_no"] for e in output["employees"]] == ["T-1001", "T-1002", "T-1003", "T-1004"]
    expected = trial([
        EmployeeInput("T-1001", Decimal("18000"), {"岗位津贴": Decimal("1500"), "交通补贴": Decimal("300")}, Decimal("2000")),
        EmployeeInput("T-1002", Decimal("12000"), {"岗位津贴": Decimal("800")}, Decimal("1000")),
        EmployeeInput("T-1003", Decimal("9000")),
        EmployeeInput("T-1004", Decimal("25000"), {"岗位津贴": Decimal("2000"), "交通补贴": Decimal("500")}, Decimal("3000")),
    ], "shanghai", months=3, on=date(date.today().year, 1, 1))
    assert [(t["gross"], t["employer_cost"], t["tax"], t["net"]) for t in output["totals"]] == [
        (str(t.gross), str(t.employer_cost), str(t.tax), str(t.net)) for t in expected.totals]
    assert Employee.objects.get(employee_no="T-1001").pay_on(date.today()).allowances == {
        "岗位津贴": "1500.00", "交通补贴": "300.00"}
    node = Node.objects.get(run=run, key="trial", retired_in__isnull=True)
    assert {c["criterion"]: c["met"] for c in node.acceptance_results} == {
        "every employee of the group computes, or the group says it has none": True, "the totals are consistent": True}


def start(group_name, **params):
    from workflows.services import run_start
    return run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                     params={"request": SETUP.format(name=group_name), "group_name": group_name, **params})


def test_a_run_whose_employees_lack_a_salary_asks_for_it_before_the_approval_and_completes_once_answered():
    from workflows.services import node_input_answer

    run = drive(start("No Pay Yet", new_employees=[
        {"employee_no": "T-2001", "name": "周敏", "department": "Sales", "location": "Shanghai"},
        {"employee_no": "T-2002", "name": "吴昊", "department": "Sales", "location": "Shanghai",
         "pay": {"base_salary": "15000"}}]))
    # Asked before any approver is: the card then shows the salary it approves.
    assert run.status == "awaiting_input", run.status_reason
    assert not ApprovalRequest.objects.filter(run=run).exists()
    question = Node.objects.get(run=run, key="salaries", retired_in__isnull=True).question["text"]
    assert "周敏 (T-2001)" in question and "吴昊" not in question and "monthly base salary" in question
    node_input_answer(membership=membership("alice"), run_id=run.id, answer="about ten thousand")
    run = drive(run)
    assert run.status == "awaiting_input"  # nothing read: asked again, saying so
    assert "couldn't read a salary" in Node.objects.get(run=run, key="salaries",
                                                        retired_in__isnull=True).question["text"]
    node_input_answer(membership=membership("alice"), run_id=run.id, answer="T-2001: 11,000")
    run = drive(run)
    assert run.status == "awaiting_approval", run.status_reason
    assert not Employee.objects.filter(employee_no="T-2001").exists(), "nothing is written before the approval"
    run = approve(run)
    assert run.status == "completed", run.status_reason
    pay = Employee.objects.get(employee_no="T-2001").pay_history.get()
    assert pay.base_salary == Decimal("11000")
    assert [e["months"][0]["gross"] for e in trial_output(run)["employees"]] == ["11000.00", "15000.00"]


def test_salaries_answered_one_at_a_time_are_each_kept_and_only_the_rest_asked_for():
    from workflows.services import node_input_answer

    run = drive(start("Pay One By One", new_employees=[
        {"employee_no": "T-3001", "name": "周敏", "department": "Sales", "location": "Shanghai"},
        {"employee_no": "T-3002", "name": "吴昊", "department": "Sales", "location": "Shanghai"},
        {"employee_no": "T-3003", "name": "郑洁", "department": "Sales", "location": "Shanghai"}]))
    node_input_answer(membership=membership("alice"), run_id=run.id, answer="T-3002: 12,000")
    run = drive(run)
    assert run.status == "awaiting_input"
    question = Node.objects.get(run=run, key="salaries", retired_in__isnull=True).question["text"]
    assert question.startswith("Noted 1 salary; I still need these")
    assert "周敏 (T-3001)" in question and "郑洁 (T-3003)" in question and "吴昊" not in question
    node_input_answer(membership=membership("alice"), run_id=run.id, answer="郑洁 9500")
    run = drive(run)
    question = Node.objects.get(run=run, key="salaries", retired_in__isnull=True).question["text"]
    assert question.startswith("Noted 2 salaries") and "周敏 (T-3001)" in question and "郑洁" not in question
    node_input_answer(membership=membership("alice"), run_id=run.id, answer="nothing useful")
    run = drive(run)  # an answer with no salary in it keeps what the earlier ones gave
    question = Node.objects.get(run=run, key="salaries", retired_in__isnull=True).question["text"]
    assert "couldn't read a salary" in question and "周敏 (T-3001)" in question and "郑洁" not in question
    node_input_answer(membership=membership("alice"), run_id=run.id, answer="8800")
    run = drive(run)
    assert run.status == "awaiting_approval", run.status_reason
    card = ApprovalRequest.objects.get(run=run)
    salaries = {s["employee_no"]: s["base_salary"] for s in card.arguments["salaries"]}
    assert salaries == {"T-3001": "8800.00", "T-3002": "12000.00", "T-3003": "9500.00"}


def test_a_group_for_a_city_without_rules_blocks_with_a_reason_naming_the_city():
    shanghai = PayrollTemplate.objects.get(code="cn-sh-monthly-salaried", version=1)
    suzhou = PayrollTemplate.objects.create(code="cn-suzhou-monthly", version=1, name="Suzhou Monthly",
                                            name_zh="苏州月薪", region="CN-Suzhou", pay_frequency="monthly",
                                            currency="CNY", variables=shanghai.variables)
    for item in shanghai.items.all():
        item.pk, item.template = None, suzhou
        item.save()
    employee = Employee.objects.filter(tenant=tenant("demo"), base_salary__gt=0, group__isnull=True).first()
    run = drive(start("Suzhou Sales", template_code="cn-suzhou-monthly", employee_ids=[str(employee.id)],
                      request="set up a monthly payroll group for our Suzhou sales team, called 'Suzhou Sales'"))
    run = approve(run)
    trial = Node.objects.get(run=run, key="trial", retired_in__isnull=True)
    assert trial.status == "blocked", trial.status
    assert "Suzhou" in trial.status_reason and "苏州" in trial.status_reason
    assert run.status != "completed"
    assert PayrollGroup.objects.get(name="Suzhou Sales").city == "Suzhou"


def test_a_hangzhou_group_computes_with_hangzhous_rates_from_the_shanghai_structure():
    employee = Employee.objects.filter(tenant=tenant("demo"), base_salary__gt=0, group__isnull=True).first()
    run = drive(start("HZ Sales", template_code="cn-sh-monthly-salaried", employee_ids=[str(employee.id)],
                      request="set up a monthly payroll group for our Hangzhou sales team, called 'HZ Sales'"))
    card = ApprovalRequest.objects.get(run=run).diff["trial"]
    medical = next(i for i in card["samples"][0]["items"] if i["code"] == "medical_er")
    assert card["city_name"]["en"] == "Hangzhou" and Decimal(medical["rate"]) == Decimal("0.095")
    run = approve(run)
    assert run.status == "completed", run.status_reason
    assert PayrollGroup.objects.get(name="HZ Sales").city == "hangzhou"
    assert trial_output(run)["city"] == "hangzhou"


def test_a_template_outside_mainland_china_gets_no_trial_and_says_so_but_is_set_up():
    employee = Employee.objects.filter(tenant=tenant("demo"), group__isnull=True).first()
    run = drive(start("SG Ops", template_code="sg-monthly-cpf", employee_ids=[str(employee.id)]))
    card = client_for("bob").get(f"/approvals/{ApprovalRequest.objects.get(run=run).id}/").content.decode()
    assert re.search(r"Singapore(&#x27;|')s are not modelled", card), card
    # SGD against a CNY limit: the matrix routes it to a tenant admin.
    approval_decide(membership=membership("ada"), approval_id=ApprovalRequest.objects.get(run=run).id,
                    verdict="approved")
    run = drive(run)
    assert run.status == "completed", run.status_reason
    assert "mainland China only" in trial_output(run)["not_computed"]


# --- what people see ------------------------------------------------------------------------

def client_for(username):
    from django.test import Client
    client = Client()
    client.force_login(membership(username).user)
    return client


def money(value) -> str:
    return f"{Decimal(value):,.2f}"


def test_the_card_shows_the_trial_totals_and_three_payslips_in_english_and_chinese():
    run, _ = started(SETUP.format(name="Card Trial"), ("export.csv", EXPORT_ZH))
    approval = ApprovalRequest.objects.get(run=run)
    trial = approval.diff["trial"]
    assert [s["employee_no"] for s in trial["samples"]] == ["T-1001", "T-1002", "T-1003"]
    english = client_for("bob").get(f"/approvals/{approval.id}/").content.decode()
    assert "Trial payroll" in english and "Employer cost" in english and "Sample payslip (January)" in english
    first = trial["totals"][0]
    for amount in (first["gross"], first["employer_cost"], first["tax"], first["net"]):
        assert money(amount) in english
    assert "T-1004" not in english.split("Sample payslip (January)")[1].split("</table>")[0]  # three, not four
    for sample in trial["samples"]:
        assert sample["name"] in english and money(sample["net"]) in english
    # Needs the rebuilt catalog (locale/zh_hans_strings.py → scripts/i18n_fill.py).
    chinese = client_for("bob").get(f"/approvals/{approval.id}/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "试算工资" in chinese and "雇主成本" in chinese and money(first["net"]) in chinese


def test_nobody_with_a_salary_yet_is_asked_before_any_card():
    run = drive(start("Nobody Paid", new_employees=[
        {"employee_no": "T-3001", "name": "孙丽", "department": "Sales", "location": "Shanghai"}]))
    assert run.status == "awaiting_input", run.status_reason
    assert not ApprovalRequest.objects.filter(run=run).exists()
    assert "孙丽 (T-3001)" in Node.objects.get(run=run, key="salaries", retired_in__isnull=True).question["text"]


def test_the_news_gives_the_trial_totals_and_the_payslip_page_reads_in_both_languages():
    from timeline.models import Event

    run, conv = started(SETUP.format(name="Payslip Sales"), ("export.csv", EXPORT_ZH))
    run = approve(run)
    assert run.status == "completed", run.status_reason
    output = trial_output(run)
    done = [e for e in Event.objects.filter(conversation=conv, type="message.sent").order_by("seq")
            if "Trial payroll" in str(e.data.get("words"))]
    from config.words import words_render
    if done:  # told by agents.news on the run's completion
        text = words_render(done[-1].data["words"], "en")
        assert money(output["totals"][0]["net"]) in text and "employer cost" in text
    from payroll.agent.news import trial_words
    told = words_render(trial_words(run), "en")
    assert f"Trial payroll for 4 employees in {output['year']}" in told
    assert money(output["totals"][2]["tax"]) in told

    employee = Employee.objects.get(employee_no="T-1001")
    group_page = client_for("alice").get(f"/payroll/groups/{employee.group_id}/").content.decode()
    url = f"/payroll/employees/{employee.id}/payslips/{output['year']}/1/"
    assert url in group_page and url in client_for("alice").get(f"/payroll/employees/{employee.id}/").content.decode()
    english = client_for("alice").get(url)
    assert english.status_code == 200
    html = english.content.decode()
    january = output["employees"][0]["months"][0]
    assert "Payslip of 王芳" in html and money(january["net"]) in html
    assert re.search(r'title="[^"]*= ' + re.escape(money(january["net"])) + '"', html)  # the formula on hover
    # The group's own items: the commission template's, its sales figures not given.
    assert ("18,000.00 + 1,500.00 (岗位津贴) + 300.00 (交通补贴) + 0.00 (Sales commission (3%)) + 0.00 (Above-quota "
            "accelerator (2%)) = 19,800.00") in html
    # Needs the rebuilt catalog.
    chinese = client_for("alice").get(url, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "工资条" in chinese and "实发" in chinese and money(january["net"]) in chinese
    assert client_for("oscar").get(url).status_code == 404


def test_the_rules_page_shows_a_citys_rules_with_their_source():
    html = client_for("alice").get("/payroll/rules/?city=shanghai").content.decode()
    assert "Shanghai" in html and "上海市人力资源和社会保障局" in html and "7,460.00" in html
    assert client_for("alice").get("/payroll/rules/?city=lhasa").status_code == 404
    chinese = client_for("alice").get("/payroll/rules/?city=shanghai", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "上海" in chinese and "来源" in chinese  # needs the rebuilt catalog for 来源


def test_a_group_set_up_with_no_employees_says_so_and_never_reads_every_employee_computes():
    from config.words import words_render
    from payroll.agent.news import empty_words

    run = approve(drive(start("Empty Sales")))
    assert run.status == "completed", run.status_reason
    trial = Node.objects.get(run=run, key="trial", retired_in__isnull=True)
    criteria = {r["criterion"]: r for r in trial.acceptance_results}
    assert "every employee computes" not in criteria
    computes = criteria["every employee of the group computes, or the group says it has none"]
    assert computes["met"] and words_render(computes["detail"], "en").startswith("no employees yet — add them")
    told = words_render(empty_words(run), "en")
    assert "no employees yet — add them: attach an employee list" in told
    page = client_for("alice").get(f"/payroll/groups/{PayrollGroup.objects.get(name='Empty Sales').id}/")
    assert 'data-testid="group-no-employees"' in page.content.decode()
