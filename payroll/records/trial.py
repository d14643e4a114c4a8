"""The trial of a new payroll group: months 1–3 of the current year for every
employee, by payroll.records.calculation under the city rules of the group's template (payroll.records.rules).

One computation serves three readers, so they never drift apart: the setup run's step
`trial_payroll` (its output is the receipt the chat's news and the acceptance read), the
import's approval card (the same trial for the people the run will assign, before anyone
approves) and the payslip page (one employee, one month, every formula).

The trial projects today's pay: each employee's pay in force today (payroll.models
Employee.pay_on) is applied to the tax year's first months, as the cumulative withholding
counts them — a trial of what the group will pay, not a replay of what was paid."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext_noop

from config.words import Stored, localised, ngettext_noop, sentences, words
from workflows.tools import Acceptance, NeedsInput, Tool, ToolBlocked, ToolContext, tool_register

from . import evaluator
from .evaluator import EvaluatedMonth, Structure, item_of
from payroll.models import Employee, EmployeePay, PayrollGroup, PayrollTemplate

from .calculation import EmployeeInput
from .rules import NATIONWIDE, CityRules, RulesNotInEffect, UnknownCity, city_find, city_rules
from .services import Actor, employee_pay_record

TRIAL_MONTHS = 3
COMPUTES = "every employee of the group computes, or the group says it has none"
SAMPLE_PAYSLIPS = 3
ID = {"type": "string", "pattern": "^[0-9]{1,19}$"}


class NoCityRules(Exception):
    """The group's place has no social insurance and housing fund rules: nothing can be computed."""

    def __init__(self, place: str, place_zh: str, detail: str = ""):
        super().__init__(place)
        self.place, self.place_zh, self.detail = place, place_zh, detail


# --- the city of a group ---------------------------------------------------------------------

def region_place(region: str) -> tuple[str, str]:
    """A template's region as a place's name (English, Chinese): "CN-Shanghai" → Shanghai, "CN" → China."""
    from payroll.reading.requirements import REGION_NAMES, gazetteer

    if region in REGION_NAMES:
        return REGION_NAMES[region]
    if region.startswith("CN-"):
        name = region.removeprefix("CN-")
        city = gazetteer()["by_pinyin"].get(name.lower().replace(" ", "").replace("'", ""))
        return name, (city["zh"] if city else name)
    return region, region


def trial_applies(region: str) -> bool:
    """The trial models mainland China's social insurance, housing fund and income tax: a
    template for another country (Singapore, the US, Hong Kong) gets no trial, said as such."""
    return region == "CN" or (region or "").startswith("CN-")


def city_of_params(params: dict[str, Any]) -> str:
    """The mainland city a setup run's request names, as the group's city: the rules' key when
    the rules know it, else the name as said (the trial then says plainly that it has no rules
    for it); blank when the request names none or a place outside the mainland."""
    from payroll.reading.requirements import requirements_extract

    requirements = params.get("requirements") or requirements_extract((params.get("request") or "")[:2000])
    region, city = requirements.get("region") or "", requirements.get("city") or {}
    name = city.get("en") if isinstance(city, dict) else None
    if not (name and region.startswith("CN")):
        return ""
    try:
        return city_find(name).key
    except UnknownCity:
        return str(name)[:40]


def city_of_region(region: str, city: str = "") -> str:
    """The rules' city key of a group: its own `city` when it has one (a template is a structure,
    the city a rule set), else its template's region's (CN-Shanghai → shanghai, CN → cn);
    NoCityRules naming the place when the rules have none (Singapore, a city not in the rules)."""
    if city:
        try:
            return city_find(city).key
        except UnknownCity:
            raise NoCityRules(*region_place(f"CN-{city}")) from None
    place, place_zh = region_place(region or "")
    name = NATIONWIDE if region == "CN" else (region.removeprefix("CN-") if region.startswith("CN-") else None)
    if name is None:
        raise NoCityRules(place, place_zh)
    try:
        return city_find(name).key
    except UnknownCity:
        raise NoCityRules(place, place_zh) from None


