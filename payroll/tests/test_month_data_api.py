"""The month's data over HTTP: attendance rules (every member reads, an admin writes), a group's
monthly inputs (multipart, Idempotency-Key, 422 with every refusal), year-to-date openings, and
ID and bank numbers masked in every employee answer for all but admins."""
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from payroll.models import Employee, MonthlyInputs
from tests.month_inputs import csv_of, resident_id, sales_group
from tests.payroll import api

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]

RULES = "/api/v1/payroll/attendance-rules/"


def post_file(client, url, raw, *, key="k", filename="f.csv"):
    return client.post(url, {"file": SimpleUploadedFile(filename, raw)}, format="multipart",
                       HTTP_IDEMPOTENCY_KEY=key)


def test_every_member_reads_the_attendance_rules_and_only_an_admin_writes_them():
    read = api("alice").get(RULES)
    assert read.status_code == 200
    assert read.json()["in_force"]["overtime_holiday_rate"] == "3" and read.json()["in_force"]["source"] == "default"
    assert "art. 44" in read.json()["statute"]["overtime"]
    refused = api("bob").post(RULES, {"effective_from": "2026-12-01", "overtime_workday_rate": "2"}, format="json")
    assert refused.status_code == 403 and refused["Content-Type"] == "application/problem+json"
    made = api("ada").post(RULES, {"effective_from": "2026-12-01", "overtime_workday_rate": "2"}, format="json")
    assert made.status_code == 201 and made.json()["overtime_workday_rate"] == "2"
    low = api("ada").post(RULES, {"effective_from": "2027-01-01", "overtime_workday_rate": "1.2"}, format="json")
    assert low.status_code == 422 and low.json()["field"] == "overtime_workday_rate"
    history = api("alice").get(RULES).json()["history"]
    assert [h["effective_from"] for h in history] == ["2026-12-01"] and history[0]["updated_by"] == "ada"
    assert api("oscar").get(RULES).json()["history"] == []


def test_a_group_month_is_imported_over_http_refused_whole_then_versioned():
    group, (a, b, _c) = sales_group()
    url = f"/api/v1/payroll/groups/{group.id}/inputs/?year=2026&month=11"
    bad = post_file(api("alice"), url, csv_of([["工号", "工作日加班小时"], [a.employee_no, 2], [b.employee_no, -1]]))
    assert bad.status_code == 422 and bad["Content-Type"] == "application/problem+json"
    assert bad.json()["refusals"] == [{"row": 3, "column": "工作日加班小时", "code": "negative",
                                       "message": bad.json()["refusals"][0]["message"]}]
    assert not MonthlyInputs.objects.exists()
    good = post_file(api("alice"), url, csv_of([["工号", "工作日加班小时", "Bonus note"], [a.employee_no, 2, "x"]]),
                     key="k2")
    assert good.status_code == 201 and good.json()["version"] == 1 and good.json()["unknown_columns"] == ["Bonus note"]
    again = post_file(api("alice"), url, csv_of([["工号", "工作日加班小时", "Bonus note"], [a.employee_no, 2, "x"]]),
                      key="k2")
    assert again.status_code == 201 and again["Idempotency-Replayed"] == "true"
    listed = api("bob").get(f"/api/v1/payroll/groups/{group.id}/inputs/?year=2026&month=11").json()["results"]
    assert [(v["version"], v["row_count"], v["uploaded_by"]) for v in listed] == [(1, 1, "alice")]


def test_another_tenant_gets_404_for_the_group_inputs():
    group, (a, *_rest) = sales_group()
    url = f"/api/v1/payroll/groups/{group.id}/inputs/?year=2026&month=11"
    assert api("oscar").get(url).status_code == 404
    assert post_file(api("oscar"), url, csv_of([["工号", "销售额"], [a.employee_no, 1]])).status_code == 404
    no_key = api("alice").post(url, {"file": SimpleUploadedFile("f.csv", b"x")}, format="multipart")
    assert no_key.status_code == 400
    bad_month = post_file(api("alice"), f"/api/v1/payroll/groups/{group.id}/inputs/?year=2026&month=0",
                          csv_of([["工号", "销售额"], [a.employee_no, 1]]))
    assert bad_month.status_code == 400 and bad_month.json()["field"] == "month"


def test_year_openings_are_imported_and_listed():
    a = Employee.objects.filter(tenant__slug="demo").order_by("employee_no").first()
    raw = csv_of([["Employee No", "Cumulative income", "Cumulative contributions", "Months employed",
                   "Cumulative tax withheld"], [a.employee_no, "100000", "11000", 5, "2000"]])
    assert post_file(api("alice"), "/api/v1/payroll/year-openings/?year=2026", raw).status_code == 403
    made = post_file(api("bob"), "/api/v1/payroll/year-openings/?year=2026", raw)
    assert made.status_code == 201 and made.json()["imported"] == 1
    twice = post_file(api("bob"), "/api/v1/payroll/year-openings/?year=2026", raw, key="k2")
    assert twice.status_code == 422 and twice.json()["refusals"][0]["code"] == "opening_exists"
    unclear = post_file(api("ada"), "/api/v1/payroll/year-openings/?year=2026&replace=yes", raw, key="k3")
    assert unclear.status_code == 400 and unclear.json()["field"] == "replace"
    replaced = post_file(api("ada"), "/api/v1/payroll/year-openings/?year=2026&replace=true", raw, key="k4")
    assert replaced.status_code == 201, replaced.content
    listed = api("alice").get("/api/v1/payroll/year-openings/?year=2026").json()["results"]
    assert [(o["employee_no"], o["cumulative_income"], o["months_employed"]) for o in listed] == [
        (a.employee_no, "100000.00", 5)]
    assert api("oscar").get("/api/v1/payroll/year-openings/?year=2026").json()["results"] == []


def test_id_and_account_numbers_are_masked_for_everyone_but_admins():
    a = Employee.objects.filter(tenant__slug="demo").order_by("employee_no").first()
    number = resident_id("31010119850202456")
    raw = csv_of([["工号", "证件类型", "证件号码", "银行账号", "开户银行"],
                  [a.employee_no, "居民身份证", number, "6222021001234567", "中国工商银行"]])
    assert post_file(api("bob"), "/api/v1/payroll/employees/identities/", raw).status_code == 403
    made = post_file(api("ada"), "/api/v1/payroll/employees/identities/", raw)
    assert made.status_code == 200 and number not in made.content.decode()
    for username in ("alice", "bob", "dora"):
        shown = api(username).get(f"/api/v1/payroll/employees/{a.id}/").json()
        assert (shown["id_number"], shown["bank_account"]) == (f"•••• {number[-4:]}", "•••• 4567"), username
        listed = api(username).get("/api/v1/payroll/employees/").content.decode()
        assert number not in listed and "6222021001234567" not in listed
    admin = api("ada").get(f"/api/v1/payroll/employees/{a.id}/").json()
    assert (admin["id_type"], admin["id_number"], admin["bank_account"], admin["bank_name"]) == (
        "resident_id", number, "6222021001234567", "中国工商银行")
    assert api("oscar").get(f"/api/v1/payroll/employees/{a.id}/").status_code == 404
