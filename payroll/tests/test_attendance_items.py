"""Attendance names in the one evaluator: the template "Shanghai sales — commission, overtime and
absence" computes each item from the month's inputs and the tenant's attendance terms, to the cent,
and shows the formula it computed."""
from dataclasses import dataclass
from datetime import date
from decimal import Decimal as D

import pytest

from payroll.models import PayrollTemplate
from payroll.reading.matching import template_decide
from payroll.records import calculation, evaluator, rules
from payroll.records.calculation import EmployeeInput
from payroll.records.seed import templates_seed
from payroll.records.trial import template_structure

pytestmark = pytest.mark.django_db
CODE = "cn-sh-sales-attendance"
NOVEMBER = {"sales_amount": D("100000"), "overtime_workday_hours": D("10"), "overtime_restday_hours": D("8"),
            "overtime_holiday_hours": D("3"), "personal_leave_days": D("1"), "sick_leave_days": D("2")}


@pytest.fixture(autouse=True)
def _catalog(db):
    templates_seed()


def sales() -> evaluator.Structure:
    return template_structure(PayrollTemplate.objects.get(code=CODE))


def shanghai() -> rules.CityRules:
    return rules.city_rules("shanghai", date(2025, 11, 1))


def month(employee: EmployeeInput, inputs, attendance=None) -> evaluator.EvaluatedMonth:
    return evaluator.month_evaluate(sales(), employee, shanghai(), 11, inputs, evaluator._Year(), attendance)


def test_it_has_both_names_and_reads_the_month_inputs():
    template = PayrollTemplate.objects.get(code=CODE)
    assert template.name == "Shanghai sales — commission, overtime and absence"
    assert template.name_zh == "上海销售（提成、加班与缺勤）"
    assert sales().inputs == ("overtime_holiday_hours", "overtime_restday_hours", "overtime_workday_hours",
                              "personal_leave_days", "sales_amount", "sick_leave_days")


def test_each_item_for_a_21750_salary_is_its_formula_to_the_cent():
    # 21,750 ÷ 21.75 = 1,000.00 a day; ÷ 8 = 125.00 an hour.
    items = {i.code: i for i in month(EmployeeInput("E1", D("21750")), NOVEMBER).items}
    expected = {
        "base_pay": ("base_salary × 100%", D("21750.00")),
        "commission": ("sales_amount × 3%", D("3000.00")),                                          # 100,000 × 3 %
        "ot_workday": ("overtime_workday_hours * hourly_wage * overtime_workday_rate", D("1875.00")),  # 10 × 125 × 1.5
        "ot_restday": ("overtime_restday_hours * hourly_wage * overtime_restday_rate", D("2000.00")),  # 8 × 125 × 2
        "ot_holiday": ("overtime_holiday_hours * hourly_wage * overtime_holiday_rate", D("1125.00")),  # 3 × 125 × 3
        "absence_deduction": ("-personal_leave_days * daily_wage * absence_deduction_rate", D("-1000.00")),
        "sick_leave_pay": ("-sick_leave_days * daily_wage * (1 - sick_leave_pay_rate)", D("-400.00")),  # 2 × 1000 × 0.2
    }
    assert {code: (items[code].formula, items[code].amount) for code in expected} == expected
    assert "hourly_wage = 21,750.00 ÷ 21.75 ÷ 8 = 125.0000" in items["ot_workday"].detail


