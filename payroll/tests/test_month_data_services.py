"""The attendance rules (a tenant admin's, a row per change), the year-to-date openings (once per
employee and year) and the employees' ID and bank details (an admin's import, masked for others)."""
from datetime import date
from decimal import Decimal

import pytest

from config.api import Conflict, Forbidden, Unprocessable
from payroll.models import AttendanceRules, Employee, YearOpening
from payroll.records.month_inputs import attendance_terms_on
from payroll.records.services import attendance_rules_set, employee_identities_import, year_openings_import
from tests.month_inputs import csv_of, resident_id, xlsx_of
from tests.payroll import actor_for, tenant

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def test_an_admin_changes_one_rate_from_a_date_and_the_rest_carry_over():
    row, created = attendance_rules_set(actor=actor_for("ada"), effective_from=date(2026, 12, 1),
                                        terms={"overtime_restday_rate": "2.5"}, note="new contract")
    assert created and row.overtime_restday_rate == Decimal("2.5") and row.overtime_workday_rate == Decimal("1.5")
    assert attendance_terms_on(tenant("demo").id, date(2026, 11, 30)).overtime_restday_rate == Decimal("2.0")
    again, created = attendance_rules_set(actor=actor_for("ada"), effective_from=date(2027, 1, 1),
                                          terms={"sick_leave_pay_rate": "0.9"})
    assert created and again.overtime_restday_rate == Decimal("2.5")  # from the terms in force then
    assert AttendanceRules.objects.filter(tenant=tenant("demo")).count() == 2  # history kept


@pytest.mark.parametrize("username", ["alice", "bob", "dora"])
def test_only_a_tenant_admin_changes_the_attendance_rules(username):
    with pytest.raises(Forbidden) as refused:
        attendance_rules_set(actor=actor_for(username), effective_from=date(2026, 12, 1),
                             terms={"overtime_workday_rate": "2"})
    assert refused.value.code == "admin_required" and not AttendanceRules.objects.exists()


def test_overtime_below_the_statute_is_refused_naming_the_field():
    with pytest.raises(Unprocessable) as refused:
        attendance_rules_set(actor=actor_for("ada"), effective_from=date(2026, 12, 1),
                             terms={"overtime_holiday_rate": "2.5"})
    assert refused.value.extra == {"field": "overtime_holiday_rate"} and not AttendanceRules.objects.exists()


def test_a_saved_date_is_never_rewritten_and_a_repeat_is_the_same_row():
    first, _ = attendance_rules_set(actor=actor_for("ada"), effective_from=date(2026, 12, 1),
                                    terms={"overtime_workday_rate": "1.6"})
    same, created = attendance_rules_set(actor=actor_for("ada"), effective_from=date(2026, 12, 1),
                                         terms={"overtime_workday_rate": "1.6"})
    assert same.id == first.id and not created
    with pytest.raises(Conflict):
        attendance_rules_set(actor=actor_for("ada"), effective_from=date(2026, 12, 1),
                             terms={"overtime_workday_rate": "1.7"})
    assert AttendanceRules.objects.get().overtime_workday_rate == Decimal("1.6")


OPENING_ZH = ["工号", "累计收入额", "累计专项扣除", "累计专项附加扣除", "已任职月数", "累计已预缴税额"]


def _demo_employees(n=2):
    return list(Employee.objects.filter(tenant=tenant("demo")).order_by("employee_no")[:n])


