"""A trial month (试算): gross, social insurance and housing fund, individual income tax, net.

Pure functions over `Decimal`; nothing here reads or writes the database. Rounding, per
amount:

- gross: the sum of the amounts given (they carry at most cents), not rounded again;
- each contribution, employee's and employer's separately: base × rate, ROUND_HALF_UP to
  the cent, item by item; the totals are sums of the rounded items;
- the cumulative tax: cumulative taxable income × rate − quick deduction, ROUND_HALF_UP to
  the cent; this month's tax is the difference of two such amounts, so already in cents;
- net: gross − employee contributions − tax, exact.

Income tax is withheld by the cumulative method (累计预扣法, 国家税务总局公告2018年第61号):
the taxable income and the tax are computed on the year so far and the month withholds the
difference from what earlier months withheld. Month 1 of a trial is the first month of the
tax year (or of employment in it). A customer whose year began in another payroll system
brings that system's year to date (`YearToDate`: months employed, income, contributions,
special additional deductions, tax withheld) and the cumulative sums continue from it."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

from .rules import HOUSING_FUND, CityRules, ContributionRule, city_rules

CENT = Decimal("0.01")
ZERO = Decimal("0.00")
BASIC_DEDUCTION = Decimal("5000")  # 基本减除费用, a month
MAX_MONTHS = 12

# The annual table (综合所得适用的个人所得税税率表 / 预扣率表一): up to and including
# `upper`, rate and quick deduction (速算扣除数). Applied to the cumulative taxable income.
TAX_BRACKETS: tuple[tuple[Decimal | None, Decimal, Decimal], ...] = (
    (Decimal("36000"), Decimal("0.03"), Decimal("0")),
    (Decimal("144000"), Decimal("0.10"), Decimal("2520")),
    (Decimal("300000"), Decimal("0.20"), Decimal("16920")),
    (Decimal("420000"), Decimal("0.25"), Decimal("31920")),
    (Decimal("660000"), Decimal("0.30"), Decimal("52920")),
    (Decimal("960000"), Decimal("0.35"), Decimal("85920")),
    (None, Decimal("0.45"), Decimal("181920")),
)


def cents(amount: Decimal) -> Decimal:
    """ROUND_HALF_UP to the cent (0.005 → 0.01)."""
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def money_text(amount: Decimal) -> str:
    """30000 → "30,000.00" (formulas only; the API answers plain "30000.00")."""
    return f"{amount:,.2f}"


def percent_text(rate: Decimal) -> str:
    """Decimal("0.005") → "0.5%"."""
    return format((rate * 100).normalize(), "f") + "%"


# --- Inputs and results ----------------------------------------------------------------

@dataclass(frozen=True)
class EmployeeInput:
    """One employee's monthly pay for a trial; the same every month of the trial."""

    employee_no: str
    base_salary: Decimal
    allowances: Mapping[str, Decimal] = field(default_factory=dict)  # fixed allowances by item
    special_additional_deductions: Decimal = ZERO  # 专项附加扣除, a month
    contribution_base: Decimal | None = None  # None: the gross
    housing_fund_rate: Decimal | None = None  # a fraction within the city's allowed range; None: its default


@dataclass(frozen=True)
class ContributionLine:
    kind: str
    base: Decimal  # the base after the floor and cap
    employee_rate: Decimal
    employee: Decimal
    employer_rate: Decimal
    employer: Decimal
    formulas: dict[str, str]  # base, employee, employer


@dataclass(frozen=True)
class Contributions:
    employee: Decimal
    employer: Decimal
    items: tuple[ContributionLine, ...]
    formulas: dict[str, str]  # employee, employer


@dataclass(frozen=True)
class MonthIncome:
    """What the withholding of one month reads."""

    gross: Decimal
    employee_contributions: Decimal  # social insurance + housing fund, the employee's share
    special_additional_deductions: Decimal = ZERO


@dataclass(frozen=True)
class YearToDate:
    """The tax year so far in the same employer before the first month computed here (a
    customer's previous payroll system): the cumulative sums the method continues from."""

    months_employed: int  # months of this year already paid by this employer
    income: Decimal  # 累计收入
    contributions: Decimal  # 累计专项扣除: pension + medical + unemployment + housing fund, employee's
    special_additional_deductions: Decimal  # 累计专项附加扣除
    tax_withheld: Decimal  # 累计已预扣预缴税额


@dataclass(frozen=True)
class Withholding:
    month: int  # the month's number in the employment this year, the opening's months included
    taxable_cumulative: Decimal
    rate: Decimal
    quick_deduction: Decimal
    tax_cumulative: Decimal
    withheld_before: Decimal
    tax: Decimal
    formulas: dict[str, str]  # taxable_cumulative, tax
    # The cumulative sums the taxable income was computed from (a declaration's columns).
    income_cumulative: Decimal = ZERO
    basic_deduction_cumulative: Decimal = ZERO
    contributions_cumulative: Decimal = ZERO
    special_additional_deductions_cumulative: Decimal = ZERO