def rules_for(region: str, year: int, month: int = 1, city: str = "") -> CityRules:
    """The rules in effect on the first day of `month` of `year` (past the last period: that
    period, flagged not current)."""
    key = city_of_region(region, city)
    try:
        return city_rules(key, date(year, month, 1))
    except RulesNotInEffect as err:
        place, place_zh = region_place(region)
        raise NoCityRules(place, place_zh, err.message) from None


# --- what is computed: a template's or a group's items ------------------------------------------

def template_structure(template: PayrollTemplate) -> Structure:
    """A template's items, checked and ordered (evaluator.FormulaError when they cannot be)."""
    return evaluator.structure([item_of(i) for i in template.items.order_by("position")], template.variables)


def group_structure(group: PayrollGroup) -> Structure:
    """A group's own items: what its payslips compute."""
    return evaluator.structure([item_of(i) for i in group.items.order_by("position")], group.variables or [])


GENERAL_TEMPLATE = "cn-sh-monthly-salaried"


def general_template(city_key: str) -> PayrollTemplate | None:
    """The general monthly template a trial of `city_key` computes when none is named: the
    city's own monthly salaried template where the catalog has one, else the general monthly
    structure (every monthly salaried template has the same items; the city gives the rates)."""
    found = city_find(city_key)
    own = (PayrollTemplate.objects.filter(region=f"CN-{found.name}", code__endswith="-monthly-salaried")
           .order_by("code", "-version").first())
    return own or PayrollTemplate.objects.filter(code=GENERAL_TEMPLATE).order_by("-version").first()


# --- who is computed, with what pay ----------------------------------------------------------

@dataclass
class Person:
    """One employee of a trial: an employee of the tenant, or a row of an export not yet created."""

    key: str  # the employee's id, or "new:<number>" for a proposed one
    employee_no: str
    name: str
    pay: dict[str, Any] | None  # base_salary, allowances, special_additional_deductions (Decimals)


def pay_dict(row: EmployeePay | None) -> dict[str, Any] | None:
    if row is None:
        return None
    return {"base_salary": Decimal(row.base_salary),
            "allowances": {k: Decimal(str(v)) for k, v in (row.allowances or {}).items()},
            "special_additional_deductions": Decimal(row.special_additional_deductions or 0)}


def pay_of_export(pay: dict[str, Any] | None) -> dict[str, Any] | None:
    """An export's pay (amounts as strings) as the trial reads it."""
    if not pay or not pay.get("base_salary"):
        return None
    return {"base_salary": Decimal(str(pay["base_salary"])),
            "allowances": {k: Decimal(str(v)) for k, v in (pay.get("allowances") or {}).items()},
            "special_additional_deductions": Decimal(str(pay.get("special_additional_deductions") or 0))}


def employee_person(employee: Employee, today: date) -> Person:
    return Person(str(employee.id), employee.employee_no, employee.name, pay_dict(employee.pay_on(today)))


def people_of_group(group: PayrollGroup, today: date) -> list[Person]:
    return [employee_person(e, today) for e in group.employees.prefetch_related("pay_history").order_by("employee_no")]


def people_of_params(tenant_id: int, params: dict[str, Any], today: date) -> list[Person]:
    """The people a setup run will assign (before its approval): the listed employees, with the
    export's pay where it gives one, and the export's new employees with theirs."""
    ids = [int(i) for i in params.get("employee_ids") or [] if str(i).isascii() and str(i).isdigit()]
    given = {str(e.get("employee_id")): pay_of_export(e.get("pay")) for e in params.get("employee_pay") or []}
    people = []
    for employee in Employee.objects.filter(tenant_id=tenant_id, id__in=ids).prefetch_related("pay_history"):
        person = employee_person(employee, today)
        person.pay = given.get(person.key) or person.pay
        people.append(person)
    known = set(Employee.objects.filter(tenant_id=tenant_id, employee_no__in=[
        str(r.get("employee_no") or "") for r in params.get("new_employees") or []]).values_list("employee_no", flat=True))
    for row in params.get("new_employees") or []:
        number = str(row.get("employee_no") or "").strip()
        if number and number not in known:
            people.append(Person(f"new:{number}", number, str(row.get("name") or ""), pay_of_export(row.get("pay"))))
    return sorted(people, key=lambda p: p.employee_no)


