"""An employee's pay is recorded on the employee page (approvers and
tenant admins only, every bad figure named on its field, nothing written), and the city rules
are data in the database that only Keel's staff change on the rules page, which the trial, the
payslip and the rules API then read."""
from __future__ import annotations

import json
import re
from datetime import date
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from payroll.records import rules
from payroll.models import CityRulePeriod, Employee, EmployeePay, PayrollGroup
from tests.payroll import api, page, template, tenant
from payroll.records.trial import people_of_group, trial_of
from tenants.models import Membership, Role

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]

TRIAL = "/api/v1/payroll/trial/"


def shanghai_employee() -> Employee:
    return Employee.objects.filter(tenant=tenant("demo"), location="Shanghai").order_by("employee_no").first()


def employee_url(employee: Employee) -> str:
    return f"/payroll/employees/{employee.id}/"


def pay_post(**changes) -> dict:
    first = timezone.localdate().replace(day=1).isoformat()
    return {"key": "k-1", "effective_from": first, "base_salary": "31,000", "allowance_name_1": "Meal",
            "allowance_amount_1": "600", "deduction_children_education": "2000",
            "deduction_elderly_support": "1000", **changes}


def staff_user(username: str = "stella", *, member_of: str | None = "demo"):
    """Keel's staff: no demo user is one (seed_demo), so the tests make one."""
    user = get_user_model().objects.create_user(username, password="keel-demo", is_staff=True)
    if member_of:
        Membership.objects.create(user=user, tenant=tenant(member_of), role=Role.BUSINESS)
    return user


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def shanghai_row() -> CityRulePeriod:
    return CityRulePeriod.objects.get(city="shanghai", effective_from=date(2025, 7, 1))


def rules_post(row: CityRulePeriod, **changes) -> dict:
    """The Shanghai period's form as rendered, with `changes` (field names without the prefix)."""
    period = next(p for p in rules.rules_all()["shanghai"].periods if p.effective_from == row.effective_from)
    from payroll.forms import CityRulePeriodForm
    initial = {**CityRulePeriodForm.initial_from(period, row), **changes}
    prefix = f"p{row.effective_from:%Y%m%d}"
    return {f"{prefix}-{k}": ("on" if v is True else "" if v in (None, False) else str(v)) for k, v in initial.items()}


def trial_pension_employer(client) -> str:
    body = {"city": "shanghai", "months": 1, "employees": [{"employee_no": "E1", "base_salary": "30000"}]}
    response = client.post(TRIAL, json.dumps(body), content_type="application/json")
    assert response.status_code == 200, response.content
    items = {i["kind"]: i for i in response.json()["employees"][0]["months"][0]["contributions"]["items"]}
    return items["pension"]["employer_rate"]


# --- the pay form ----------------------------------------------------------------------------

def test_it_shows_no_pay_form_to_a_business_user_and_refuses_her_post():
    employee = shanghai_employee()
    alice = page("alice")
    response = alice.get(employee_url(employee))
    assert response.status_code == 200
    assert b'data-testid="pay-form"' not in response.content
    assert b'data-testid="pay-history' in response.content
    response = alice.post(employee_url(employee), pay_post())
    assert response.status_code == 403
    assert b"Not allowed" in response.content
    assert not EmployeePay.objects.filter(employee=employee).exists()


def test_it_refuses_a_developers_post_too():
    employee = shanghai_employee()
    assert b'data-testid="pay-form"' not in page("dora").get(employee_url(employee)).content
    assert page("dora").post(employee_url(employee), pay_post()).status_code == 403
    assert not EmployeePay.objects.filter(employee=employee).exists()