@dataclass(frozen=True)
class MonthResult:
    month: int
    gross: Decimal
    contributions: Contributions
    taxable_cumulative: Decimal
    tax: Decimal
    net: Decimal
    formulas: dict[str, str]  # gross, taxable_cumulative, tax, net


@dataclass(frozen=True)
class EmployeeTrial:
    employee_no: str
    months: tuple[MonthResult, ...]


@dataclass(frozen=True)
class MonthTotal:
    month: int
    gross: Decimal
    employer_cost: Decimal  # gross + the employer's contributions
    tax: Decimal
    net: Decimal


@dataclass(frozen=True)
class TrialResult:
    rules: CityRules
    employees: tuple[EmployeeTrial, ...]
    totals: tuple[MonthTotal, ...]


class CalculationError(ValueError):
    """An input the calculation cannot take (the API validates before it gets here)."""


# --- The amounts -------------------------------------------------------------------------

def gross_pay(base_salary: Decimal, allowances: Mapping[str, Decimal]) -> tuple[Decimal, str]:
    """Base salary + each fixed allowance, and its formula: the allowances largest first (by
    name when equal), the same order on every read (PostgreSQL's jsonb keeps no key order)."""
    gross = base_salary + sum(allowances.values(), ZERO)
    ordered = sorted(allowances.items(), key=lambda item: (-item[1], item[0]))
    parts = [money_text(base_salary)] + [f"{money_text(amount)} ({name})" for name, amount in ordered]
    return gross, f"{' + '.join(parts)} = {money_text(gross)}"


def contribution_line(rule: ContributionRule, base: Decimal, *, employee_rate: Decimal | None = None,
                      employer_rate: Decimal | None = None) -> ContributionLine:
    """One insurance: `base` clamped to the rule's [floor, cap], × each rate, ROUND_HALF_UP to the cent."""
    employee_rate = rule.employee_rate if employee_rate is None else employee_rate
    employer_rate = rule.employer_rate if employer_rate is None else employer_rate
    clamped = rule.base.clamp(base)
    employee, employer = cents(clamped * employee_rate), cents(clamped * employer_rate)
    if clamped == base:
        base_formula = f"{money_text(base)} (within {money_text(rule.base.floor)}–{money_text(rule.base.cap)})"
    else:
        which = "floor" if clamped == rule.base.floor else "cap"
        base_formula = f"{money_text(base)} → {money_text(clamped)} ({which})"
    return ContributionLine(
        kind=rule.kind, base=clamped, employee_rate=employee_rate, employee=employee, employer_rate=employer_rate,
        employer=employer,
        formulas={"base": base_formula,
                  "employee": f"{money_text(clamped)} × {percent_text(employee_rate)} = {money_text(employee)}",
                  "employer": f"{money_text(clamped)} × {percent_text(employer_rate)} = {money_text(employer)}"})


def contributions_for(rules: CityRules, base: Decimal, *, housing_fund_rate: Decimal | None = None) -> Contributions:
    """Every insurance and the housing fund of one month, on `base` (each item clamps it to
    its own floor and cap: the housing fund's differ from the social insurances')."""
    items = []
    for rule in rules.contributions:
        if rule.kind == HOUSING_FUND and housing_fund_rate is not None:
            allowed = rule.employee_range
            if allowed is not None and not allowed[0] <= housing_fund_rate <= allowed[1]:
                raise CalculationError(f"housing fund rate {percent_text(housing_fund_rate)} is outside "
                                       f"{percent_text(allowed[0])}–{percent_text(allowed[1])}")
            items.append(contribution_line(rule, base, employee_rate=housing_fund_rate,
                                           employer_rate=housing_fund_rate))
        else:
            items.append(contribution_line(rule, base))
    employee = sum((line.employee for line in items), ZERO)
    employer = sum((line.employer for line in items), ZERO)
    return Contributions(
        employee=employee, employer=employer, items=tuple(items),
        formulas={"employee": " + ".join(money_text(line.employee) for line in items) + f" = {money_text(employee)}",
                  "employer": " + ".join(money_text(line.employer) for line in items) + f" = {money_text(employer)}"})


def bracket(taxable_cumulative: Decimal) -> tuple[Decimal, Decimal]:
    """(rate, quick deduction) of the annual table for a cumulative taxable income."""
    for upper, rate, quick in TAX_BRACKETS:
        if upper is None or taxable_cumulative <= upper:
            return rate, quick
    raise AssertionError("the last bracket has no upper bound")


def tax_on(taxable_cumulative: Decimal) -> Decimal:
    """The tax on a cumulative taxable income: × rate − quick deduction, ROUND_HALF_UP to the cent."""
    rate, quick = bracket(taxable_cumulative)
    return max(cents(taxable_cumulative * rate - quick), ZERO)


def _check_opening(opening: YearToDate, months: int) -> None:
    if not 0 <= opening.months_employed < MAX_MONTHS:
        raise CalculationError(f"months employed before must be 0–{MAX_MONTHS - 1}, not {opening.months_employed}")
    if opening.months_employed + months > MAX_MONTHS:
        raise CalculationError(f"{opening.months_employed} months before and {months} here exceed a tax "
                               f"year's {MAX_MONTHS}")
    for name in ("income", "contributions", "special_additional_deductions", "tax_withheld"):
        if getattr(opening, name) < 0:
            raise CalculationError(f"the year to date's {name} cannot be negative")