def test_an_uneven_salary_rounds_each_item_half_up_and_the_month_adds_up():
    inputs = {**NOVEMBER, "overtime_workday_hours": D("7.5"), "overtime_restday_hours": D("4"),
              "overtime_holiday_hours": D("2"), "personal_leave_days": D("1.5"), "sick_leave_days": D("1"),
              "sales_amount": D("12345.67")}
    result = month(EmployeeInput("E2", D("18000")), inputs)
    items = {i.code: i.amount for i in result.items}
    # 18,000 ÷ 21.75 = 827.5862…/day, ÷ 8 = 103.4483…/hour
    assert items["commission"] == D("370.37")            # 12,345.67 × 3 % = 370.3701
    assert items["ot_workday"] == D("1163.79")           # 7.5 × 103.4483 × 1.5 = 1,163.7931
    assert items["ot_restday"] == D("827.59")            # 4 × 103.4483 × 2 = 827.5862
    assert items["ot_holiday"] == D("620.69")            # 2 × 103.4483 × 3 = 620.6897
    assert items["absence_deduction"] == D("-1241.38")   # 1.5 × 827.5862 = 1,241.3793
    assert items["sick_leave_pay"] == D("-165.52")       # 1 × 827.5862 × 0.2 = 165.5172
    gross = D("18000") + D("370.37") + D("1163.79") + D("827.59") + D("620.69") - D("1241.38") - D("165.52")
    assert result.gross == gross == D("19575.54")
    # Contributions: the city's rates on the gross (clamped to its floor and cap), as the reference computes them.
    reference = calculation.contributions_for(shanghai(), gross)
    assert result.contributions.employee == reference.employee
    assert result.contributions.employer == reference.employer
    # Tax: the cumulative method on this month as the year's first.
    tax = calculation.withholding([calculation.MonthIncome(gross, reference.employee)])[0]
    assert items["iit"] == tax.tax
    assert result.net == gross - reference.employee - tax.tax
    assert result.employer_cost == gross + reference.employer


@dataclass(frozen=True)
class Terms:
    """What payroll.records.month_inputs.attendance_terms_on gives: the same field names."""
    hours_per_day: D = D("8")
    paid_days_per_month: D = D("21.75")
    overtime_workday_rate: D = D("1.5")
    overtime_restday_rate: D = D("2.0")
    overtime_holiday_rate: D = D("3.0")
    absence_deduction_rate: D = D("1.0")
    sick_leave_pay_rate: D = D("0.8")


def test_the_tenants_attendance_terms_change_the_figures_not_the_template():
    own = Terms(paid_days_per_month=D("20"), overtime_workday_rate=D("2.0"), sick_leave_pay_rate=D("0.6"))
    items = {i.code: i.amount for i in month(EmployeeInput("E1", D("20000")), NOVEMBER, own).items}
    assert items["ot_workday"] == D("2500.00")        # 20,000 ÷ 20 ÷ 8 = 125/hour × 10 × 2.0
    assert items["absence_deduction"] == D("-1000.00")  # 1 day × 1,000
    assert items["sick_leave_pay"] == D("-800.00")      # 2 × 1,000 × (1 − 0.6)
    as_mapping = {i.code: i.amount for i in month(EmployeeInput("E1", D("20000")), NOVEMBER,
                                                  {"paid_days_per_month": D("20"),
                                                   "overtime_workday_rate": D("2.0"),
                                                   "sick_leave_pay_rate": D("0.6")}).items}
    assert as_mapping == items


def test_missing_inputs_are_said_and_computed_as_zero():
    result = month(EmployeeInput("E1", D("21750")), {"sales_amount": D("1000")})
    assert result.missing_inputs == ("overtime_holiday_hours", "overtime_restday_hours", "overtime_workday_hours",
                                     "personal_leave_days", "sick_leave_days")
    assert result.gross == D("21780.00")


def test_an_item_code_may_not_take_an_attendance_name():
    with pytest.raises(evaluator.FormulaError, match="hourly_wage"):
        evaluator.structure([evaluator.Item("hourly_wage", "x", "earning", formula="base_salary")], [])


def test_a_shanghai_sales_request_with_commission_still_gets_the_plain_sales_template():
    templates = list(PayrollTemplate.objects.prefetch_related("items"))
    plain = template_decide({"region": "CN-SH", "population": "sales", "items_named": ["commission"]}, templates)
    assert plain.kind == "clear" and plain.chosen.code == "cn-sales-commission"
    overtime = template_decide({"region": "CN-SH", "population": "sales",
                                "items_named": ["commission", "overtime"]}, templates)
    assert overtime.kind == "clear" and overtime.chosen.code == CODE

