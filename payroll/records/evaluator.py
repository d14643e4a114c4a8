"""The one evaluator of a payroll group's items: a payslip is the group's own items (or a
template's), evaluated in dependency order under one city's rules.

An item is either `base × rate` (`base` an expression, `rate` a fraction the template sets,
such as a 3 % commission, or `rate_name`, a parameter of the city's rules: never a rate
copied into the template) or a `formula`. A formula names:

- employee data: `base_salary`, `allowances` (their sum), `special_additional_deductions`,
  `contribution_base` (the base the employee's record gives, else the month's gross pay);
- the city rule's parameters, for each insurance kind and the housing fund:
  `{kind}_base` (the contribution base clamped to that kind's floor and cap),
  `{kind}_employee_rate`, `{kind}_employer_rate` (a kind merged into another, e.g.
  maternity into medical, has rates 0 and says so);
- the tenant's attendance terms in force (an AttendanceTerms, or the statutory defaults):
  `hourly_wage` (base_salary ÷ paid days a month ÷ hours a day), `daily_wage` (base_salary ÷
  paid days a month), `overtime_workday_rate`, `overtime_restday_rate`, `overtime_holiday_rate`,
  `absence_deduction_rate`, `sick_leave_pay_rate` (fractions: 1.5 is 150 %);
- monthly inputs (every other name the template declares: `sales_amount`, overtime hours…);
  an input not given is computed as zero and named in `missing_inputs`;
- other items by code, and the sums `gross_pay` (earnings), `employee_contributions`
  (deductions) and `employer_contributions`;
- the functions `min`, `max`, `abs` and `cumulative_tax(income, contributions, deductions)`:
  the month's income tax by the cumulative withholding method (payroll.calculation's
  `withholding`), over this month and the year's earlier months the evaluator has computed.

Expressions are evaluated by simpleeval (a single expression, names and functions
whitelisted, no attributes, no statements; chosen over asteval, which interprets a Python
subset with loops, assignments and definitions: more than a formula needs). Number literals
are read as `Decimal`. Rounding: every item ROUND_HALF_UP to the cent; sums are of rounded
items; net = gross − employee contributions − taxes, exact. payroll.calculation stays the
reference arithmetic: a general monthly template evaluated here gives its figures."""
from __future__ import annotations

import ast
import functools
import graphlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

import simpleeval

from .calculation import (
    ZERO,
    Contributions,
    ContributionLine,
    EmployeeInput,
    MonthIncome,
    MonthResult,
    MonthTotal,
    TrialResult,
    Withholding,
    YearToDate,
    cents,
    contribution_line,
    money_text,
    percent_text,
    withholding,
)
from .rules import HOUSING_FUND, SOCIAL_KINDS, CityRules

EARNING, DEDUCTION, EMPLOYER, TAX = "earning", "deduction", "employer_contribution", "tax"
KIND_ORDER = (EARNING, DEDUCTION, EMPLOYER, TAX)
RULE_KINDS = (*SOCIAL_KINDS, HOUSING_FUND)
EMPLOYEE_NAMES = ("base_salary", "allowances", "special_additional_deductions", "contribution_base")
SUMS = {"gross_pay": EARNING, "employee_contributions": DEDUCTION, "employer_contributions": EMPLOYER}
FUNCTIONS = ("min", "max", "abs", "cumulative_tax")
ATTENDANCE_RATES = ("overtime_workday_rate", "overtime_restday_rate", "overtime_holiday_rate",
                    "absence_deduction_rate", "sick_leave_pay_rate")
ATTENDANCE_NAMES = ("hourly_wage", "daily_wage", *ATTENDANCE_RATES)
# The standard working-hours system and Labour Law art. 44's overtime rates: what a month is
# computed with when the tenant saved no attendance rules.
ATTENDANCE_DEFAULTS = {"hours_per_day": Decimal("8"), "paid_days_per_month": Decimal("21.75"),
                       "overtime_workday_rate": Decimal("1.5"), "overtime_restday_rate": Decimal("2.0"),
                       "overtime_holiday_rate": Decimal("3.0"), "absence_deduction_rate": Decimal("1.0"),
                       "sick_leave_pay_rate": Decimal("0.8")}
RULE_NAMES = tuple(f"{kind}_{part}" for kind in RULE_KINDS for part in ("base", "employee_rate", "employer_rate"))
MAX_FORMULA_LENGTH = 500


