"""Cumulative withholding continued from a year to date (a customer whose year began in another
payroll system), checked against an independent reading of the published method
(reference_tax.py). Pure: no database."""
from decimal import Decimal as D

import pytest

from payroll.records.calculation import CalculationError, MonthIncome, YearToDate, withholding
from payroll.tests import reference_tax as ref

# Three employees of a Shanghai group whose January–October were paid by another system.
# Each month's pay by kind, the special additional deductions a month, the previous system's
# year to date, and November/December (November carries a sales commission).
EMPLOYEES = {
    "E001": {  # crosses into the 20 % band during the year
        "month": dict(pension=D("2400.00"), medical=D("600.00"), unemployment=D("150.00"), housing_fund=D("1350.00"),
                      special_additional=D("2000.00")),
        "before": ref.Before(months=10, income=D("300000.00"), special=D("45000.00"), special_additional=D("20000.00"),
                             withheld=D("19000.00")),
        "incomes": (D("42000.00"), D("30000.00")),
    },
    "E002": {  # cents everywhere: the rounding of a 3 %/10 % tax on odd amounts
        "month": dict(pension=D("987.65"), medical=D("246.91"), unemployment=D("61.73"), housing_fund=D("864.20"),
                      special_additional=D("1500.00")),
        "before": ref.Before(months=10, income=D("123456.70"), special=D("21604.90"), special_additional=D("15000.00"),
                             withheld=D("1165.18")),
        "incomes": (D("15345.67"), D("12345.67")),
    },
    "E003": {  # a high earner in the 30 % band, December crossing into 35 %
        "month": dict(pension=D("2798.40"), medical=D("699.60"), unemployment=D("174.90"), housing_fund=D("2448.60"),
                      special_additional=D("3000.00")),
        "before": ref.Before(months=10, income=D("720000.00"), special=D("61215.00"), special_additional=D("30000.00"),
                             withheld=D("120715.50")),
        "incomes": (D("95000.00"), D("120000.00")),
    },
}


def _ours(employee: dict) -> list:
    m, before = employee["month"], employee["before"]
    contributions = m["pension"] + m["medical"] + m["unemployment"] + m["housing_fund"]
    opening = YearToDate(months_employed=before.months, income=before.income, contributions=before.special,
                         special_additional_deductions=before.special_additional, tax_withheld=before.withheld)
    return withholding([MonthIncome(i, contributions, m["special_additional"]) for i in employee["incomes"]],
                       opening)


def _reference(employee: dict) -> list:
    m = employee["month"]
    return ref.withhold([ref.Month(income=i, **m) for i in employee["incomes"]], employee["before"])


def _same(ours, theirs) -> None:
    """Every figure the declaration shows, to the cent."""
    assert ours.month == theirs.month
    assert ours.income_cumulative == theirs.cumulative_income
    assert ours.basic_deduction_cumulative == theirs.cumulative_basic
    assert ours.contributions_cumulative == theirs.cumulative_special
    assert ours.special_additional_deductions_cumulative == theirs.cumulative_special_additional
    assert ours.taxable_cumulative == theirs.cumulative_taxable
    assert (ours.rate, ours.quick_deduction) == (theirs.rate, theirs.quick_deduction)
    assert ours.tax_cumulative == theirs.cumulative_tax
    assert ours.withheld_before == theirs.withheld_before
    assert ours.tax == theirs.this_month


@pytest.mark.parametrize("number", sorted(EMPLOYEES))
def test_it_withholds_november_and_december_after_ten_months_elsewhere_as_the_published_method(number):
    ours, theirs = _ours(EMPLOYEES[number]), _reference(EMPLOYEES[number])
    assert [t.month for t in ours] == [11, 12]
    for mine, reference in zip(ours, theirs, strict=True):
        _same(mine, reference)


def test_the_november_figures_of_the_first_employee_are_those_worked_by_hand():
    november, december = _ours(EMPLOYEES["E001"])
    # 342,000 − 55,000 (5,000 × 11 months) − 49,500 − 22,000 = 215,500, in the 20 % band:
    # 215,500 × 20 % − 16,920 = 26,180; the previous system withheld 19,000.
    assert november.taxable_cumulative == D("215500.00")
    assert (november.rate, november.quick_deduction) == (D("0.20"), D("16920"))
    assert (november.tax_cumulative, november.tax) == (D("26180.00"), D("7180.00"))
    # December: 372,000 − 60,000 − 54,000 − 24,000 = 234,000 → 29,880; 26,180 withheld before.
    assert (december.taxable_cumulative, december.withheld_before, december.tax) == \
        (D("234000.00"), D("26180.00"), D("3700.00"))


def test_the_high_earner_crosses_into_the_35_percent_band_in_december():
    november, december = _ours(EMPLOYEES["E003"])
    assert (november.rate, december.rate) == (D("0.30"), D("0.35"))


