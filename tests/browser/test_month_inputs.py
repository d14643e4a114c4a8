"""The month's data in the browser: alice imports November's inputs for her group on the group
page — a file with a negative hour is refused naming the row and the column, the corrected file
is version 1 — on a desktop in English and on a phone in Chinese; ada (a tenant admin) changes
an overtime rate on the attendance rules page, where a rate below the statute is named in its field."""
import re

from playwright.sync_api import expect

from tests.support import logged_in, screenshot

PHONE = (390, 844)

GROUP = """
from payroll.models import Employee, PayrollGroup
from tenants.models import Tenant
demo = Tenant.objects.get(slug="demo")
group = PayrollGroup.objects.create(tenant=demo, name="Shanghai Sales Inputs")
people = list(Employee.objects.filter(tenant=demo, group__isnull=True).order_by("employee_no")[:3])
Employee.objects.filter(id__in=[p.id for p in people]).update(group=group)
print(group.id, *[p.employee_no for p in people])
"""


def csv_file(rows):
    text = "\n".join(",".join(str(c) for c in row) for row in rows)
    return {"name": "november.csv", "mimeType": "text/csv", "buffer": text.encode("utf-8")}


HEADER = ["工号", "姓名", "事假天数", "工作日加班小时", "休息日加班小时", "销售额", "备注"]


def upload(page, year, month, rows):
    section = page.get_by_test_id("group-inputs")
    section.locator("input[name=year]").fill(str(year))
    section.locator("select[name=month]").select_option(str(month))
    section.locator("input[name=file]").set_input_files(csv_file(rows))
    section.get_by_test_id("inputs-submit").click()


def test_alice_imports_a_months_inputs_and_ada_changes_an_overtime_rate(keel, browser):
    group_id, a, b, c = keel.manage("shell", "-c", GROUP).split()[-4:]
    group_url = f"{keel.base_url}/payroll/groups/{group_id}/"
    bad = [HEADER, [a, "", 0, 6, 0, 12000, ""], [b, "", 1, -2, 0, 8000, ""], [c, "", 0, 0, 4, 0, "new"]]
    good = [HEADER, [a, "", 0, 6, 0, 12000, ""], [b, "", 1, 2, 0, 8000, ""], [c, "", 0, 0, 4, 0, "new"]]

    context, alice = logged_in(browser, keel.base_url, "alice")
    try:
        alice.goto(group_url)
        expect(alice.get_by_test_id("inputs-none")).to_be_visible()
        upload(alice, 2026, 11, bad)
        refusal = alice.get_by_test_id("inputs-refusal")
        expect(refusal).to_have_count(1)
        expect(refusal).to_contain_text("3")
        expect(refusal).to_contain_text("工作日加班小时")
        expect(refusal).to_contain_text("negative")
        expect(alice.get_by_test_id("inputs-refused")).to_contain_text("nothing was imported")
        screenshot(alice, "month-inputs-refused-en")
        upload(alice, 2026, 11, good)
        alice.wait_for_url(re.compile(rf".*/payroll/groups/{group_id}/#inputs$"))
        expect(alice.locator(".notice")).to_contain_text("version 1, 3 rows")
        version = alice.get_by_test_id("inputs-version")
        expect(version).to_have_count(1)
        expect(version).to_contain_text("2026-11")
        expect(version).to_contain_text("version 1")
        expect(version).to_contain_text("备注")  # the unknown column, said
        screenshot(alice, "month-inputs-version-en")
    finally:
        context.close()

    context, phone = logged_in(browser, keel.base_url, "alice", locale="zh-CN", size=PHONE)
    try:
        phone.goto(group_url)
        expect(phone.get_by_test_id("group-inputs")).to_contain_text("月度数据")
        expect(phone.get_by_test_id("inputs-version")).to_contain_text("第 1 版")
        upload(phone, 2026, 12, bad)
        refusal = phone.get_by_test_id("inputs-refusal")
        expect(refusal).to_contain_text("工作日加班小时")
        expect(refusal).to_contain_text("负数")
        expect(phone.get_by_test_id("inputs-refused")).to_contain_text("未导入任何数据")
        assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE[0] + 1
        screenshot(phone, "month-inputs-refused-zh-phone")
    finally:
        context.close()

    for locale, size, statute, low_error, saved in (
            ("en-US", (1366, 860), "art. 44", "greater than or equal to 2", "are saved"),
            ("zh-CN", PHONE, "第四十四条", "2", "已保存")):
        context, ada = logged_in(browser, keel.base_url, "ada", locale=locale, size=size)
        try:
            ada.goto(keel.base_url + "/payroll/attendance/")
            expect(ada.get_by_test_id("attendance-statute")).to_contain_text(statute)
            expect(ada.get_by_test_id("attendance-hourly")).to_contain_text("÷ 21.75 ÷ 8")
            form = ada.get_by_test_id("attendance-form")
            date = "2026-12-01" if locale == "en-US" else "2027-01-01"
            form.locator("input[name=effective_from]").fill(date)
            form.locator("input[name=overtime_restday_rate]").fill("1.8")
            form.get_by_test_id("attendance-save").click()
            expect(ada.get_by_test_id("error-overtime_restday_rate")).to_contain_text(low_error)
            form = ada.get_by_test_id("attendance-form")
            form.locator("input[name=overtime_restday_rate]").fill("2.5")
            form.get_by_test_id("attendance-save").click()
            expect(ada.locator(".notice")).to_contain_text(saved)
            row = ada.get_by_test_id("attendance-history-row").filter(has_text=date)
            expect(row).to_contain_text("2.5")
            if size == PHONE:
                assert ada.evaluate("document.documentElement.scrollWidth") <= PHONE[0] + 1
            screenshot(ada, f"attendance-rules-{locale}")
        finally:
            context.close()
