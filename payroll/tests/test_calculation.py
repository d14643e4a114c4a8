"""The trial calculation (payroll/calculation.py) and the city rules (payroll/rules.py): pure, no database."""
import copy
import json
from dataclasses import replace
from datetime import date
from decimal import Decimal as D

import pytest

from payroll.records import evaluator
from payroll.records import rules
from payroll.records.calculation import (
    EmployeeInput,
    MonthIncome,
    bracket,
    contribution_line,
    contributions_for,
    tax_on,
    withholding,
)
from payroll.records.seed import templates_seed
from payroll.records.trial import general_template, template_structure

# The rules are data in the database (payroll.CityRulePeriod, loaded from city_rules.json).
pytestmark = pytest.mark.django_db

ON = date(2025, 8, 1)  # inside the 2025 social insurance year of every city in the file


@pytest.fixture(autouse=True)
def _catalog(db):
    templates_seed()


def trial(employees, city, months=3, on=None):
    """A trial through the evaluator: the general monthly template's items under `city`'s rules
    (calculation.py's arithmetic is the reference these figures were first checked against)."""
    city_rules = city if isinstance(city, rules.CityRules) else rules.city_rules(city, on or date.today())
    return evaluator.trial(employees, city_rules, template_structure(general_template(city_rules.key)), months)


def shanghai() -> rules.CityRules:
    return rules.city_rules("shanghai", ON)


def rules_with_employee_rates(**percent: str) -> rules.CityRules:
    """Shanghai's rules with other employee rates (by kind, in percent) and no floor or cap in the way."""
    wide = rules.Bounds(D("0"), D("1000000"))
    return replace(shanghai(), contributions=tuple(
        replace(rule, base=wide, employee_range=None,
                employee_rate=D(percent[rule.kind]) / 100 if rule.kind in percent else rule.employee_rate)
        for rule in shanghai().contributions))


# --- The tax authority's example -----------------------------------------------------------

def test_it_withholds_555_625_and_1850_as_the_tax_authoritys_example():
    # 30,000 a month, 5,000 basic deduction, 4,500 employee contributions, 2,000 special
    # additional deductions: 18,500 taxable a month (国家税务总局, 累计预扣法 example).
    taxes = withholding([MonthIncome(D("30000"), D("4500"), D("2000"))] * 3)
    assert [t.tax for t in taxes] == [D("555.00"), D("625.00"), D("1850.00")]
    assert [t.taxable_cumulative for t in taxes] == [D("18500"), D("37000"), D("55500")]
    assert [t.tax_cumulative for t in taxes] == [D("555.00"), D("1180.00"), D("3030.00")]
    assert taxes[2].formulas["tax"] == ("55,500.00 × 10% − 2,520.00 = 3,030.00; 3,030.00 − 1,180.00 withheld "
                                        "before = 1,850.00")


def test_it_reproduces_the_example_through_a_rule_set_whose_contributions_are_4500():
    # 8 % + 2 % + 0 % + 5 % of 30,000 = 4,500.
    city = rules_with_employee_rates(pension="8", medical="2", unemployment="0", housing_fund="5")
    result = trial([EmployeeInput("E1", D("30000"), special_additional_deductions=D("2000"))], city, months=3)
    months = result.employees[0].months
    assert [m.contributions.employee for m in months] == [D("4500.00")] * 3
    assert [m.tax for m in months] == [D("555.00"), D("625.00"), D("1850.00")]
    assert [m.net for m in months] == [D("24945.00"), D("24875.00"), D("23650.00")]


# --- The annual table's edges ----------------------------------------------------------------