def withholding(incomes: Sequence[MonthIncome], opening: YearToDate | None = None) -> list[Withholding]:
    """The tax withheld each month by the cumulative method, month 1 being the tax year's first
    (or, with an `opening`, the month after the opening's months):

    cumulative taxable = cumulative gross − 5,000 × months − cumulative employee contributions
                         − cumulative special additional deductions (never below 0);
    cumulative tax = cumulative taxable × rate − quick deduction (annual table, to the cent);
    this month's tax = cumulative tax − what earlier months withheld, never below 0 (when the
    cumulative tax goes down, e.g. a deduction claimed late, the month withholds nothing and
    the difference is settled in the annual reconciliation, 汇算清缴).

    Every cumulative sum, the months and what was withheld start from the opening's."""
    if len(incomes) > MAX_MONTHS:
        raise CalculationError(f"a tax year has {MAX_MONTHS} months, not {len(incomes)}")
    if opening is None:
        opening = YearToDate(0, ZERO, ZERO, ZERO, ZERO)
    _check_opening(opening, len(incomes))
    results = []
    gross, contributions = opening.income, opening.contributions
    deductions, withheld = opening.special_additional_deductions, opening.tax_withheld
    for month, income in enumerate(incomes, start=opening.months_employed + 1):
        gross += income.gross
        contributions += income.employee_contributions
        deductions += income.special_additional_deductions
        basic = BASIC_DEDUCTION * month
        raw = gross - basic - contributions - deductions
        taxable = max(raw, ZERO)
        rate, quick = bracket(taxable)
        tax_cumulative = tax_on(taxable)
        tax = max(tax_cumulative - withheld, ZERO)
        taxable_formula = (f"{money_text(gross)} − {money_text(basic)} (5,000.00 × {month}) − "
                           f"{money_text(contributions)} − {money_text(deductions)} = {money_text(raw)}")
        if raw < 0:
            taxable_formula += " → 0.00"
        tax_formula = (f"{money_text(taxable)} × {percent_text(rate)} − {money_text(quick)} = "
                       f"{money_text(tax_cumulative)}; {money_text(tax_cumulative)} − {money_text(withheld)} "
                       f"withheld before = {money_text(tax_cumulative - withheld)}")
        if tax != tax_cumulative - withheld:
            tax_formula += " → 0.00"
        results.append(Withholding(month=month, taxable_cumulative=taxable, rate=rate, quick_deduction=quick,
                                   tax_cumulative=tax_cumulative, withheld_before=withheld, tax=tax,
                                   formulas={"taxable_cumulative": taxable_formula, "tax": tax_formula},
                                   income_cumulative=gross, basic_deduction_cumulative=basic,
                                   contributions_cumulative=contributions,
                                   special_additional_deductions_cumulative=deductions))
        withheld += tax
    return results


def employee_months(employee: EmployeeInput, rules: CityRules, months: int) -> tuple[MonthResult, ...]:
    """An employee's first `months` months of a tax year, the same pay each month."""
    if not 1 <= months <= MAX_MONTHS:
        raise CalculationError(f"months must be 1–{MAX_MONTHS}, not {months}")
    gross, gross_formula = gross_pay(employee.base_salary, employee.allowances)
    base = gross if employee.contribution_base is None else employee.contribution_base
    contributions = contributions_for(rules, base, housing_fund_rate=employee.housing_fund_rate)
    taxes = withholding([MonthIncome(gross, contributions.employee, employee.special_additional_deductions)] * months)
    results = []
    for tax in taxes:
        net = gross - contributions.employee - tax.tax
        results.append(MonthResult(
            month=tax.month, gross=gross, contributions=contributions, taxable_cumulative=tax.taxable_cumulative,
            tax=tax.tax, net=net,
            formulas={"gross": gross_formula, **tax.formulas,
                      "net": f"{money_text(gross)} − {money_text(contributions.employee)} − "
                             f"{money_text(tax.tax)} = {money_text(net)}"}))
    return tuple(results)


def trial(employees: Sequence[EmployeeInput], city: str | CityRules, months: int = 3,
          on: date | None = None) -> TrialResult:
    """A trial payroll of `months` months for `employees` under `city`'s rules in effect on
    `on` (today by default); `city` may also be a CityRules (tests, a later phase's overrides)."""
    rules = city if isinstance(city, CityRules) else city_rules(city, on or date.today())
    results = tuple(EmployeeTrial(e.employee_no, employee_months(e, rules, months)) for e in employees)
    totals = []
    for index in range(months):
        rows = [r.months[index] for r in results]
        totals.append(MonthTotal(
            month=index + 1,
            gross=sum((m.gross for m in rows), ZERO),
            employer_cost=sum((m.gross + m.contributions.employer for m in rows), ZERO),
            tax=sum((m.tax for m in rows), ZERO),
            net=sum((m.net for m in rows), ZERO)))
    return TrialResult(rules=rules, employees=results, totals=tuple(totals))