def test_an_opening_continues_the_year_exactly_as_if_the_whole_year_had_been_computed_here():
    pay = [MonthIncome(D("30000.00") + 1000 * n, D("4500.00"), D("2000.00")) for n in range(12)]
    whole = withholding(pay)
    first_ten = whole[9]
    opening = YearToDate(months_employed=10, income=first_ten.income_cumulative,
                         contributions=first_ten.contributions_cumulative,
                         special_additional_deductions=first_ten.special_additional_deductions_cumulative,
                         tax_withheld=first_ten.withheld_before + first_ten.tax)
    assert withholding(pay[10:], opening) == whole[10:]


def test_a_year_crossing_brackets_withholds_each_month_as_the_published_method():
    months = [ref.Month(income=D("40000.00"), pension=D("2000.00"), medical=D("500.00"), unemployment=D("100.00"),
                        housing_fund=D("1400.00"))] * 12
    ours = withholding([MonthIncome(D("40000.00"), D("4000.00"))] * 12)
    theirs = ref.withhold(months)
    for mine, reference in zip(ours, theirs, strict=True):
        _same(mine, reference)
    # 31,000 taxable a month: 3 % in January, 10 % from February, 20 % from May, 25 % from October.
    assert [t.rate for t in ours] == [D("0.03")] + [D("0.10")] * 3 + [D("0.20")] * 5 + [D("0.25")] * 3
    # Crossing a bracket raises a month's tax: the month a band starts withholds more.
    assert ours[1].tax > ours[0].tax and ours[4].tax > ours[3].tax


def test_a_month_paid_less_than_the_last_withholds_nothing_and_never_refunds():
    incomes = [D("30000.00"), D("30000.00"), D("3000.00"), D("5000.00")]
    ours = withholding([MonthIncome(i, D("0.00")) for i in incomes])
    theirs = ref.withhold([ref.Month(income=i) for i in incomes])
    for mine, reference in zip(ours, theirs, strict=True):
        _same(mine, reference)
    # March's cumulative tax (63,000 − 15,000 = 48,000 → 2,280) is below what Jan–Feb withheld (2,480).
    assert ours[2].tax_cumulative == D("2280.00") and ours[2].withheld_before == D("2480.00")
    assert ours[2].tax == D("0.00")
    # April: 68,000 − 20,000 = 48,000 taxable → 2,280, still below 2,480: again nothing, not a refund.
    assert [t.tax for t in ours] == [D("750.00"), D("1730.00"), D("0.00"), D("0.00")]
    assert all(t.tax >= 0 for t in ours)


def test_an_opening_that_withheld_more_than_is_due_withholds_nothing():
    opening = YearToDate(10, D("100000.00"), D("10000.00"), D("0.00"), D("5000.00"))
    november = withholding([MonthIncome(D("10000.00"), D("1000.00"))], opening)[0]
    theirs = ref.withhold([ref.Month(income=D("10000.00"), pension=D("1000.00"))],
                          ref.Before(10, D("100000.00"), D("10000.00"), D("0.00"), D("5000.00")))[0]
    _same(november, theirs)
    assert november.tax == D("0.00") and november.tax_cumulative < opening.tax_withheld


def test_without_an_opening_the_figures_are_those_of_a_year_starting_here():
    pay = [MonthIncome(D("30000"), D("4500"), D("2000"))] * 3
    assert withholding(pay, None) == withholding(pay) == withholding(pay, YearToDate(0, D(0), D(0), D(0), D(0)))
    assert [t.tax for t in withholding(pay)] == [D("555.00"), D("625.00"), D("1850.00")]


@pytest.mark.parametrize("opening, months, message", [
    (YearToDate(12, D(0), D(0), D(0), D(0)), 1, "months employed before must be 0–11"),
    (YearToDate(11, D(0), D(0), D(0), D(0)), 2, "11 months before and 2 here exceed"),
    (YearToDate(3, D("-1"), D(0), D(0), D(0)), 1, "income cannot be negative"),
    (YearToDate(3, D(0), D(0), D(0), D("-0.01")), 1, "tax_withheld cannot be negative"),
])
def test_it_refuses_an_opening_the_year_cannot_hold(opening, months, message):
    with pytest.raises(CalculationError, match=message):
        withholding([MonthIncome(D("10000"), D("0"))] * months, opening)


def test_the_formula_counts_the_opening_months_in_the_basic_deduction():
    november = withholding([MonthIncome(D("20000"), D("0"))], YearToDate(10, D("200000"), D(0), D(0), D(0)))[0]
    assert november.formulas["taxable_cumulative"].startswith("220,000.00 − 55,000.00 (5,000.00 × 11)")


def test_the_reference_bands_give_the_published_quick_deductions():
    # The reference computes the tax slice by slice; the quick deductions it implies are the
    # published ones (0, 2,520, 16,920, 31,920, 52,920, 85,920, 181,920).
    edges = [D("1"), D("36001"), D("144001"), D("300001"), D("420001"), D("660001"), D("960001")]
    assert [ref.banded_tax(e)[2] for e in edges] == [D(q) for q in (0, 2520, 16920, 31920, 52920, 85920, 181920)]
