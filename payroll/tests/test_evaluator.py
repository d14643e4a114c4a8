"""The one evaluator (payroll/records/evaluator.py): a group's or template's items are the calculation,
under one city's rules; payroll/calculation.py's arithmetic is the reference it must equal."""
from datetime import date
from decimal import Decimal as D

import pytest

from payroll.records import evaluator
from payroll.records import calculation, rules
from payroll.records.calculation import EmployeeInput
from payroll.records.evaluator import FormulaError, Item, structure
from payroll.models import PayrollTemplate
from payroll.records.seed import TEMPLATES, templates_seed
from payroll.records.trial import template_structure

pytestmark = pytest.mark.django_db
ON = date(2025, 8, 1)
CITIES = ["shanghai", "beijing", "shenzhen", "guangzhou", "hangzhou", "chengdu", "cn"]


@pytest.fixture(autouse=True)
def _catalog(db):
    templates_seed()


def of(code: str) -> evaluator.Structure:
    return template_structure(PayrollTemplate.objects.get(code=code))


def city(key: str) -> rules.CityRules:
    return rules.city_rules(key, date(2025, 3, 1) if key == "hangzhou" else ON)


def test_the_shanghai_10000_case_withholds_97_50_in_month_one_and_307_50_in_month_twelve():
    result = evaluator.trial([EmployeeInput("E1", D("10000"))], city("shanghai"), of("cn-sh-monthly-salaried"), 12)
    months = result.employees[0].months
    assert months[0].tax == D("97.50") and months[11].tax == D("307.50")
    iit = next(i for i in months[11].items if i.code == "iit")
    assert iit.formula == "cumulative_tax(gross_pay, employee_contributions, special_additional_deductions)"
    assert iit.amount == D("307.50") and iit.rate == D("0.10") and iit.base == D("39000.00")


@pytest.mark.parametrize("key", CITIES)
@pytest.mark.parametrize("employee", [
    EmployeeInput("low", D("3000")),
    EmployeeInput("mid", D("18000.55"), {"岗位津贴": D("1200.45")}, D("3000")),
    EmployeeInput("high", D("250000"), {}, D("1000"), contribution_base=D("80000")),
    EmployeeInput("50k", D("50000")),
])
def test_the_general_template_equals_the_reference_arithmetic_in_every_city(key, employee):
    ours = evaluator.employee_evaluate(of("cn-sh-monthly-salaried"), employee, city(key), 12)
    reference = calculation.employee_months(employee, city(key), 12)
    for mine, theirs in zip(ours, reference, strict=True):
        assert (mine.gross, mine.tax, mine.net, mine.taxable_cumulative) == \
            (theirs.gross, theirs.tax, theirs.net, theirs.taxable_cumulative)
        assert mine.contributions.employee == theirs.contributions.employee
        assert mine.contributions.employer == theirs.contributions.employer
        assert [(l.kind, l.base, l.employee, l.employer) for l in mine.contributions.items] == \
            [(l.kind, l.base, l.employee, l.employer) for l in theirs.contributions.items]
        assert mine.formulas == theirs.formulas


def test_a_hangzhou_group_computes_with_hangzhous_rates_not_shanghais():
    hangzhou, shanghai = city("hangzhou"), city("shanghai")
    month = evaluator.employee_evaluate(of("cn-sh-monthly-salaried"), EmployeeInput("E1", D("20000")), hangzhou, 1)[0]
    items = {i.code: i for i in month.items}
    fund = hangzhou.housing_fund
    assert items["housing_fund_ee"].rate == fund.employee_rate
    assert items["housing_fund_ee"].base == fund.base.clamp(D("20000"))
    medical = next(r for r in hangzhou.contributions if r.kind == "medical")
    assert items["medical_er"].rate == medical.employer_rate
    assert items["medical_er"].rate != next(r for r in shanghai.contributions if r.kind == "medical").employer_rate


def test_the_commission_template_says_which_inputs_it_lacked_and_computes_them_with_inputs():
    sales = of("cn-sales-commission")
    assert sales.inputs == ("quota", "sales_amount")
    bare = evaluator.trial([EmployeeInput("E1", D("10000"))], city("shanghai"), sales, 1)
    month = bare.employees[0].months[0]
    assert month.missing_inputs == ("quota", "sales_amount") and bare.missing_inputs == ("quota", "sales_amount")
    assert {i.code: i.amount for i in month.items}["commission"] == D("0.00")
    given = evaluator.trial([EmployeeInput("E1", D("10000"))], city("shanghai"), sales, 1,
                            inputs={"E1": {1: {"sales_amount": D("200000"), "quota": D("150000")}}})
    paid = given.employees[0].months[0]
    amounts = {i.code: i.amount for i in paid.items}
    assert paid.missing_inputs == ()
    assert amounts["commission"] == D("6000.00") and amounts["accelerator"] == D("1000.00")
    assert paid.gross == D("17000.00") and paid.net > month.net


def test_a_formula_naming_something_unknown_is_refused_with_the_name_and_the_known_names():
    items = [Item("base_pay", "Base", "earning", base="base_salary", rate=D("1")),
             Item("bonus", "Bonus", "earning", formula="base_salary * bonus_factor")]
    with pytest.raises(FormulaError) as caught:
        structure(items, ["base_salary"])
    assert caught.value.name == "bonus_factor" and "bonus_factor" in str(caught.value)
    assert "base_salary" in caught.value.known and "pension_employee_rate" in str(caught.value)
    assert structure(items, ["base_salary", "bonus_factor"]).inputs == ("bonus_factor",)


@pytest.mark.parametrize("formula", ["__import__('os').system('true')", "base_salary.real", "[1][0]",
                                     "'a' * 1000", "base_salary if 1 else 2", "lambda: 1", "open('x')",
                                     "base_salary ** 99999999"])
def test_a_formula_that_is_not_plain_arithmetic_is_refused(formula):
    with pytest.raises(FormulaError):
        structure([Item("x", "X", "earning", formula=formula)], ["base_salary"])


def test_items_that_depend_on_each_other_in_a_circle_are_refused():
    items = [Item("a", "A", "earning", formula="b + 1"), Item("b", "B", "earning", formula="a + 1")]
    with pytest.raises(FormulaError, match="circle"):
        structure(items, [])
    with pytest.raises(FormulaError, match="circle"):  # an earning that reads the gross it is part of
        structure([Item("a", "A", "earning", formula="gross_pay * 0.1")], [])


def test_a_rate_that_is_not_a_rule_parameter_is_refused():
    with pytest.raises(FormulaError, match="not a parameter of the city rules"):
        structure([Item("p", "P", "deduction", base="pension_base", rate_name="pension_rate")], [])


def test_items_are_evaluated_in_dependency_order_earnings_first():
    order = [i.code for i in of("cn-sales-commission").items]
    assert order.index("commission") < order.index("pension_ee") < order.index("pension_er") < order.index("iit")


def test_no_china_template_copies_a_citys_rate():
    for spec in TEMPLATES:
        if spec["region"].startswith("CN-") and not spec.get("unchecked"):  # the legacy one is kept as it was
            for item in spec["items"]:
                if item["base"].endswith("_base") and item["base"] != "base_salary":
                    assert item["rate"] is None and item["rate_name"], item["code"]


def test_every_catalog_template_but_the_legacy_one_is_computable():
    for template in PayrollTemplate.objects.all():
        if template.code == "cn-sh-legacy-grade-2015":
            with pytest.raises(FormulaError, match="legacy_grade_factor"):
                template_structure(template)
        else:
            template_structure(template)