class FormulaError(ValueError):
    """An item the evaluator cannot take: an unknown name, a construct formulas may not use, a
    cycle. `name` is the unknown name, `known` the names that were known (for the message)."""

    def __init__(self, message: str, *, item: str = "", name: str = "", known: Sequence[str] = ()):
        super().__init__(message)
        self.item, self.name, self.known = item, name, tuple(known)


@dataclass(frozen=True)
class Item:
    """An item as the evaluator reads it (a TemplateItem's or a GroupItem's fields)."""

    code: str
    name: str
    kind: str
    formula: str = ""
    base: str = ""
    rate: Decimal | None = None
    rate_name: str = ""
    name_zh: str = ""

    @property
    def shown_formula(self) -> str:
        """The item's formula as the card, the group page, the trial and the payslip show it."""
        if self.formula:
            return self.formula
        rate = self.rate_name or (percent_text(self.rate) if self.rate is not None else "?")
        return f"{self.base} × {rate}"


def item_of(row: Any) -> Item:
    """A TemplateItem or GroupItem (or anything with their fields) as an Item."""
    rate = getattr(row, "rate", None)
    return Item(code=row.code, name=row.name, kind=row.kind, formula=row.formula or "", base=row.base or "",
                rate=None if rate is None else Decimal(rate), rate_name=getattr(row, "rate_name", "") or "",
                name_zh=getattr(row, "name_zh", "") or "")


# --- Reading formulas ------------------------------------------------------------------------

_ALLOWED = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Call, ast.Name, ast.Load, ast.Constant, ast.Add, ast.Sub,
            ast.Mult, ast.Div, ast.USub, ast.UAdd)


def expression_names(expression: str, *, item: str = "") -> set[str]:
    """The names an expression reads (functions apart); FormulaError when it is not an
    arithmetic expression of names, numbers, + − × ÷ and the allowed functions."""
    if len(expression) > MAX_FORMULA_LENGTH:
        raise FormulaError(f"item '{item}': the formula is longer than {MAX_FORMULA_LENGTH} characters", item=item)
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError:
        raise FormulaError(f"item '{item}': '{expression}' is not a valid expression", item=item) from None
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise FormulaError(f"item '{item}': '{expression}' uses {type(node).__name__}, which formulas may not use",
                               item=item)
        if isinstance(node, ast.Constant) and (isinstance(node.value, bool)
                                               or not isinstance(node.value, (int, float))):
            raise FormulaError(f"item '{item}': '{expression}' holds {node.value!r}, which is not a number", item=item)
        if isinstance(node, ast.Call) and (not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS
                                           or node.keywords):
            raise FormulaError(f"item '{item}': '{expression}' calls a function formulas may not call "
                               f"(they may call {', '.join(FUNCTIONS)})", item=item)
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and id(node) not in called}


def item_names(item: Item) -> set[str]:
    """Every name an item reads: its formula's, or its base's and its rule rate's."""
    if item.formula:
        return expression_names(item.formula, item=item.code)
    if not item.base:
        raise FormulaError(f"item '{item.code}' has neither a formula nor a base", item=item.code)
    if item.rate is None and not item.rate_name:
        raise FormulaError(f"item '{item.code}' has a base but no rate", item=item.code)
    names = expression_names(item.base, item=item.code)
    if item.rate_name:
        names.add(item.rate_name)
    return names


def rule_names_of(names: Iterable[str]) -> set[str]:
    return {n for n in names if n in RULE_NAMES}


# --- A structure: a template's or a group's items, checked and ordered --------------------------

@dataclass(frozen=True)
class Structure:
    items: tuple[Item, ...]  # in evaluation order
    inputs: tuple[str, ...]  # the monthly inputs the items read
    depends: Mapping[str, frozenset[str]]


def known_names(variables: Iterable[str], codes: Iterable[str]) -> list[str]:
    """Every name a formula of these items may read, sorted (the message of a refusal lists them)."""
    return sorted({*EMPLOYEE_NAMES, *RULE_NAMES, *ATTENDANCE_NAMES, *SUMS, *variables, *codes})