def test_year_openings_are_imported_once_and_replaced_only_by_an_admin():
    a, b = _demo_employees()
    raw = csv_of([OPENING_ZH, [a.employee_no, "180000.00", "19800", "12000", 6, "7080.00"],
                  [b.employee_no, "60000", "6600", "0", 6, "0"]])
    receipt = year_openings_import(actor=actor_for("bob"), year=2026, file=raw, filename="ytd.csv",
                                   idempotency_key="y1")
    assert receipt.body["imported"] == 2
    opening = YearOpening.objects.get(employee=a, year=2026)
    assert (opening.months_employed, opening.cumulative_income, opening.cumulative_contributions,
            opening.cumulative_special_additional_deductions, opening.cumulative_tax_withheld) == (
        6, Decimal("180000.00"), Decimal("19800"), Decimal("12000"), Decimal("7080.00"))
    again = csv_of([OPENING_ZH, [a.employee_no, "190000", "19800", "12000", 6, "7080"]])
    with pytest.raises(Unprocessable) as refused:
        year_openings_import(actor=actor_for("bob"), year=2026, file=again, filename="ytd.csv", idempotency_key="y2")
    assert [(r["row"], r["column"], r["code"]) for r in refused.value.extra["refusals"]] == [(2, "工号", "opening_exists")]
    with pytest.raises(Forbidden):
        year_openings_import(actor=actor_for("bob"), year=2026, file=again, filename="ytd.csv", idempotency_key="y3",
                             replace=True)
    year_openings_import(actor=actor_for("ada"), year=2026, file=again, filename="ytd.csv", idempotency_key="y4",
                         replace=True)
    assert YearOpening.objects.get(employee=a, year=2026).cumulative_income == Decimal("190000")
    assert YearOpening.objects.filter(year=2026).count() == 2


def test_a_business_user_cannot_import_openings_and_bad_months_are_refused_with_the_column():
    a, = _demo_employees(1)
    raw = xlsx_of([["Employee No", "Cumulative income", "Months employed"], [a.employee_no, 1000, 13]])
    with pytest.raises(Forbidden):
        year_openings_import(actor=actor_for("alice"), year=2026, file=raw, filename="ytd.xlsx", idempotency_key="k")
    with pytest.raises(Unprocessable) as refused:
        year_openings_import(actor=actor_for("ada"), year=2026, file=raw, filename="ytd.xlsx", idempotency_key="k")
    assert [(r["row"], r["column"], r["code"]) for r in refused.value.extra["refusals"]] == [
        (2, "Months employed", "months_out_of_range")]
    assert not YearOpening.objects.exists()


def test_an_admin_imports_id_and_bank_details_from_the_hr_export():
    a, b = _demo_employees()
    number = resident_id("31010119900101123")
    raw = csv_of([["工号", "姓名", "证件类型", "证件号码", "银行账号", "开户银行"],
                  [a.employee_no, a.name, "居民身份证", number, "6222 0210 0123 4567", "中国工商银行上海分行"],
                  [b.employee_no, b.name, "护照", "E12345678", "6217000010001234567", "中国建设银行"]])
    receipt = employee_identities_import(actor=actor_for("ada"), file=raw, filename="hr.csv", idempotency_key="i")
    assert receipt.body["updated"] == 2 and number not in str(receipt.body)
    a.refresh_from_db()
    assert (a.id_type, a.id_number, a.bank_account, a.bank_name) == (
        "resident_id", number, "6222021001234567", "中国工商银行上海分行")
    assert Employee.objects.get(id=b.id).id_type == "passport"


def test_id_and_bank_refusals_name_the_row_and_column_but_never_the_number():
    a, b = _demo_employees()
    raw = csv_of([["Employee No", "ID type", "ID number", "Bank account", "Bank name"],
                  [a.employee_no, "Resident identity card", "310101199001011230", "6222021001234567", "ICBC"],
                  [b.employee_no, "passport", "E1234567", "12ab", "CCB"]])
    with pytest.raises(Forbidden):
        employee_identities_import(actor=actor_for("bob"), file=raw, filename="hr.csv", idempotency_key="i")
    with pytest.raises(Unprocessable) as refused:
        employee_identities_import(actor=actor_for("ada"), file=raw, filename="hr.csv", idempotency_key="i")
    refusals = refused.value.extra["refusals"]
    assert [(r["row"], r["column"], r["code"]) for r in refusals] == [
        (2, "ID number", "invalid_id_number"), (3, "Bank account", "invalid_bank_account")]
    assert "310101199001011230" not in str(refusals)
    assert not Employee.objects.exclude(id_number="").exists()