@pytest.mark.parametrize("taxable, rate, quick, tax", [
    ("0", "0.03", "0", "0.00"),
    ("36000", "0.03", "0", "1080.00"),
    ("36000.01", "0.10", "2520", "1080.00"),  # 3,600.001 − 2,520 = 1,080.001
    ("144000", "0.10", "2520", "11880.00"),
    ("144000.01", "0.20", "16920", "11880.00"),
    ("300000", "0.20", "16920", "43080.00"),
    ("300000.01", "0.25", "31920", "43080.00"),
    ("420000", "0.25", "31920", "73080.00"),
    ("420000.01", "0.30", "52920", "73080.00"),
    ("660000", "0.30", "52920", "145080.00"),
    ("660000.01", "0.35", "85920", "145080.00"),
    ("960000", "0.35", "85920", "250080.00"),
    ("960000.01", "0.45", "181920", "250080.00"),
    ("1000000", "0.45", "181920", "268080.00"),
])
def test_it_applies_each_brackets_rate_and_quick_deduction_at_its_edge(taxable, rate, quick, tax):
    assert bracket(D(taxable)) == (D(rate), D(quick))
    assert tax_on(D(taxable)) == D(tax)


def test_it_rounds_the_tax_half_up_to_the_cent():
    assert tax_on(D("1.50")) == D("0.05")  # 0.045: half-even would say 0.04
    assert tax_on(D("36000.05")) == D("1080.01")  # 3,600.005 − 2,520


def test_it_never_lets_the_cumulative_taxable_income_go_below_zero():
    taxes = withholding([MonthIncome(D("4000"), D("700"), D("1000"))] * 2)
    assert [t.taxable_cumulative for t in taxes] == [D("0.00")] * 2
    assert [t.tax for t in taxes] == [D("0.00")] * 2
    assert taxes[0].formulas["taxable_cumulative"].endswith("= -2,700.00 → 0.00")


def test_it_withholds_nothing_in_a_month_where_the_cumulative_tax_goes_down():
    taxes = withholding([
        MonthIncome(D("30000"), D("0"), D("0")),      # 25,000 taxable: 750
        MonthIncome(D("5000"), D("0"), D("30000")),   # a late deduction: cumulative taxable 0, tax 0
        MonthIncome(D("30000"), D("0"), D("0")),      # cumulative 20,000: 600, still under the 750 withheld
        MonthIncome(D("30000"), D("0"), D("0")),      # cumulative 45,000: 1,980 − 750
    ])
    assert [t.tax_cumulative for t in taxes] == [D("750.00"), D("0.00"), D("600.00"), D("1980.00")]
    assert [t.tax for t in taxes] == [D("750.00"), D("0.00"), D("0.00"), D("1230.00")]
    assert [t.withheld_before for t in taxes] == [D("0.00"), D("750.00"), D("750.00"), D("750.00")]


# --- Contributions ----------------------------------------------------------------------------

def test_it_computes_shanghais_contributions_item_by_item():
    c = contributions_for(shanghai(), D("30000"))
    by_kind = {line.kind: line for line in c.items}
    assert [line.kind for line in c.items] == ["pension", "medical", "unemployment", "injury", "housing_fund"]
    assert (by_kind["pension"].employee, by_kind["pension"].employer) == (D("2400.00"), D("4800.00"))
    assert (by_kind["medical"].employee, by_kind["medical"].employer) == (D("600.00"), D("2700.00"))
    assert (by_kind["unemployment"].employee, by_kind["unemployment"].employer) == (D("150.00"), D("150.00"))
    assert (by_kind["injury"].employee, by_kind["injury"].employer) == (D("0.00"), D("48.00"))
    assert (by_kind["housing_fund"].employee, by_kind["housing_fund"].employer) == (D("2100.00"), D("2100.00"))
    assert c.employee == D("5250.00") and c.employer == D("9798.00")
    assert by_kind["pension"].formulas["employee"] == "30,000.00 × 8% = 2,400.00"
    assert by_kind["unemployment"].formulas["employer"] == "30,000.00 × 0.5% = 150.00"


def test_it_raises_a_base_below_the_floor_to_the_floor():
    c = contributions_for(shanghai(), D("5000"))
    by_kind = {line.kind: line for line in c.items}
    assert by_kind["pension"].base == D("7460") and by_kind["pension"].employee == D("596.80")
    assert by_kind["pension"].formulas["base"] == "5,000.00 → 7,460.00 (floor)"
    # The housing fund has its own, lower floor: 5,000 stays 5,000.
    assert by_kind["housing_fund"].base == D("5000") and by_kind["housing_fund"].employee == D("350.00")