def structure(items: Sequence[Item], variables: Iterable[str]) -> Structure:
    """The items checked and in dependency order (earnings, deductions, employer contributions,
    taxes, then by position where nothing orders them); FormulaError naming the item and the
    unknown name with the known ones, or the items of a cycle."""
    variables = list(variables)
    codes = [i.code for i in items]
    if len(set(codes)) != len(codes):
        raise FormulaError(f"two items have the code '{next(c for c in codes if codes.count(c) > 1)}'")
    clash = set(codes) & {*EMPLOYEE_NAMES, *RULE_NAMES, *ATTENDANCE_NAMES, *SUMS, *FUNCTIONS}
    if clash:
        raise FormulaError(f"the item code '{sorted(clash)[0]}' is a name the rules or the employee data use",
                           item=sorted(clash)[0])
    known = known_names(variables, codes)
    depends: dict[str, frozenset[str]] = {}
    for item in items:
        if item.kind not in KIND_ORDER:
            raise FormulaError(f"item '{item.code}' has the unknown kind '{item.kind}'", item=item.code)
        if item.rate_name and item.rate_name not in RULE_NAMES:
            rates = [n for n in RULE_NAMES if n.endswith("_rate")]
            raise FormulaError(f"item '{item.code}': its rate '{item.rate_name}' is not a parameter of the city "
                               f"rules; known: {', '.join(rates)}", item=item.code, name=item.rate_name, known=rates)
        names = item_names(item)
        for name in sorted(names):
            if name not in known:
                raise FormulaError(f"item '{item.code}' names '{name}', which is not known; known: {', '.join(known)}",
                                   item=item.code, name=name, known=known)
        depends[item.code] = frozenset(names)
    by_kind = {kind: [i.code for i in items if i.kind == kind] for kind in KIND_ORDER}
    sums = {name: set(by_kind[kind]) for name, kind in SUMS.items()}
    # contribution_base and every {kind}_base read the gross pay (unless the employee's record gives one).
    through_gross = {"contribution_base", *(f"{k}_base" for k in RULE_KINDS)}
    graph: dict[str, set[str]] = {}
    for code, names in depends.items():
        needs = set()
        for name in names:
            if name in depends:
                needs.add(name)
            elif name in sums:
                needs |= sums[name] | {name}
            elif name in through_gross:
                needs |= sums["gross_pay"] | {"gross_pay"}
        graph[code] = needs
    for name, members in sums.items():
        graph[name] = set(members)
    position = {code: n for n, code in enumerate(codes)}
    rank = {code: (KIND_ORDER.index(item.kind), position[code]) for code, item in zip(codes, items)}
    rank.update({name: (-1, 0) for name in SUMS})  # a sum is taken as soon as it is ready: it shows no line
    sorter = graphlib.TopologicalSorter(graph)
    try:
        sorter.prepare()
    except graphlib.CycleError as cycle:
        loop = [n for n in cycle.args[1] if n in depends]
        raise FormulaError(f"the items {' → '.join(dict.fromkeys(loop))} depend on each other in a circle",
                           item=loop[0] if loop else "") from None
    # Kahn's order, taking among the ready items the first by kind, then by position.
    ordered, ready = [], list(sorter.get_ready())
    while ready:
        chosen = min(ready, key=rank.__getitem__)
        ready.remove(chosen)
        if chosen in depends:
            ordered.append(chosen)
        sorter.done(chosen)
        ready.extend(sorter.get_ready())
    by_code = dict(zip(codes, items))
    inputs = sorted({n for names in depends.values() for n in names}
                    - {*EMPLOYEE_NAMES, *RULE_NAMES, *ATTENDANCE_NAMES, *SUMS, *codes})
    return Structure(items=tuple(by_code[c] for c in ordered), inputs=tuple(inputs), depends=depends)


def structure_problem(items: Sequence[Item], variables: Iterable[str]) -> str | None:
    """Why these items cannot be saved, or None."""
    try:
        structure(items, variables)
    except FormulaError as err:
        return str(err)
    return None


# --- Evaluating ---------------------------------------------------------------------------------

class _Decimals(simpleeval.SimpleEval):
    """simpleeval reading number literals as Decimal (0.03 is exactly 3/100)."""

    @staticmethod
    def _eval_constant(node: ast.Constant) -> Decimal:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise simpleeval.FeatureNotAvailable(f"{value!r} is not a number")
        return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


@functools.lru_cache(maxsize=4096)
def _parsed(expression: str) -> ast.AST:
    """An expression's tree, parsed once: a month of 10,000 payslips evaluates the same few
    formulas 10,000 times (the tree is only read)."""
    return simpleeval.SimpleEval.parse(expression)


OPERATORS = {ast.Add: simpleeval.safe_add, ast.Sub: simpleeval.op.sub, ast.Mult: simpleeval.safe_mult,
             ast.Div: simpleeval.op.truediv, ast.USub: simpleeval.op.neg, ast.UAdd: simpleeval.op.pos}


