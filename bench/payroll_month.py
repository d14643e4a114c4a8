"""The payroll month at size: a Shanghai group of 10,000 employees with a month of inputs.
Measures, in the same run, the arithmetic alone (`compute_only_s`: the one evaluator over every
payslip in this process, everything read beforehand, no database) and the whole close
(`close_s`: month_compute, which reads and writes the payslips, then month_close, which makes
them final and writes the bank file pair and the tax declaration). The goal: close_s within
2 × compute_only_s and within 60 s on a 2-core machine.

Uses DATABASE_URL when set (PostgreSQL; the bench adds its own group to the demo tenant), else
a throw-away embedded PostgreSQL.
    .venv/bin/python bench/payroll_month.py [--employees 10000] [--smoke]
Ends with one JSON line: {"employees", "compute_only_s", "close_s", "ratio", "verified"}.
"""
import argparse
import json
import os
import random
import sys
import tempfile
import time
import uuid
from datetime import date
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
if not os.environ.get("DATABASE_URL"):  # an embedded PostgreSQL of its own, deleted with its folder
    os.environ["KEEL_PGDATA"] = str(Path(tempfile.mkdtemp(prefix="keel-bench-")) / "pgdata")

TEMPLATE, YEAR, MONTH = "cn-sh-sales-attendance", 2026, 11


def group_with_inputs(n: int):
    """A group made from the sales-with-attendance template, n employees with pay, ID and bank
    details, and one imported version of the month's inputs (a deterministic spread)."""
    from payroll.models import (
        Employee, EmployeePay, GroupItem, MonthlyInputRow, MonthlyInputs, PayrollGroup, PayrollTemplate,
    )
    from tenants.models import Tenant

    tenant = Tenant.objects.get(slug="demo")
    source = PayrollTemplate.objects.get(code=TEMPLATE, version=1)
    tag = uuid.uuid4().hex[:6]
    group = PayrollGroup.objects.create(tenant=tenant, name=f"Bench {tag}", template=source, template_version=1,
                                        variables=source.variables, city="shanghai")
    GroupItem.objects.bulk_create([GroupItem(group=group, position=i.position, code=i.code, name=i.name, kind=i.kind,
                                             rate=i.rate, rate_name=i.rate_name, base=i.base, formula=i.formula)
                                   for i in source.items.order_by("position")])
    rng = random.Random(7)
    employees = Employee.objects.bulk_create([Employee(
        tenant=tenant, employee_no=f"B{tag}-{k:05d}", name=f"Bench {k}", location="Shanghai", currency="CNY",
        base_salary=Decimal(rng.randrange(6000, 60000)), group=group, id_type="resident_id",
        id_number=f"3101011990{k:08d}", bank_account=f"6222{k:012d}", bank_name="ICBC") for k in range(n)],
        batch_size=2000)
    EmployeePay.objects.bulk_create([EmployeePay(employee=e, effective_from=date(YEAR, 1, 1),
                                                 base_salary=e.base_salary, source="bench") for e in employees],
                                    batch_size=2000)
    inputs = MonthlyInputs.objects.create(tenant=tenant, group=group, year=YEAR, month=MONTH, version=1,
                                          sha256="0" * 64, filename="bench.csv")
    MonthlyInputRow.objects.bulk_create([MonthlyInputRow(inputs=inputs, employee=e, values={
        "sales_amount": str(rng.randrange(0, 200000)), "overtime_workday_hours": str(rng.randrange(0, 20)),
        "overtime_restday_hours": str(rng.randrange(0, 16)), "overtime_holiday_hours": str(rng.randrange(0, 8)),
        "personal_leave_days": str(rng.randrange(0, 3)), "sick_leave_days": str(rng.randrange(0, 2))})
        for e in employees], batch_size=2000)
    return group


def arithmetic_alone(month) -> float:
    """The evaluator over every payslip, everything read first: the floor a close is judged against."""
    from payroll.models import Employee
    from payroll.records import evaluator
    from payroll.records.calculation import EmployeeInput
    from payroll.records.month_inputs import attendance_terms_on, inputs_latest
    from payroll.records.trial import group_structure, pay_dict, rules_for

    group, first_day = month.group, date(month.year, month.month, 1)
    structure = group_structure(group)
    rules = rules_for(group.template.region, month.year, month.month, city=group.city)
    terms = attendance_terms_on(month.tenant_id, first_day)
    rows = inputs_latest(group.id, month.year, month.month).rows
    people = []
    for e in Employee.objects.filter(group=group).prefetch_related("pay_history"):
        pay = pay_dict(e.pay_on(first_day))
        people.append((EmployeeInput(e.employee_no, pay["base_salary"], pay["allowances"],
                                     pay["special_additional_deductions"]), rows.get(e.id, {})))
    started = time.perf_counter()
    for person, given in people:
        evaluator.month_evaluate(structure, person, rules, month.month, given, evaluator._Year(), terms)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--employees", type=int, default=10_000)
    parser.add_argument("--smoke", action="store_true", help="50 employees: that it runs, not what it measures")
    args = parser.parse_args()
    n = 50 if args.smoke else args.employees

    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    call_command("seed_demo", verbosity=0)
    from payroll.models import PayrollMonth
    from payroll.records.months import month_close, month_compute, month_verify

    t0 = time.perf_counter()
    group = group_with_inputs(n)
    print(f"made {n} employees with inputs in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    month = PayrollMonth.objects.create(tenant_id=group.tenant_id, group=group, year=YEAR, month=MONTH)
    month = PayrollMonth.objects.select_related("group", "group__template").get(id=month.id)
    compute_only = arithmetic_alone(month)
    started = time.perf_counter()
    month_compute(month_id=month.id)
    computed = time.perf_counter() - started
    month_close(month_id=month.id)
    close = time.perf_counter() - started
    verified = month_verify(month_id=month.id)["ok"]
    print(f"arithmetic alone {compute_only:.2f} s; compute with writes {computed:.2f} s; close {close:.2f} s",
          file=sys.stderr)
    print(json.dumps({"employees": n, "compute_only_s": round(compute_only, 3), "compute_s": round(computed, 3),
                      "close_s": round(close, 3), "ratio": round(close / compute_only, 2) if compute_only else None,
                      "verified": verified}))


if __name__ == "__main__":
    main()
