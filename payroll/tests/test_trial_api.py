"""POST /api/v1/payroll/trial/ and GET /api/v1/payroll/rules/: computes, refuses bad numbers, writes nothing."""
import json
import re
from decimal import Decimal as D

import pytest
from django.apps import apps
from rest_framework.test import APIClient

from tests.payroll import api

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]

TRIAL = "/api/v1/payroll/trial/"
RULES = "/api/v1/payroll/rules/"
AMOUNT = re.compile(r"^-?[0-9]+\.[0-9]{2}$")


def body(**employee) -> dict:
    return {"city": "shanghai", "months": 3, "employees": [{
        "employee_no": "E1", "base_salary": "30000", "allowances": {"岗位津贴": "500"},
        "special_additional_deductions": "2000", **employee}]}


def post(client, data, raw: bool = False):
    return client.post(TRIAL, data if raw else json.dumps(data), content_type="application/json")


def row_counts() -> dict[str, int]:
    """Every table's row count: a trial must add, change or remove none."""
    return {model._meta.label: model._default_manager.count() for model in apps.get_models()
            if model._meta.managed and not model._meta.proxy}


def test_it_answers_a_trial_of_three_months_to_alice():
    before = row_counts()
    response = post(api("alice"), body())
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["city"] == "shanghai" and data["rules"]["effective_from"] == "2025-07-01"
    assert data["rules"]["source"]["year"] == 2025 and data["rules"]["source"]["title"]
    assert isinstance(data["rules"]["current"], bool) and data["rules"]["verified"] is False
    months = data["employees"][0]["months"]
    assert data["employees"][0]["employee_no"] == "E1" and [m["month"] for m in months] == [1, 2, 3]
    first = months[0]
    assert first["gross"] == "30500.00"
    assert first["contributions"]["employee"] == "5337.50" and first["contributions"]["employer"] == "9961.30"
    items = {item["kind"]: item for item in first["contributions"]["items"]}
    assert list(items) == ["pension", "medical", "unemployment", "injury", "housing_fund"]
    assert items["pension"] | {"formulas": None, "name": None} == {
        "kind": "pension", "name": None, "base": "30500.00", "employee_rate": "0.080000", "employee": "2440.00",
        "employer_rate": "0.160000", "employer": "4880.00", "formulas": None}
    assert items["pension"]["formulas"]["employee"] == "30,500.00 × 8% = 2,440.00"
    assert [m["taxable_cumulative"] for m in months] == ["18162.50", "36325.00", "54487.50"]
    assert [m["tax"] for m in months] == ["544.88", "567.62", "1816.25"]
    for month in months:
        assert all(AMOUNT.match(month[k]) for k in ("gross", "taxable_cumulative", "tax", "net"))
        assert D(month["net"]) + D(month["tax"]) + D(month["contributions"]["employee"]) == D(month["gross"])
    assert data["totals"][2] == {"month": 3, "gross": "30500.00", "employer_cost": "40461.30", "tax": "1816.25",
                                 "net": months[2]["net"]}
    assert row_counts() == before


def test_it_reproduces_the_tax_authoritys_example_over_http():
    # 30,000 with a contribution base of 25,714.29 in Shanghai: employee contributions 17.5 % ≈ 4,500.00.
    response = post(api("alice"), {"city": "上海", "employees": [
        {"employee_no": "E1", "base_salary": "30000", "special_additional_deductions": "2000",
         "contribution_base": "25714.29"}]})
    assert response.status_code == 200, response.content
    months = response.json()["employees"][0]["months"]
    assert [m["contributions"]["employee"] for m in months] == ["4500.00"] * 3  # 2057.14+514.29+128.57+1800.00
    assert [m["tax"] for m in months] == ["555.00", "625.00", "1850.00"]


def test_any_member_of_any_tenant_may_run_a_trial_but_not_a_stranger():
    assert post(api("oscar"), body()).status_code == 200
    assert post(api("bob"), body()).status_code == 200
    assert post(APIClient(), body()).status_code in (401, 403)
    assert APIClient().get(RULES, {"city": "shanghai"}).status_code in (401, 403)