@dataclass(frozen=True)
class EvaluatedItem:
    code: str
    name: str
    name_zh: str
    kind: str
    formula: str
    base: Decimal | None  # the base actually used (after a floor or cap), or None for a formula item
    rate: Decimal | None  # the rate actually used
    amount: Decimal
    rule_kind: str = ""  # the insurance kind whose rule rate it used ("pension"…), if any
    side: str = ""  # "employee" or "employer", with rule_kind
    detail: str = ""  # how the base or the tax was reached, in figures
    merged_into: str = ""  # the rule kind this item's kind is part of in this city (rates 0 here)


@dataclass(frozen=True)
class EvaluatedMonth(MonthResult):
    items: tuple[EvaluatedItem, ...] = ()
    missing_inputs: tuple[str, ...] = ()
    employer_cost: Decimal = ZERO


@dataclass
class _Year:
    """The year so far of one employee: what cumulative_tax reads of the earlier months."""

    incomes: list[MonthIncome] = field(default_factory=list)
    last: Withholding | None = None
    # What the year held before the months in `incomes` (the closed months of this year, a
    # previous system's year-to-date figures, or both); None: the year starts here.
    opening: YearToDate | None = None


def attendance_values(terms: Any, base_salary: Decimal) -> tuple[dict[str, Decimal], str]:
    """The attendance names for one employee under `terms` (an AttendanceTerms, a mapping with
    its field names, or None: the defaults), and how the wages were reached, in figures. The
    wages are kept exact (not rounded): each item that reads them is rounded to the cent."""
    def term(name: str) -> Decimal:
        value = terms.get(name) if isinstance(terms, Mapping) else getattr(terms, name, None)
        return Decimal(str(ATTENDANCE_DEFAULTS[name] if value is None else value))

    days, hours = term("paid_days_per_month"), term("hours_per_day")
    if days <= 0 or hours <= 0:
        raise FormulaError(f"the attendance terms give {days} paid days a month and {hours} hours a day")
    daily = base_salary / days
    values = {"daily_wage": daily, "hourly_wage": daily / hours, **{n: term(n) for n in ATTENDANCE_RATES}}
    detail = (f"daily_wage = {money_text(base_salary)} ÷ {days} = {values['daily_wage']:,.4f}; "
              f"hourly_wage = {money_text(base_salary)} ÷ {days} ÷ {hours} = {values['hourly_wage']:,.4f}")
    return values, detail


def _rule_parameters(rules: CityRules | None, contribution_base: Decimal) -> dict[str, tuple[Decimal, str, str]]:
    """{name: (value, detail, merged_into)} of the city's parameters for this contribution base."""
    out: dict[str, tuple[Decimal, str, str]] = {}
    if rules is None:
        return out
    by_kind = {rule.kind: rule for rule in rules.contributions}
    for kind in RULE_KINDS:
        rule = by_kind.get(kind)
        merged = rules.merged.get(kind, "")
        bounds_rule = rule or by_kind.get(merged)
        if bounds_rule is None:
            continue
        line = contribution_line(bounds_rule, contribution_base, employee_rate=ZERO, employer_rate=ZERO)
        out[f"{kind}_base"] = (line.base, line.formulas["base"], merged)
        out[f"{kind}_employee_rate"] = (rule.employee_rate if rule else ZERO, "", merged)
        out[f"{kind}_employer_rate"] = (rule.employer_rate if rule else ZERO, "", merged)
    return out


def _decimal(value: Any, where: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (Decimal, int)):
        raise FormulaError(f"item '{where}' does not compute to an amount", item=where)
    return Decimal(value)