# --- the computation --------------------------------------------------------------------------

def person_input(person: Person) -> EmployeeInput:
    pay = person.pay or {}
    return EmployeeInput(employee_no=person.employee_no, base_salary=pay["base_salary"],
                         allowances=dict(pay.get("allowances") or {}),
                         special_additional_deductions=pay.get("special_additional_deductions") or Decimal("0"))


def items_json(month: EvaluatedMonth) -> list[dict[str, Any]]:
    """The evaluated items of a month, as every view shows them."""
    return [{"code": i.code, "name": i.name, "name_zh": i.name_zh, "kind": i.kind, "formula": i.formula,
             "base": None if i.base is None else str(i.base), "rate": None if i.rate is None else str(i.rate),
             "amount": str(i.amount), "detail": i.detail, "merged_into": i.merged_into} for i in month.items]


def _month_json(result: EvaluatedMonth) -> dict[str, Any]:
    c = result.contributions
    return {"month": result.month, "gross": str(result.gross), "employee_contributions": str(c.employee),
            "employer_contributions": str(c.employer), "employer_cost": str(result.employer_cost),
            "tax": str(result.tax), "net": str(result.net), "items": items_json(result),
            "missing_inputs": list(result.missing_inputs)}


def _lines_json(result: EvaluatedMonth, rules: CityRules) -> list[dict[str, Any]]:
    bounds = {rule.kind: rule.base for rule in rules.contributions}
    return [{"kind": line.kind, "base": str(line.base), "floor": str(bounds[line.kind].floor),
             "cap": str(bounds[line.kind].cap), "employee": str(line.employee), "employer": str(line.employer),
             "formula": line.formulas["base"]} for line in result.contributions.items]


def rules_json(rules: CityRules) -> dict[str, Any]:
    """The rule set a computation used: its period, whether it is current, its source."""
    return {"effective_from": rules.effective_from.isoformat(),
            "effective_to": rules.effective_to.isoformat() if rules.effective_to else None,
            "current": rules.current,
            "source": f"{rules.source.authority}: {rules.source.title} ({rules.source.year})"}


def trial_of(people: list[Person], region: str, *, year: int | None = None, city: str = "",
             structure: Structure | None = None) -> dict[str, Any]:
    """The trial of `people` computing `structure` (a group's or a template's items; by default
    the general monthly template's) under the rules of `city` (else the region's), as JSON: per
    employee and month the totals and the evaluated items, totals per month (gross, employer
    cost, tax, net), who has no salary, the monthly inputs the items read and which were not
    given (computed as zero). NoCityRules when the place has no rules (only when someone is to
    be computed)."""
    year = year or timezone.localdate().year
    missing = [p for p in people if p.pay is None]
    computable = [p for p in people if p.pay is not None]
    out: dict[str, Any] = {"year": year, "months": list(range(1, TRIAL_MONTHS + 1)), "employees": [],
                           "totals": [], "missing": [{"key": p.key, "employee_no": p.employee_no, "name": p.name}
                                                     for p in missing], "count": len(people)}
    if not people:
        return out
    rules = rules_for(region, year, city=city)
    if structure is None:
        general = general_template(rules.key)
        structure = template_structure(general) if general is not None else evaluator.structure([], [])
    result = evaluator.trial([person_input(p) for p in computable], rules, structure, months=TRIAL_MONTHS)
    place, place_zh = region_place(region)
    out.update({"city": rules.key, "city_name": {"en": rules.name if rules.key != NATIONWIDE else place,
                                                 "zh-hans": rules.name_zh if rules.key != NATIONWIDE else place_zh},
                "rules": rules_json(rules), "inputs": list(structure.inputs),
                "missing_inputs": list(result.missing_inputs)})
    if not computable:
        return out
    for person, computed in zip(computable, result.employees):
        out["employees"].append({"key": person.key, "employee_no": person.employee_no, "name": person.name,
                                 "months": [_month_json(m) for m in computed.months],
                                 "contributions": _lines_json(computed.months[0], rules)})
    out["totals"] = [{"month": t.month, "gross": str(t.gross), "employer_cost": str(t.employer_cost),
                      "tax": str(t.tax), "net": str(t.net)} for t in result.totals]
    return out