@pytest.mark.parametrize("field, value, words", [
    ("base_salary", "-1", "must not be negative"),
    ("base_salary", "abc", "not an amount"),
    ("base_salary", "1e9", "not an amount"),
    ("base_salary", "10000000.01", "more than 10,000,000"),
    ("base_salary", "20000000", "more than 10,000,000"),
    ("base_salary", 30000, "string of digits"),
    ("base_salary", "30000.001", "2 decimal places"),
    ("base_salary", "１２", "not an amount"),  # fullwidth digits, which Decimal() reads
    ("special_additional_deductions", "-2000", "must not be negative"),
    ("contribution_base", "NaN", "not an amount"),
    ("allowances", {"岗位津贴": "-500"}, "must not be negative"),
    ("employee_no", "  ", "blank"),
])
def test_it_refuses_a_bad_amount_with_a_field_level_400_and_writes_nothing(field, value, words):
    before = row_counts()
    response = post(api("alice"), body(**{field: value}))
    assert response.status_code == 400, response.content
    problem = response.json()
    assert response["Content-Type"] == "application/problem+json"
    assert problem["code"] == "invalid" and words in problem["detail"]
    assert field in json.dumps(problem["errors"]["employees"])
    assert row_counts() == before


def test_it_refuses_an_unknown_city_naming_it():
    response = post(api("alice"), {**body(), "city": "Atlantis"})
    assert response.status_code == 400
    problem = response.json()
    assert "Atlantis" in problem["errors"]["city"][0] and "Shanghai" in problem["errors"]["city"][0]


@pytest.mark.parametrize("months", [0, 13, "3", True])
def test_it_refuses_months_outside_1_to_12(months):
    response = post(api("alice"), {**body(), "months": months})
    assert response.status_code == 400 and "months" in response.json()["errors"]


def test_it_refuses_no_employees_and_more_than_a_thousand():
    assert post(api("alice"), {**body(), "employees": []}).status_code == 400
    many = [{"employee_no": f"E{i}", "base_salary": "1"} for i in range(1001)]
    response = post(api("alice"), {**body(), "employees": many})
    assert response.status_code == 400 and "employees" in response.json()["errors"]


def test_it_answers_malformed_json_with_400():
    assert post(api("alice"), '{"city": ', raw=True).status_code == 400
    assert post(api("alice"), "[1, 2]", raw=True).status_code == 400


def test_it_answers_a_citys_rules():
    response = api("alice").get(RULES, {"city": "北京"})
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["city"] == "beijing" and data["name_zh"] == "北京"
    assert data["source"]["authority"] and data["effective_from"] == "2025-07-01"
    fund = next(c for c in data["contributions"] if c["kind"] == "housing_fund")
    assert fund["employee_range"] == ["0.050000", "0.120000"]
    assert {"kind": "maternity", "into": "medical"} in data["merged"]


def test_it_answers_404_for_an_unknown_city_and_400_without_one():
    response = api("alice").get(RULES, {"city": "Atlantis"})
    assert response.status_code == 404 and response.json()["code"] == "unknown_city"
    assert "Atlantis" in response.json()["detail"]
    for query in ({}, {"city": ""}, {"city": "  "}):
        response = api("alice").get(RULES, query)
        assert response.status_code == 400 and response.json()["code"] == "city_required"


def test_the_schema_accepts_exactly_the_amounts_the_api_accepts():
    from payroll.apis import AMOUNT_PATTERN, MonthlyAmountField

    field = MonthlyAmountField()
    for text in ("0", "0.5", "30000", "30000.50", "9999999.99", "10000000", "10000000.00"):
        assert re.search(AMOUNT_PATTERN, text) and field.to_internal_value(text) == D(text)
    for text in ("-1", "01", "+5", " 5", ".5", "1e3", "10000000.01", "10000001", "1.234", "1_000", ""):
        assert not re.search(AMOUNT_PATTERN, text)


def test_each_month_lists_every_evaluated_item_with_its_formula_base_and_rate():
    response = post(api("alice"), {"city": "shanghai", "months": 12,
                                   "employees": [{"employee_no": "E1", "base_salary": "10000"}]})
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["template_code"] == "cn-sh-monthly-salaried" and data["missing_inputs"] == []
    months = data["employees"][0]["months"]
    assert [months[0]["tax"], months[11]["tax"]] == ["97.50", "307.50"]
    items = {i["code"]: i for i in months[0]["items"]}
    assert items["medical_er"] == {
        "code": "medical_er", "name": "Medical insurance (employer)", "kind": "employer_contribution",
        "formula": "medical_base × medical_employer_rate", "base": "10000.00", "rate": "0.090000",
        "amount": "900.00"}
    assert items["iit"]["amount"] == "97.50" and "cumulative_tax" in items["iit"]["formula"]