def month_evaluate(structure_: Structure, employee: EmployeeInput, rules: CityRules | None, month: int,
                   inputs: Mapping[str, Decimal], year: _Year, attendance: Any = None) -> EvaluatedMonth:
    """One month of one employee: every item in order, then the sums and net pay. `attendance`:
    the tenant's attendance terms in force (None: the standard ones)."""
    values: dict[str, Decimal] = {"base_salary": employee.base_salary,
                                  "allowances": sum(employee.allowances.values(), ZERO),
                                  "special_additional_deductions": employee.special_additional_deductions}
    wages, wages_detail = attendance_values(attendance, employee.base_salary)
    values.update(wages)
    missing = tuple(n for n in structure_.inputs if n not in inputs)
    for name in structure_.inputs:
        values[name] = Decimal(inputs.get(name, ZERO))
    details: dict[str, tuple[str, str]] = {}
    ready_sums: set[str] = set()
    evaluated: list[EvaluatedItem] = []
    amounts: dict[str, Decimal] = {}
    kinds = {i.code: i.kind for i in structure_.items}
    taxes: list[Withholding] = []

    def sums_ready(names: Iterable[str]) -> None:
        for name in names:
            if name in SUMS and name not in ready_sums:
                values[name] = sum((amounts[c] for c, k in kinds.items() if k == SUMS[name]), ZERO)
                ready_sums.add(name)
        needs_base = any(n == "contribution_base" or n in RULE_NAMES for n in names)
        if needs_base and "contribution_base" not in values:
            sums_ready(["gross_pay"])
            base = employee.contribution_base if employee.contribution_base is not None else values["gross_pay"]
            values["contribution_base"] = base
            for name, (value, detail, merged) in _rule_parameters(rules, base).items():
                values[name] = value
                details[name] = (detail, merged)

    def cumulative_tax(income: Any, contributions: Any, deductions: Any) -> Decimal:
        this = MonthIncome(_decimal(income, "cumulative_tax"), _decimal(contributions, "cumulative_tax"),
                           _decimal(deductions, "cumulative_tax"))
        result = withholding([*year.incomes, this], opening=year.opening)[-1]
        taxes.append(result)
        year.incomes.append(this)
        year.last = result
        return result.tax

    evaluator = _Decimals(operators=OPERATORS, functions={"min": min, "max": max, "abs": abs,
                                                          "cumulative_tax": cumulative_tax}, names=values)
    for item in structure_.items:
        names = structure_.depends[item.code]
        sums_ready(names)
        unavailable = sorted(n for n in names if n in RULE_NAMES and n not in values)
        if unavailable:
            raise FormulaError(f"item '{item.code}' reads {unavailable[0]}, which the rules of "
                               f"{rules.name if rules else 'no city'} do not give", item=item.code,
                               name=unavailable[0])
        before = len(taxes)
        try:
            if item.formula:
                raw, base, rate = evaluator.eval(item.formula, _parsed(item.formula)), None, None
                amount = cents(_decimal(raw, item.code))
            else:
                base = cents(_decimal(evaluator.eval(item.base, _parsed(item.base)), item.code))
                rate = values[item.rate_name] if item.rate_name else item.rate
                amount = cents(base * rate)
        except (simpleeval.InvalidExpression, InvalidOperation, ArithmeticError, TypeError) as err:
            raise FormulaError(f"item '{item.code}' cannot be computed: {err}", item=item.code) from None
        rule_kind = side = detail = merged = ""
        if item.rate_name:
            rule_kind, side = item.rate_name.split("_employe")[0], "employee" if "_employee_" in item.rate_name \
                else "employer"
            base_name = item.base if item.base in details else f"{rule_kind}_base"
            detail, merged = details.get(base_name, ("", ""))
        if not detail and names & {"hourly_wage", "daily_wage"}:
            detail = wages_detail
        if len(taxes) > before:
            tax = taxes[-1]
            base, rate, detail = tax.taxable_cumulative, tax.rate, tax.formulas["tax"]
        amounts[item.code] = amount
        values[item.code] = amount
        evaluated.append(EvaluatedItem(code=item.code, name=item.name, name_zh=item.name_zh, kind=item.kind,
                                       formula=item.shown_formula, base=base, rate=rate, amount=amount,
                                       rule_kind=rule_kind, side=side, detail=detail, merged_into=merged))
    by_kind = {kind: sum((i.amount for i in evaluated if i.kind == kind), ZERO) for kind in KIND_ORDER}
    gross, employee_total, employer_total, tax_total = (by_kind[k] for k in KIND_ORDER)
    net = gross - employee_total - tax_total
    withheld = taxes[-1] if taxes else None
    contributions = _contributions(evaluated, rules, values.get("contribution_base", gross), employee_total,
                                   employer_total)
    earnings = [i for i in evaluated if i.kind == EARNING]
    formulas = {
        "gross": " + ".join(filter(None, (_earning_text(i, employee) for i in earnings))) + f" = {money_text(gross)}",
        "net": f"{money_text(gross)} − {money_text(employee_total)} − {money_text(tax_total)} = {money_text(net)}"}
    if withheld is not None:
        formulas.update(withheld.formulas)
    return EvaluatedMonth(month=month, gross=gross, contributions=contributions,
                          taxable_cumulative=withheld.taxable_cumulative if withheld else ZERO, tax=tax_total, net=net,
                          formulas=formulas, items=tuple(evaluated), missing_inputs=missing,
                          employer_cost=gross + employer_total)