def test_bob_records_a_pay_and_the_trial_of_the_group_uses_it():
    employee = shanghai_employee()
    group = PayrollGroup.objects.create(tenant=tenant("demo"), name="Pay Form Group",
                                        template=template("cn-sh-monthly-salaried"), template_version=1)
    Employee.objects.filter(id=employee.id).update(group=group)
    bob = page("bob")
    form_page = bob.get(employee_url(employee))
    assert b'data-testid="pay-form"' in form_page.content
    response = bob.post(employee_url(employee), pay_post())
    assert response.status_code == 302, response.content.decode()[:2000]
    [row] = EmployeePay.objects.filter(employee=employee)
    assert row.base_salary == Decimal("31000") and row.allowances == {"Meal": "600.00"}
    assert row.special_additional_deductions == Decimal("3000")
    assert row.deductions_breakdown == {"children_education": "2000.00", "elderly_support": "1000.00"}
    assert row.source == "bob, employee page"
    # The same form submitted again (a double click) is the same write, replayed.
    assert bob.post(employee_url(employee), pay_post()).status_code == 302
    assert EmployeePay.objects.filter(employee=employee).count() == 1

    shown = bob.get(employee_url(employee)).content.decode()
    history = shown[shown.index('data-testid="pay-history"'):]
    assert "31000.00" in history and "Meal" in history and "Children&#x27;s education 2000.00" in history
    out = trial_of(people_of_group(group, timezone.localdate()), group.template.region)
    [person] = out["employees"]
    assert person["key"] == str(employee.id)
    assert person["months"][0]["gross"] == "31600.00"


def test_an_admin_may_record_a_pay():
    employee = shanghai_employee()
    assert page("ada").post(employee_url(employee), pay_post(key="k-ada")).status_code == 302
    assert EmployeePay.objects.filter(employee=employee).count() == 1


@pytest.mark.parametrize("field, value, message", [
    ("base_salary", "-1", "greater than or equal to 0"),
    ("base_salary", "lots", "Enter a number"),
    ("base_salary", "10000000.01", "less than or equal to 10000000"),
    ("base_salary", "", "This field is required"),
    ("allowance_amount_1", "1e9", "less than or equal to 10000000"),
    ("deduction_housing_rent", "-5", "greater than or equal to 0"),
    ("effective_from", "2026-02-30", "Enter a valid date"),
    ("effective_from", "1999-12-01", "2000-01-01"),
    ("allowance_amount_1", "", "Enter the allowance"),
])
def test_bad_input_names_the_field_and_writes_nothing(field, value, message):
    employee = shanghai_employee()
    before = employee.base_salary
    response = page("bob").post(employee_url(employee), pay_post(**{field: value}))
    assert response.status_code == 400
    text = response.content.decode()
    error = re.search(rf'data-testid="error-{field}">([^<]*)<', text)
    assert error and message in error.group(1), text[text.find("text-error"):][:400]
    assert not EmployeePay.objects.filter(employee=employee).exists()
    employee.refresh_from_db()
    assert employee.base_salary == before


def test_the_pay_form_reads_in_chinese():
    employee = shanghai_employee()
    bob = page("bob")
    text = bob.get(employee_url(employee), HTTP_ACCEPT_LANGUAGE="zh-Hans").content.decode()
    assert "记录新的薪资" in text and "子女教育" in text
    response = bob.post(employee_url(employee), pay_post(base_salary="-1"), HTTP_ACCEPT_LANGUAGE="zh-Hans")
    assert response.status_code == 400
    assert "生效日期" in response.content.decode()


# --- the city rules in the database ------------------------------------------------------------

def test_the_rules_are_in_the_database_after_migrate_with_the_files_figures():
    assert CityRulePeriod.objects.count() == sum(len(c.periods) for c in rules.rules_file().values())
    assert rules.rules_all() == rules.rules_file()
    shanghai = rules.city_rules("上海市", date(2026, 1, 1))
    assert shanghai.key == "shanghai" and shanghai.contributions[0].employer_rate == Decimal("0.16")


def test_it_reads_the_file_while_the_table_is_empty():
    CityRulePeriod.objects.all().delete()
    assert rules.rules_all() is rules.rules_file()
    assert rules.city_rules("shanghai", date(2026, 1, 1)).key == "shanghai"


def test_a_bad_figure_in_the_table_fails_loudly():
    row = shanghai_row()
    row.rules["social_base"] = {"floor": "40000", "cap": "37302"}
    row.updated_at = timezone.now()
    row.save()
    with pytest.raises(rules.RulesFileError, match="floor 40000 is above cap 37302"):
        rules.city_rules("shanghai", date(2026, 1, 1))


