"""Importing a group's month of attendance and commission: every header said, every refusal
named by row and column, nothing written from a refused file, a new version per import."""
from decimal import Decimal

import pytest

from config.api import DomainError, NotFound, Unprocessable
from payroll.models import MonthlyInputRow, MonthlyInputs
from payroll.records.month_inputs import inputs_latest
from payroll.records.services import monthly_inputs_import
from tenants.models import Membership
from tests.month_inputs import csv_of, sales_group, xlsx_of
from tests.payroll import tenant

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]

HEADER_ZH = ["工号", "姓名", "事假天数", "病假天数", "工作日加班小时", "休息日加班小时", "节假日加班小时", "销售额", "其他", "备注"]


def user(username):
    return Membership.objects.get(user__username=username).user


def upload(group, raw, *, filename="november.csv", key="k1", username="alice", month=11):
    return monthly_inputs_import(tenant=tenant("demo"), group=group, year=2026, month=month, file=raw,
                                 filename=filename, user=user(username), idempotency_key=key)


def test_it_imports_chinese_headers_and_keeps_an_unknown_column_with_its_values():
    group, (a, b, c) = sales_group()
    raw = csv_of([HEADER_ZH,
                  [a.employee_no, a.name, 1, 0, 6, 8, 0, "12,000", "", "new hire"],
                  [b.employee_no, b.name, 0, 2, 0, 0, 3, "", 200, ""]])
    receipt = upload(group, raw)
    assert receipt.status_code == 201 and receipt.body["version"] == 1
    assert receipt.body["unknown_columns"] == ["备注"]
    assert {"header": "工作日加班小时", "read_as": "overtime_workday_hours"} in receipt.body["columns"]
    latest = inputs_latest(group.id, 2026, 11)
    assert latest.rows[a.id] == {"personal_leave_days": Decimal("1"), "sick_leave_days": Decimal("0"),
                                 "overtime_workday_hours": Decimal("6"), "overtime_restday_hours": Decimal("8"),
                                 "overtime_holiday_hours": Decimal("0"), "sales_amount": Decimal("12000")}
    assert latest.rows[b.id]["other_amount"] == Decimal("200") and "sales_amount" not in latest.rows[b.id]
    assert MonthlyInputRow.objects.get(inputs_id=latest.id, employee=a).extra == {"备注": "new hire"}
    assert c.id not in latest.rows  # no row: no figures, not zeros


def test_it_reads_an_xlsx_with_english_headers():
    group, (a, *_rest) = sales_group()
    raw = xlsx_of([["Employee No", "Name", "Personal leave days", "Workday overtime hours", "Sales amount"],
                   [a.employee_no, a.name, 0.5, 4.5, 30000]])
    receipt = upload(group, raw, filename="nov.xlsx")
    assert receipt.status_code == 201
    assert inputs_latest(group.id, 2026, 11).rows[a.id] == {
        "personal_leave_days": Decimal("0.5"), "overtime_workday_hours": Decimal("4.5"), "sales_amount": Decimal("30000")}


def test_a_second_import_is_the_next_version_and_the_first_is_kept():
    group, (a, *_rest) = sales_group()
    upload(group, csv_of([["工号", "工作日加班小时"], [a.employee_no, 4]]), key="one")
    second = upload(group, csv_of([["工号", "工作日加班小时"], [a.employee_no, 5]]), key="two")
    assert second.body["version"] == 2
    assert list(MonthlyInputs.objects.filter(group=group).order_by("version").values_list("version", flat=True)) == [1, 2]
    assert inputs_latest(group.id, 2026, 11).rows[a.id] == {"overtime_workday_hours": Decimal("5")}


def test_the_same_key_and_file_replays_the_first_answer_and_writes_once():
    group, (a, *_rest) = sales_group()
    raw = csv_of([["工号", "销售额"], [a.employee_no, 100]])
    first, again = upload(group, raw), upload(group, raw)
    assert again.replayed and again.body == first.body
    assert MonthlyInputs.objects.filter(group=group).count() == 1


def test_every_refusal_names_its_row_and_column_and_nothing_is_written():
    group, (a, b, c) = sales_group()
    outsider = tenant("demo").employees.filter(group__isnull=True).exclude(id__in=[a.id, b.id, c.id]).first()
    raw = csv_of([["工号", "事假天数", "病假天数", "工作日加班小时", "销售额"],
                  [a.employee_no, 0, 0, -2, 100],          # row 2: a negative hour
                  [b.employee_no, 20, 11, 0, 0],           # row 3: 31 absent days in November (30)
                  ["NOPE-999", 0, 0, 0, 0],                # row 4: no such employee
                  [outsider.employee_no, 0, 0, 1, 0],      # row 5: not in the group
                  [c.employee_no, 0, 0, "four", 0]])       # row 6: not a number
    with pytest.raises(Unprocessable) as refused:
        upload(group, raw)
    found = {(r["row"], r["column"], r["code"]) for r in refused.value.extra["refusals"]}
    assert found == {(2, "工作日加班小时", "negative"), (3, "病假天数", "too_many_absent_days"),
                     (4, "工号", "unknown_employee"), (5, "工号", "not_in_group"), (6, "工作日加班小时", "not_a_number")}
    assert refused.value.code == "file_refused" and "nothing was imported" in refused.value.message
    assert not MonthlyInputs.objects.filter(group=group).exists()


def test_a_file_with_no_input_column_or_no_employee_column_is_refused_whole():
    group, (a, *_rest) = sales_group()
    with pytest.raises(DomainError) as no_inputs:
        upload(group, csv_of([["工号", "备注"], [a.employee_no, "x"]]))
    assert no_inputs.value.code == "attachment_header" and no_inputs.value.extra == {"line": 1}
    with pytest.raises(DomainError) as no_employee:
        upload(group, csv_of([["销售额"], [100]]))
    assert no_employee.value.code == "attachment_header"
    with pytest.raises(DomainError) as bad_month:
        upload(group, csv_of([["工号", "销售额"], [a.employee_no, 1]]), month=13)
    assert bad_month.value.extra == {"field": "month"}
    assert not MonthlyInputs.objects.exists()


def test_another_tenant_never_reaches_the_group():
    group, (a, *_rest) = sales_group()
    with pytest.raises(NotFound):
        monthly_inputs_import(tenant=tenant("other"), group=group, year=2026, month=11,
                              file=csv_of([["工号", "销售额"], [a.employee_no, 1]]), filename="x.csv",
                              user=user("oscar"), idempotency_key="k")
    with pytest.raises(NotFound):  # oscar naming alice's tenant is not one of its members
        upload(group, csv_of([["工号", "销售额"], [a.employee_no, 1]]), username="oscar")
    assert not MonthlyInputs.objects.exists()