def test_a_commission_trial_says_which_inputs_it_lacked_and_with_inputs_pays_the_commission():
    employee = {"employee_no": "E1", "base_salary": "10000"}
    bare = post(api("alice"), {"city": "shanghai", "months": 2, "template_code": "cn-sales-commission",
                               "employees": [employee]}).json()
    assert bare["missing_inputs"] == ["quota", "sales_amount"]
    assert bare["employees"][0]["months"][0]["missing_inputs"] == ["quota", "sales_amount"]
    given = post(api("alice"), {"city": "shanghai", "months": 2, "template_code": "cn-sales-commission",
                                "employees": [{**employee, "inputs": {"1": {"sales_amount": "200000",
                                                                             "quota": "150000"}}}]}).json()
    january, february = given["employees"][0]["months"]
    amounts = {i["code"]: i["amount"] for i in january["items"]}
    assert amounts["commission"] == "6000.00" and amounts["accelerator"] == "1000.00"
    assert january["missing_inputs"] == [] and february["missing_inputs"] == ["quota", "sales_amount"]
    assert D(january["net"]) > D(bare["employees"][0]["months"][0]["net"])


def test_a_hangzhou_trial_uses_hangzhous_rates():
    response = post(api("alice"), {"city": "杭州", "employees": [{"employee_no": "E1", "base_salary": "20000"}]})
    assert response.status_code == 200, response.content
    items = {i["code"]: i for i in response.json()["employees"][0]["months"][0]["items"]}
    assert items["medical_er"]["rate"] == "0.095000"  # Hangzhou's 9.5 %, not Shanghai's 9 %


@pytest.mark.parametrize("extra, field, words", [
    ({"template_code": "us-biweekly-hourly"}, "template_code", "known: cn-"),
    ({"template_code": "nope"}, "template_code", "No template “nope”"),
])
def test_it_refuses_a_template_the_trial_cannot_compute(extra, field, words):
    response = post(api("alice"), {**body(), **extra})
    assert response.status_code == 400, response.content
    assert words in response.json()["detail"] and field in response.json()["errors"]


@pytest.mark.parametrize("inputs, words", [
    ({"1": {"bonus": "5"}}, "reads no input “bonus”; it reads: quota, sales_amount"),
    ({"13": {"quota": "5"}}, "not a month"),
    ({"1": {"quota": "-5"}}, "must not be negative"),
    ({"4": {"quota": "5"}}, "past the 3 months"),
])
def test_it_refuses_bad_inputs_naming_what_is_wrong(inputs, words):
    before = row_counts()
    response = post(api("alice"), {**body(inputs=inputs), "template_code": "cn-sales-commission"})
    assert response.status_code == 400, response.content
    assert words in response.json()["detail"]
    assert row_counts() == before


def test_a_groups_trial_computes_its_own_items_for_its_employees():
    from payroll.records import services
    from payroll.models import Employee, PayrollGroup, PayrollTemplate
    from tests.payroll import actor_for

    bob = actor_for("bob")
    template = PayrollTemplate.objects.get(code="cn-sales-commission")
    receipt = services.template_import(actor=bob, template_id=template.id, group_name="HZ Sales", idempotency_key="k")
    group = PayrollGroup.objects.get(id=receipt.body["group_id"])
    group.city = "hangzhou"
    group.save()
    first = Employee.objects.filter(tenant_id=bob.tenant_id, location="Shanghai").order_by("employee_no").first()
    Employee.objects.filter(id=first.id).update(group=group)
    response = api("alice").get(f"/api/v1/payroll/groups/{group.id}/trial/?months=2")
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["city"] == "hangzhou" and data["template_code"] == "cn-sales-commission"
    assert len(data["employees"]) == 1 and data["missing_inputs"] == ["quota", "sales_amount"]
    codes = [i["code"] for i in data["employees"][0]["months"][0]["items"]]
    assert "commission" in codes and "accelerator" in codes
    assert api("oscar").get(f"/api/v1/payroll/groups/{group.id}/trial/").status_code == 404


def test_it_refuses_an_answer_over_its_stated_size_before_computing_it():
    many = [{"employee_no": f"E{i}", "base_salary": "30000"} for i in range(101)]
    response = post(api("alice"), {**body(), "employees": many, "months": 12})  # 1,212 payslips
    assert response.status_code == 400 and "at most 1200 payslips" in response.json()["errors"]["employees"][0]
    response = post(api("alice"), {**body(), "employees": many[:100], "months": 12})  # 1,200: answered
    assert response.status_code == 200 and len(response.json()["employees"]) == 100
    # Each payslip carries its evaluated items (about 15): 1,200 of them measured 5.6 MB.
    assert len(response.content) < 8 * 1024 * 1024


def test_it_refuses_an_allowance_name_over_100_characters():
    response = post(api("alice"), body(allowances={"x" * 101: "500"}))
    assert response.status_code == 400 and "100 characters" in response.content.decode()
    assert post(api("alice"), body(allowances={"x" * 100: "500"})).status_code == 200