def payslip_of(employee: Employee, year: int, month: int) -> dict[str, Any]:
    """One employee's payslip for `month` of `year`: the group's own items evaluated for months
    1..month (the same pay each, as the trial does) under the rules in effect in that month
    (past the last period: the latest, flagged not current), every amount with its formula.
    NoCityRules as for the trial; the pay is None when the employee has none."""
    today = timezone.localdate()
    group = employee.group if employee.group_id else None
    region = group.template.region if group is not None and group.template_id else ""
    if not region and not (group is not None and group.city):
        raise NoCityRules(employee.location or "—", employee.location or "—")
    pay = pay_dict(employee.pay_on(today if year >= today.year else date(year, month, 1)) or employee.pay_on(today))
    rules = rules_for(region, year, month, city=group.city if group is not None else "")
    if pay is None:
        return {"pay": None, "rules": rules}
    months = evaluator.employee_evaluate(group_structure(group), person_input(
        Person(str(employee.id), employee.employee_no, employee.name, pay)), rules, month)
    return {"pay": pay, "rules": rules, "result": months[-1], "months": months}


# --- the step ---------------------------------------------------------------------------------

AMOUNT = r"(\d[\d,，]*(?:\.\d{1,2})?)\s*(?:元|yuan|cny|rmb)?"


def answer_read(answer: str, missing: list[dict[str, Any]]) -> dict[str, Decimal]:
    """The salaries an answer gives: "T-1003: 9000; T-1004 12000" (by number or name), or one
    amount for all of them ("9000", "每人 9000 元")."""
    text = answer or ""
    found: dict[str, Decimal] = {}
    for person in missing:
        for label in (person["employee_no"], person["name"]):
            if not label:
                continue
            hit = re.search(re.escape(label) + r"\s*[:：=，,]?\s*" + AMOUNT, text, re.IGNORECASE)
            if hit:
                found[person["key"]] = Decimal(hit.group(1).replace(",", "").replace("，", ""))
                break
    if found:
        return found
    amounts = re.findall(r"(?<![\w-])" + AMOUNT, text, re.IGNORECASE)
    if len(amounts) == 1:
        amount = Decimal(amounts[0].replace(",", "").replace("，", ""))
        return {p["key"]: amount for p in missing}
    return {}


def _names(missing: list[dict[str, Any]]) -> Stored:
    """The first eight, "周敏 (T-2001), …" / "周敏（T-2001）、…", and how many more, as words."""
    shown = [words(gettext_noop("%(name)s (%(number)s)"), name=m["name"], number=m["employee_no"])
             for m in missing[:8]]
    more = len(missing) - len(shown)
    if more > 0:
        return words(gettext_noop("%(names)s and %(more)s more"), names=shown, more=more)
    return shown


def salary_question(missing: list[dict[str, Any]], unread: str = "") -> Stored:
    """The missing salaries asked for, as words (each reader's language)."""
    asked = words(gettext_noop("These employees have no salary yet, so the trial cannot compute them: %(names)s. "
                               "Reply with the monthly base salary in CNY — one amount for all of them (e.g. “9000”), "
                               "or one each (e.g. “%(example)s: 9000”)."),
                  names=_names(missing), example=missing[0]["employee_no"])
    if not unread:
        return asked
    return sentences(words(gettext_noop("I couldn't read a salary in “%(said)s”."), said=unread[:60]), asked)