def _earning_text(item: EvaluatedItem, employee: EmployeeInput) -> str:
    """An earning in the gross's formula; the allowances item as each allowance, largest first
    (the same order on every read: PostgreSQL's jsonb keeps no key order)."""
    if item.formula == "allowances":  # none: no term
        ordered = sorted(employee.allowances.items(), key=lambda a: (-a[1], a[0]))
        return " + ".join(f"{money_text(amount)} ({name})" for name, amount in ordered)
    if item.formula == "base_salary × 100%":  # the base salary reads as itself
        return money_text(item.amount)
    return f"{money_text(item.amount)} ({item.name})"


def _contributions(items: Sequence[EvaluatedItem], rules: CityRules | None, base: Decimal, employee: Decimal,
                   employer: Decimal) -> Contributions:
    """The items that apply a rule's rate, as one line per insurance of the city (the shape the
    trial API has always answered), amounts and rates as the items computed them."""
    lines: list[ContributionLine] = []
    for rule in rules.contributions if rules else ():
        mine = [i for i in items if i.rule_kind == rule.kind and not i.merged_into]
        if not mine:
            continue
        ee = next((i for i in mine if i.side == "employee"), None)
        er = next((i for i in mine if i.side == "employer"), None)
        line = contribution_line(rule, base, employee_rate=ee.rate if ee else ZERO,
                                 employer_rate=er.rate if er else ZERO)
        lines.append(ContributionLine(
            kind=rule.kind, base=line.base, employee_rate=line.employee_rate,
            employee=sum((i.amount for i in mine if i.side == "employee"), ZERO), employer_rate=line.employer_rate,
            employer=sum((i.amount for i in mine if i.side == "employer"), ZERO), formulas=line.formulas))
    ours = [line.employee for line in lines] + [i.amount for i in items if i.kind == DEDUCTION and not i.rule_kind]
    theirs = [line.employer for line in lines] + [i.amount for i in items if i.kind == EMPLOYER and not i.rule_kind]
    return Contributions(
        employee=employee, employer=employer, items=tuple(lines),
        formulas={"employee": " + ".join(map(money_text, ours)) + f" = {money_text(employee)}",
                  "employer": " + ".join(map(money_text, theirs)) + f" = {money_text(employer)}"})


def employee_evaluate(structure_: Structure, employee: EmployeeInput, rules: CityRules | None, months: int,
                      inputs: Mapping[int, Mapping[str, Decimal]] | None = None) -> tuple[EvaluatedMonth, ...]:
    """Months 1..`months` of the tax year for one employee, the same pay each month, each
    month's inputs as given (`inputs[month]`)."""
    year = _Year()
    inputs = inputs or {}
    return tuple(month_evaluate(structure_, employee, rules, month, inputs.get(month, {}), year)
                 for month in range(1, months + 1))


@dataclass(frozen=True)
class EvaluatedTrial(TrialResult):
    missing_inputs: tuple[str, ...] = ()  # every input some month of some employee lacked
    inputs: tuple[str, ...] = ()


def trial(employees: Sequence[EmployeeInput], rules: CityRules, structure_: Structure, months: int = 3,
          inputs: Mapping[str, Mapping[int, Mapping[str, Decimal]]] | None = None,
          on: date | None = None) -> EvaluatedTrial:
    """A trial of `months` months: each employee evaluated through `structure_` under `rules`;
    `inputs` by employee number, then month."""
    inputs = inputs or {}
    from .calculation import EmployeeTrial

    results = tuple(EmployeeTrial(e.employee_no, employee_evaluate(structure_, e, rules, months,
                                                                   inputs.get(e.employee_no)))
                    for e in employees)
    totals = []
    for index in range(months):
        rows = [r.months[index] for r in results]
        totals.append(MonthTotal(month=index + 1, gross=sum((m.gross for m in rows), ZERO),
                                 employer_cost=sum((m.employer_cost for m in rows), ZERO),
                                 tax=sum((m.tax for m in rows), ZERO), net=sum((m.net for m in rows), ZERO)))
    missing = sorted({n for r in results for m in r.months for n in m.missing_inputs})
    return EvaluatedTrial(rules=rules, employees=results, totals=tuple(totals), missing_inputs=tuple(missing),
                          inputs=structure_.inputs)
