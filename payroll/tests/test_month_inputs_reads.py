"""The month's data as the payroll month reads it: attendance terms in force, a group's latest
inputs, the year's openings, and the masking of ID and bank numbers."""
from dataclasses import fields
from datetime import date
from decimal import Decimal

import pytest

from payroll.models import AttendanceRules, Employee, MonthlyInputRow, MonthlyInputs, PayrollGroup, YearOpening
from payroll.records.masking import masked, sensitive_visible
from payroll.records.month_inputs import TERM_NAMES, attendance_terms_on, inputs_latest, year_openings
from tenants.models import Membership
from tests.payroll import tenant

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def user(username):
    return Membership.objects.get(user__username=username).user


def test_it_answers_the_statutory_defaults_when_the_tenant_saved_none():
    terms = attendance_terms_on(tenant("demo").id, date(2026, 11, 30))
    assert terms.source == "default" and terms.effective_from is None
    assert (terms.paid_days_per_month, terms.hours_per_day, terms.overtime_workday_rate,
            terms.overtime_restday_rate, terms.overtime_holiday_rate) == (
        Decimal("21.75"), Decimal("8"), Decimal("1.5"), Decimal("2.0"), Decimal("3.0"))
    assert terms.hourly_wage(Decimal("17400")) == Decimal("100")
    assert {f.name for f in fields(terms)} == set(TERM_NAMES) | {"effective_from", "source"}


def test_it_reads_the_terms_in_force_on_the_day_and_not_a_later_change():
    t = tenant("demo")
    first = AttendanceRules.objects.create(tenant=t, effective_from=date(2026, 1, 1),
                                           overtime_workday_rate=Decimal("1.6"))
    AttendanceRules.objects.create(tenant=t, effective_from=date(2026, 12, 1), overtime_workday_rate=Decimal("1.8"))
    november = attendance_terms_on(t.id, date(2026, 11, 30))
    assert november.overtime_workday_rate == Decimal("1.6") and november.source == str(first.id)
    assert november.effective_from == date(2026, 1, 1)
    assert attendance_terms_on(t.id, date(2026, 12, 1)).overtime_workday_rate == Decimal("1.8")
    assert attendance_terms_on(t.id, date(2025, 12, 31)).source == "default"
    # Another tenant's change is not this one's.
    assert attendance_terms_on(tenant("other").id, date(2026, 11, 30)).source == "default"


def _import(group, version, figures):
    inputs = MonthlyInputs.objects.create(tenant=group.tenant, group=group, year=2026, month=11, version=version,
                                          sha256="0" * 64, columns=[{"header": "工号", "read_as": "employee_no"},
                                                                    {"header": "备注", "read_as": "unknown"}])
    for employee, values in figures.items():
        MonthlyInputRow.objects.create(inputs=inputs, employee=employee, values=values, extra={"备注": "x"})
    return inputs


def test_it_reads_the_latest_version_of_a_groups_month_as_decimals():
    t = tenant("demo")
    group = PayrollGroup.objects.create(tenant=t, name="Shanghai Sales")
    a, b = Employee.objects.filter(tenant=t)[:2]
    assert inputs_latest(group.id, 2026, 11) is None
    _import(group, 1, {a: {"overtime_workday_hours": "4"}})
    second = _import(group, 2, {a: {"overtime_workday_hours": "6.5"}, b: {"sales_amount": "12000.00"}})
    latest = inputs_latest(group.id, 2026, 11)
    assert (latest.id, latest.version) == (second.id, 2)
    assert latest.rows == {a.id: {"overtime_workday_hours": Decimal("6.5")}, b.id: {"sales_amount": Decimal("12000.00")}}
    assert latest.unknown_columns == ("备注",)
    assert inputs_latest(group.id, 2026, 12) is None
    assert MonthlyInputs.objects.filter(group=group).count() == 2  # the first version is kept


def test_it_reads_a_years_openings_of_the_tenant_only():
    t, other = tenant("demo"), tenant("other")
    mine = Employee.objects.filter(tenant=t).first()
    theirs = Employee.objects.filter(tenant=other).first()
    YearOpening.objects.create(tenant=t, employee=mine, year=2026, months_employed=6,
                               cumulative_income=Decimal("120000"), cumulative_tax_withheld=Decimal("3480"))
    YearOpening.objects.create(tenant=other, employee=theirs, year=2026, months_employed=3)
    found = year_openings(t.id, 2026)
    assert list(found) == [mine.id] and found[mine.id].cumulative_income == Decimal("120000")
    assert year_openings(t.id, 2025) == {}


def test_it_masks_all_but_the_last_four_characters():
    assert masked("6222021001234567890") == "•••• 7890"
    assert masked("310101199001011234") == "•••• 1234"
    assert masked("1234") == "••••" and masked("") == ""


def test_only_admins_see_the_numbers_and_an_approver_only_when_deciding():
    demo = tenant("demo").id
    assert sensitive_visible(user("ada"), demo)
    assert not sensitive_visible(user("alice"), demo) and not sensitive_visible(user("bob"), demo)
    assert not sensitive_visible(user("dora"), demo)
    assert sensitive_visible(user("bob"), demo, deciding=True)
    assert not sensitive_visible(user("alice"), demo, deciding=True)
    # oscar belongs to another tenant: nothing of demo's, even deciding.
    assert not sensitive_visible(user("oscar"), demo, deciding=True)