def test_it_lowers_a_base_above_the_cap_to_the_cap():
    c = contributions_for(shanghai(), D("50000"))
    by_kind = {line.kind: line for line in c.items}
    assert by_kind["pension"].base == D("37302")
    assert (by_kind["pension"].employee, by_kind["pension"].employer) == (D("2984.16"), D("5968.32"))
    assert by_kind["housing_fund"].employee == D("2611.14")
    assert by_kind["pension"].formulas["base"] == "50,000.00 → 37,302.00 (cap)"


def test_it_rounds_each_contribution_half_up_to_the_cent():
    unemployment = next(r for r in shanghai().contributions if r.kind == "unemployment")
    assert contribution_line(unemployment, D("30001")).employee == D("150.01")  # 150.005
    injury = next(r for r in shanghai().contributions if r.kind == "injury")
    assert contribution_line(injury, D("30001")).employer == D("48.00")  # 48.0016


def test_it_uses_the_contribution_base_given_instead_of_the_gross():
    result = trial([EmployeeInput("E1", D("30000"), contribution_base=D("10000"))], shanghai(), months=1)
    month = result.employees[0].months[0]
    assert month.gross == D("30000") and {line.base for line in month.contributions.items} == {D("10000")}
    assert month.contributions.employee == D("1750.00")


def test_it_refuses_a_housing_fund_rate_outside_the_citys_range():
    from payroll.records.calculation import CalculationError

    assert contributions_for(shanghai(), D("30000"), housing_fund_rate=D("0.05")).employee == D("4650.00")
    with pytest.raises(CalculationError, match="outside 5%–7%"):
        contributions_for(shanghai(), D("30000"), housing_fund_rate=D("0.12"))


# --- The trial as a whole ----------------------------------------------------------------------

def test_gross_is_the_base_salary_plus_each_allowance():
    result = trial([EmployeeInput("E1", D("30000"), {"岗位津贴": D("500"), "餐补": D("300.50")})], shanghai(), 1)
    month = result.employees[0].months[0]
    assert month.gross == D("30800.50")
    assert month.formulas["gross"] == "30,000.00 + 500.00 (岗位津贴) + 300.50 (餐补) = 30,800.50"


@pytest.mark.parametrize("city", ["shanghai", "beijing", "shenzhen", "guangzhou", "hangzhou", "chengdu", "cn"])
def test_net_plus_tax_plus_employee_contributions_is_the_gross_every_month(city):
    employees = [
        EmployeeInput("low", D("3000")),  # below every floor: contributions on the floor
        EmployeeInput("mid", D("18000.55"), {"岗位津贴": D("1200.45")}, D("3000")),
        EmployeeInput("high", D("250000"), {}, D("1000"), contribution_base=D("80000")),
    ]
    on = date(2025, 8, 1) if city != "hangzhou" else date(2025, 3, 1)
    result = trial(employees, city, months=12, on=on)
    for employee in result.employees:
        assert len(employee.months) == 12
        for month in employee.months:
            assert month.net + month.tax + month.contributions.employee == month.gross
            assert month.tax >= 0
    for total in result.totals:
        rows = [e.months[total.month - 1] for e in result.employees]
        assert total.gross == sum(m.gross for m in rows)
        assert total.employer_cost == sum(m.gross + m.contributions.employer for m in rows)
        assert total.tax == sum(m.tax for m in rows) and total.net == sum(m.net for m in rows)
    # Withheld over the year = the tax on the year's cumulative taxable income.
    high = result.employees[2].months
    assert sum(m.tax for m in high) == tax_on(high[-1].taxable_cumulative)


# --- The rules file ------------------------------------------------------------------------------

def test_it_finds_a_city_by_english_or_chinese_name_in_any_case():
    assert {rules.city_rules(name, ON).key for name in ("Shanghai", "SHANGHAI", " shanghai ", "上海", "上海市")} \
        == {"shanghai"}
    assert rules.city_rules("北京", ON).key == "beijing"


