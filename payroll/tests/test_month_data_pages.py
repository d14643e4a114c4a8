"""The month's data on pages: the attendance rules (statute, hourly wage rule, history, an admin's
form), the group page's inputs section (upload, refusals with row and column, versions), the
year-to-date page, and ID and account numbers masked on the employee page for all but admins."""
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from payroll.models import AttendanceRules, Employee, MonthlyInputs
from tests.month_inputs import csv_of, resident_id, sales_group
from tests.payroll import page

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def test_the_rules_page_shows_the_statute_the_hourly_wage_rule_and_an_admin_form():
    shown = page("alice").get("/payroll/attendance/")
    text = shown.content.decode()
    assert shown.status_code == 200 and "art. 44" in text and "÷ 21.75 ÷ 8" in text and "57.47" in text
    assert 'data-testid="attendance-form"' not in text
    assert page("alice").post("/payroll/attendance/", {"effective_from": "2026-12-01"}).status_code == 403
    form = page("ada").get("/payroll/attendance/").content.decode()
    assert 'data-testid="attendance-form"' in form


def test_an_admin_saves_a_change_and_a_rate_below_the_statute_is_named_in_its_field():
    terms = {"effective_from": "2026-12-01", "hours_per_day": "8", "hours_per_week": "40",
             "paid_days_per_month": "21.75", "overtime_workday_rate": "1.5", "overtime_restday_rate": "2",
             "overtime_holiday_rate": "3", "absence_deduction_rate": "1", "sick_leave_pay_rate": "0.8"}
    low = page("ada").post("/payroll/attendance/", {**terms, "overtime_restday_rate": "1.8"})
    assert low.status_code == 400 and 'data-testid="error-overtime_restday_rate"' in low.content.decode()
    assert not AttendanceRules.objects.exists()
    saved = page("ada").post("/payroll/attendance/", {**terms, "overtime_restday_rate": "2.5", "note": "contract"},
                             follow=True)
    assert saved.status_code == 200 and "2.5" in saved.content.decode()
    assert AttendanceRules.objects.get().overtime_restday_rate == 2.5


def _upload(client, group, raw, key="k1"):
    return client.post(f"/payroll/groups/{group.id}/inputs/", {
        "year": "2026", "month": "11", "key": key, "file": SimpleUploadedFile("nov.csv", raw)})


def test_the_group_page_imports_a_month_and_lists_its_refusals_then_its_version():
    group, (a, b, _c) = sales_group()
    refused = _upload(page("alice"), group, csv_of([["工号", "工作日加班小时"], [a.employee_no, 3],
                                                    [b.employee_no, -4]]))
    text = refused.content.decode()
    assert refused.status_code == 422 and 'data-row="3" data-code="negative"' in text and "工作日加班小时" in text
    assert not MonthlyInputs.objects.exists()
    good = _upload(page("alice"), group, csv_of([["工号", "工作日加班小时"], [a.employee_no, 3]]), key="k2")
    assert good.status_code == 302 and good["Location"].endswith(f"/payroll/groups/{group.id}/#inputs")
    listed = page("bob").get(f"/payroll/groups/{group.id}/").content.decode()
    assert 'data-testid="inputs-version" data-version="1"' in listed and "2026-11" in listed
    assert page("oscar").get(f"/payroll/groups/{group.id}/inputs/").status_code == 404


def test_the_employee_page_masks_id_and_account_numbers_for_all_but_admins():
    a = Employee.objects.filter(tenant__slug="demo").order_by("employee_no").first()
    number = resident_id("11010519800101001")
    Employee.objects.filter(id=a.id).update(id_type="resident_id", id_number=number,
                                            bank_account="6217000010001234567", bank_name="中国建设银行")
    for username in ("alice", "bob", "dora"):
        text = page(username).get(f"/payroll/employees/{a.id}/").content.decode()
        assert number not in text and "6217000010001234567" not in text and "•••• 4567" in text, username
    admin = page("ada").get(f"/payroll/employees/{a.id}/").content.decode()
    assert number in admin and "6217000010001234567" in admin


def test_the_year_to_date_page_imports_and_lists_the_figures():
    a = Employee.objects.filter(tenant__slug="demo").order_by("employee_no").first()
    raw = csv_of([["工号", "累计收入额", "已任职月数"], [a.employee_no, "50000", 4]])
    assert 'data-testid="openings-upload"' not in page("alice").get("/payroll/year-openings/").content.decode()
    made = page("bob").post("/payroll/year-openings/?year=2026", {
        "year": "2026", "key": "o1", "file": SimpleUploadedFile("ytd.csv", raw)}, follow=True)
    text = made.content.decode()
    assert made.status_code == 200 and 'data-testid="year-opening"' in text and "50000.00" in text