def trial_payroll(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """Compute the new group's trial; ask for missing salaries (an answer is recorded as the
    employees' pay, then computed); stop, blocked, when the group's place has no rules."""
    group = (PayrollGroup.objects.select_related("template")
             .filter(id=int(arguments["group_id"]), tenant_id=ctx.tenant_id).first())
    if group is None:
        raise ToolBlocked("The new group is missing; there is nothing to compute.")
    today = timezone.localdate()
    region = group.template.region if group.template_id else ""
    if not trial_applies(region):
        place, place_zh = region_place(region)
        return {"group_id": str(group.id), "group_name": group.name, "employees": [], "missing": [], "totals": [],
                "months": [], "city": None, "year": today.year, "receipt_ref": f"payroll/groups/{group.id}",
                "not_computed": f"no trial for {place} ({place_zh}): Keel computes social insurance, the housing fund "
                                "and income tax for mainland China only"}
    people = people_of_group(group, today)
    answer = (arguments.get("answer") or "").strip()
    missing = [{"key": p.key, "employee_no": p.employee_no, "name": p.name} for p in people if p.pay is None]
    if missing and answer:
        given = answer_read(answer, missing)
        if given:
            digest = hashlib.sha256(answer.encode()).hexdigest()[:16]
            employee_pay_record(actor=Actor.of_agent(ctx), idempotency_key=f"{ctx.idempotency_key}:answer:{digest}",
                                source=f"answer in run {ctx.run_id}",
                                employee_pay=[{"employee_id": key, "pay": {"base_salary": str(amount)}}
                                              for key, amount in given.items()])
            people = people_of_group(group, today)
            missing = [m for m in missing if m["key"] not in given]
        else:
            raise NeedsInput(salary_question(missing, unread=answer))
    if missing:
        raise NeedsInput(salary_question(missing))
    try:
        output = trial_of(people, region, year=today.year, city=group.city, structure=group_structure(group))
    except evaluator.FormulaError as err:
        raise ToolBlocked(f"The items of “{group.name}” cannot be computed: {err}") from None
    except NoCityRules as none:
        raise ToolBlocked(f"No social insurance and housing fund rules for {none.place} ({none.place_zh}), the "
                          f"city of template “{group.template.name}”: the trial cannot compute its employees."
                          + (f" {none.detail}" if none.detail else "")) from None
    return {**output, "group_id": str(group.id), "group_name": group.name, "receipt_ref": f"payroll/groups/{group.id}"}


def _joined(parts: list[Stored]) -> Stored:
    """Words one after the other, "; " between them."""
    joined = parts[0]
    for part in parts[1:]:
        joined = words(gettext_noop("%(first)s; %(rest)s"), first=joined, rest=part)
    return joined


def _trial_accept(ctx: ToolContext, arguments: dict[str, Any], output: dict[str, Any]) -> list[Acceptance]:
    """Every employee of the group computed (a salary each, a rule for the city, every contribution
    base within its floor and cap or saying why not); the totals add up per employee and month.
    What each check found is words, read in each reader's language on the run page."""
    if output.get("not_computed"):  # a country the trial does not model: said on the receipt, not computed
        group = (PayrollGroup.objects.select_related("template")
                 .filter(id=int(output["group_id"]), tenant_id=ctx.tenant_id).first())
        place, place_zh = region_place(group.template.region if group and group.template_id else "")
        return [Acceptance(COMPUTES, True, words(gettext_noop(
                    "no trial for %(place)s: Keel computes social insurance, the housing fund and income tax for "
                    "mainland China only"), place=localised(place, place_zh)) if place else output["not_computed"]),
                Acceptance("the totals are consistent", True, words(gettext_noop("nothing was computed to add up")))]
    in_group = Employee.objects.filter(tenant_id=ctx.tenant_id, group_id=int(output["group_id"])).count()
    if not in_group:  # set up, and said so: nothing is reported computed over nobody
        return [Acceptance(COMPUTES, True, words(gettext_noop(
            "no employees yet — add them: attach an employee list (CSV or XLSX) in the chat"))),
                Acceptance("the totals are consistent", True, words(gettext_noop("nothing was computed to add up")))]
    computed = output.get("employees") or []
    problems: list[Stored] = []
    if output.get("missing"):
        problems.append(words(gettext_noop("%(count)s without a salary"), count=len(output["missing"])))
    if computed and not output.get("city"):
        problems.append(words(gettext_noop("no rule for the city")))
    if len(computed) != in_group:
        problems.append(words(gettext_noop("%(done)s of %(total)s computed"), done=len(computed), total=in_group))
    for person in computed:
        for line in person.get("contributions") or []:
            base, floor, cap = (Decimal(line[k]) for k in ("base", "floor", "cap"))
            said = "within" in line["formula"] or "floor" in line["formula"] or "cap" in line["formula"]
            if not (floor <= base <= cap) or not said:
                problems.append(words(gettext_noop("%(employee)s: the %(kind)s base %(base)s is outside "
                                                   "%(floor)s–%(cap)s with no reason"),
                                      employee=person["employee_no"], kind=line["kind"], base=str(base),
                                      floor=str(floor), cap=str(cap)))
    wrong: list[Stored] = []
    sums = {m: {k: Decimal("0") for k in ("gross", "employer_cost", "tax", "net")} for m in output.get("months") or []}
    for person in computed:
        for month in person["months"]:
            gross, tax, net, ours = (Decimal(month[k]) for k in ("gross", "tax", "net", "employee_contributions"))
            if net + tax + ours != gross:
                wrong.append(words(gettext_noop("%(employee)s month %(month)s"), employee=person["employee_no"],
                                   month=month["month"]))
            for k in sums.get(month["month"], {}):
                sums[month["month"]][k] += Decimal(month[k])
    for total in output.get("totals") or []:
        if any(Decimal(total[k]) != sums.get(total["month"], {}).get(k) for k in ("gross", "employer_cost", "tax", "net")):
            wrong.append(words(gettext_noop("the totals of month %(month)s"), month=total["month"]))
    return [Acceptance(COMPUTES, not problems, _joined(problems[:10]) if problems else
                       words(ngettext_noop("%(done)s of %(total)s employee", "%(done)s of %(total)s employees", "total"), done=len(computed), total=in_group)),
            Acceptance("the totals are consistent", not wrong,
                       words(gettext_noop("net + tax + employee contributions ≠ gross: %(where)s"), where=wrong[:10])
                       if wrong else
                       words(gettext_noop("net + tax + employee contributions = gross for every employee and month")))]


def _trial_summary(output: dict[str, Any]) -> Stored:
    if not output.get("employees"):
        return words(gettext_noop("No employees in the new group yet: the trial had nobody to compute."))
    first = output["totals"][0]
    return words(ngettext_noop("Trial payroll for %(count)s employee, months 1–%(months)s of %(year)s: month 1 gross "
                               "%(gross)s, employer cost %(cost)s, tax %(tax)s, net %(net)s CNY.",
                               "Trial payroll for %(count)s employees, months 1–%(months)s of %(year)s: month 1 gross "
                               "%(gross)s, employer cost %(cost)s, tax %(tax)s, net %(net)s CNY.", "count"),
                 count=len(output["employees"]), months=len(output["totals"]), year=output["year"],
                 gross=first["gross"], cost=first["employer_cost"], tax=first["tax"], net=first["net"])


tool_register(Tool(
    name="trial_payroll",
    description="Compute a trial payroll (months 1–3 of the current year) for every employee of the new group, "
                "under its city's social insurance and housing fund rules; asks for a missing salary.",
    input_schema={"type": "object", "properties": {"group_id": ID, "answer": {"type": "string"}},
                  "required": ["group_id"]},
    output_schema={"type": "object", "properties": {"employees": {"type": "array"}, "totals": {"type": "array"},
                                                    "year": {"type": "integer"}, "group_id": ID},
                   "required": ["employees", "totals", "year", "group_id"]},
    fn=trial_payroll, consumes=["group_id"],
    # It reads and computes; the only write is a salary a person answered (their statement,
    # once per answer), which no undo takes back.
    side_effects=True, read_only=True, accept=_trial_accept, summary=_trial_summary,
    milestones={"awaiting_input": "the trial is waiting for the missing salaries",
                "completed": "a trial payroll computed for every employee of the new group",
                "blocked": "the trial cannot compute: no rules for the group's city"},
))