def test_staff_change_shanghais_pension_employer_rate_and_the_trial_api_answers_with_it():
    assert trial_pension_employer(api("alice")) == "0.160000"
    stella = staff_user()
    client = logged_in(stella)
    page_text = client.get("/payroll/rules/?city=shanghai").content.decode()
    assert 'data-testid="rules-period-form"' in page_text
    row = shanghai_row()
    response = client.post(f"/payroll/rules/periods/{row.id}/",
                           rules_post(row, pension__employer_rate="15", note="2026 notice: pension 15 %"))
    assert response.status_code == 302, response.content.decode()[:3000]
    row.refresh_from_db()
    pension = next(c for c in row.rules["contributions"] if c["kind"] == "pension")
    assert pension["employer_rate"] == "15" and pension["employee_rate"] == "8"
    assert row.updated_by == stella and row.note == "2026 notice: pension 15 %"
    assert trial_pension_employer(api("alice")) == "0.150000"
    answer = api("alice").get("/api/v1/payroll/rules/?city=shanghai").json()
    assert next(c for c in answer["contributions"] if c["kind"] == "pension")["employer_rate"] == "0.150000"
    shown = client.get("/payroll/rules/?city=shanghai").content.decode()
    assert "last changed by stella" in shown and "15%" in shown


def test_a_staff_user_without_a_tenant_may_change_them():
    stella = staff_user("sam", member_of=None)
    client = logged_in(stella)
    assert client.get("/payroll/rules/?city=shanghai").status_code == 200
    row = shanghai_row()
    assert client.post(f"/payroll/rules/periods/{row.id}/", rules_post(row, verified=True)).status_code == 302
    row.refresh_from_db()
    assert row.verified is True


@pytest.mark.parametrize("username", ["ada", "bob", "alice"])
def test_a_tenant_admin_or_anyone_not_staff_cannot_change_them(username):
    row = shanghai_row()
    before = (row.rules, row.updated_at)
    client = page(username)
    assert b'data-testid="rules-period-form"' not in client.get("/payroll/rules/?city=shanghai").content
    response = client.post(f"/payroll/rules/periods/{row.id}/", rules_post(row, pension__employer_rate="1"))
    assert response.status_code == 403
    row.refresh_from_db()
    assert (row.rules, row.updated_at) == before


@pytest.mark.parametrize("changes, field, message", [
    ({"pension__employer_rate": "31"}, "pension__employer_rate", "less than or equal to 30"),
    ({"pension__employer_rate": "-1"}, "pension__employer_rate", "greater than or equal to 0"),
    ({"pension__employer_rate": "abc"}, "pension__employer_rate", "Enter a number"),
    ({"social_base__floor": "40000"}, "social_base__cap", "below the floor"),
    ({"housing_fund__employer_rate": "12"}, "housing_fund__employer_rate", "Allowed: 5 % to 7 %"),
    ({"injury__employer_rate": "3"}, "injury__employer_rate", "Allowed: 0.16 % to 1.52 %"),
    ({"source_year": "1900"}, "source_year", "greater than or equal to 1990"),
    ({"source_title": ""}, "source_title", "required"),
])
def test_invalid_figures_are_refused_on_their_field(changes, field, message):
    client = logged_in(staff_user())
    row = shanghai_row()
    before = (row.rules, row.updated_at)
    response = client.post(f"/payroll/rules/periods/{row.id}/", rules_post(row, **changes))
    assert response.status_code == 400
    text = response.content.decode()
    error = re.search(rf'data-testid="error-{field}">([^<]*)<', text)
    assert error and message in error.group(1), text[text.find("text-error"):][:400]
    row.refresh_from_db()
    assert (row.rules, row.updated_at) == before


def test_the_service_refuses_what_the_rules_refuse_and_a_stale_form():
    from config.api import Conflict, Unprocessable
    from payroll.records.services import city_rule_period_change

    stella = staff_user()
    row = shanghai_row()
    source = {"authority": "x", "title": "y", "year": 2025}
    with pytest.raises(Unprocessable, match="employees pay no work injury insurance"):
        city_rule_period_change(user=stella, period_id=row.id, version=row.updated_at.isoformat(),
                                rates={"injury": {"employee_rate": Decimal("0.1")}}, bases={}, source=source,
                                verified=False, note="")
    city_rule_period_change(user=stella, period_id=row.id, version=row.updated_at.isoformat(),
                            rates={"pension": {"employer_rate": Decimal("15")}}, bases={}, source=source,
                            verified=False, note="")
    with pytest.raises(Conflict):  # the same version, someone else's figures saved meanwhile
        city_rule_period_change(user=stella, period_id=row.id, version=row.updated_at.isoformat(),
                                rates={"pension": {"employer_rate": Decimal("14")}}, bases={}, source=source,
                                verified=False, note="")
    assert rules.city_rules("shanghai", date(2026, 1, 1)).contributions[0].employer_rate == Decimal("0.15")