def test_it_names_an_unknown_city_and_the_known_ones():
    with pytest.raises(rules.UnknownCity) as caught:
        rules.city_rules("Atlantis", ON)
    assert "Atlantis" in caught.value.message and "Shanghai (上海)" in caught.value.message
    assert caught.value.status_code == 404 and caught.value.extra["city"] == "Atlantis"


def test_it_falls_back_to_the_nationwide_default_only_when_asked():
    with pytest.raises(rules.UnknownCity):
        rules.city_rules("Lhasa", ON)
    assert rules.city_rules("Lhasa", ON, fallback=True).key == "cn"
    assert rules.city_rules("cn", ON).key == "cn"


def test_it_answers_the_last_known_period_as_not_current_after_it_ends():
    assert shanghai().current is True
    later = rules.city_rules("shanghai", date(2027, 1, 1))
    assert later.current is False and later.effective_from == date(2025, 7, 1)
    with pytest.raises(rules.RulesNotInEffect):
        rules.city_rules("shanghai", date(2020, 1, 1))


def test_shanghai_2025_has_the_published_figures():
    sh = shanghai()
    assert (sh.social_base.floor, sh.social_base.cap) == (D("7460"), D("37302"))
    rates = {r.kind: (r.employee_rate, r.employer_rate) for r in sh.contributions}
    assert rates["pension"] == (D("0.08"), D("0.16")) and rates["medical"] == (D("0.02"), D("0.09"))
    assert rates["unemployment"] == (D("0.005"), D("0.005")) and rates["housing_fund"] == (D("0.07"), D("0.07"))
    assert sh.housing_fund.employee_range == (D("0.05"), D("0.07"))
    assert sh.merged == {"maternity": "medical"}
    assert sh.source.year == 2025 and "人力资源和社会保障局" in sh.source.authority


@pytest.mark.parametrize("key", ["shanghai", "beijing", "shenzhen", "guangzhou", "hangzhou", "chengdu", "cn"])
def test_every_city_has_every_insurance_a_source_and_two_bases(key):
    city = rules.rules_file()[key]
    for period in city.periods:
        kinds = {rule.kind for rule in period.contributions} | set(period.merged)
        assert kinds == {*rules.SOCIAL_KINDS, rules.HOUSING_FUND}
        assert period.source.title and period.source.authority and period.source.year >= 2019
        assert period.social_base.floor < period.social_base.cap
        assert period.housing_fund_base.floor < period.housing_fund_base.cap
        injury = next(rule for rule in period.contributions if rule.kind == "injury")
        assert injury.employee_rate == 0 and injury.employer_range is not None
        low, high = period.housing_fund.employee_range
        assert low <= period.housing_fund.employee_rate <= high


def raw_rules() -> dict:
    return json.loads(rules.RULES_PATH.read_text(encoding="utf-8"))


def test_it_refuses_a_rules_file_with_a_floor_above_its_cap():
    data = copy.deepcopy(raw_rules())
    data["cities"]["shanghai"]["periods"][0]["social_base"] = {"floor": "40000", "cap": "37302"}
    with pytest.raises(rules.RulesFileError, match="floor 40000 is above cap 37302"):
        rules.rules_parse(data)


def test_it_refuses_a_rules_file_missing_an_insurance():
    data = copy.deepcopy(raw_rules())
    contributions = data["cities"]["beijing"]["periods"][0]["contributions"]
    data["cities"]["beijing"]["periods"][0]["contributions"] = [c for c in contributions if c["kind"] != "injury"]
    with pytest.raises(rules.RulesFileError, match="missing injury"):
        rules.rules_parse(data)


def test_it_refuses_a_rules_file_with_a_float_or_a_default_outside_its_range():
    data = copy.deepcopy(raw_rules())
    data["cities"]["shanghai"]["periods"][0]["contributions"][0]["employee_rate"] = 8
    with pytest.raises(rules.RulesFileError, match="amounts are strings"):
        rules.rules_parse(data)
    data = copy.deepcopy(raw_rules())
    data["cities"]["shanghai"]["periods"][0]["housing_fund"]["employee_rate"] = "12"
    with pytest.raises(rules.RulesFileError, match="outside its allowed range"):
        rules.rules_parse(data)
