"""The first payroll month in the browser, as people do it: alice imports November's attendance
and sales for a 3-employee Shanghai group whose template has commission (on the group page),
asks in the chat to run November; bob approves on the desk, where the card shows the totals,
the anomalies (an employee with no inputs row) and a sample payslip; the month page turns
closed without a reload; the bank file downloaded through the page's link adds up to the net
pay the page lists, the declaration's tax column to its income tax; a payslip shows its
formulas and inputs with the account masked, and prints without the navigation. In English on
a laptop; in Chinese with alice on a 390 px phone."""
import csv
import io
import re
from decimal import Decimal

from openpyxl import load_workbook
from playwright.sync_api import TimeoutError as PlaywrightTimeout, expect

from tests.support import logged_in, screenshot

PHONE = (390, 844)

# A group as an approved setup leaves it: the catalog's Shanghai sales template with commission,
# overtime and absence, its items copied, three employees with salaries, IDs and bank accounts.
GROUP = """
from decimal import Decimal
from payroll.models import Employee, EmployeePay, GroupItem, PayrollGroup, PayrollTemplate
from tenants.models import Tenant
demo = Tenant.objects.get(slug="demo")
source = PayrollTemplate.objects.get(code="cn-sh-sales-attendance", version=1)
group = PayrollGroup.objects.create(tenant=demo, name={name!r}, template=source, template_version=1,
                                    variables=source.variables, city="shanghai")
for item in source.items.order_by("position"):
    GroupItem.objects.create(group=group, position=item.position, code=item.code, name=item.name, kind=item.kind,
                             rate=item.rate, rate_name=item.rate_name, base=item.base, formula=item.formula)
for n, salary in enumerate(("21750", "18000", "30000"), start=1):
    e = Employee.objects.create(tenant=demo, employee_no=f"{prefix}{{n}}", name=f"{people}{{n}}", location="Shanghai",
                                base_salary=Decimal(salary), currency="CNY", group=group, id_type="resident_id",
                                id_number=f"31010119900101{{n:03d}}{prefix_digit}", bank_account=f"62220000{prefix_digit}000000{{n:04d}}",
                                bank_name="ICBC Shanghai")
    EmployeePay.objects.create(employee=e, effective_from="2026-01-01", base_salary=Decimal(salary), source="walk")
print(group.id)
"""
HEADER = ["工号", "姓名", "事假天数", "病假天数", "工作日加班小时", "休息日加班小时", "节假日加班小时", "销售额"]


def make_group(keel, name: str, prefix: str, people: str, digit: str) -> str:
    script = GROUP.format(name=name, prefix=prefix, people=people, prefix_digit=digit)
    return keel.manage("shell", "-c", script).split()[-1]


def inputs_csv(prefix: str) -> dict:
    # The third employee has no row: the card flags it ("no inputs row").
    rows = [HEADER, [f"{prefix}1", "", 1, 0, 10, 8, 3, 100000], [f"{prefix}2", "", 0, 2, 7.5, 0, 0, 12345.67]]
    text = "\n".join(",".join(str(c) for c in row) for row in rows)
    return {"name": "november.csv", "mimeType": "text/csv", "buffer": text.encode("utf-8")}


def money(text: str) -> Decimal:
    return Decimal(re.sub(r"[^0-9.\-]", "", text))


def column_sum(page, col: str) -> Decimal:
    cells = page.get_by_test_id("month-payslip").locator(f'td[data-col="{col}"]')
    return sum((money(t) for t in cells.all_inner_texts()), Decimal("0"))


def bank_total(data: bytes) -> Decimal:
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
    header = rows[2]  # rows 1–2 are the summary (count, total)
    at = header.index("金额")
    return sum((Decimal(r[at]) for r in rows[3:] if r), Decimal("0"))


def declared_tax(data: bytes) -> Decimal:
    book = load_workbook(io.BytesIO(data), read_only=True)
    for sheet in book.worksheets:
        rows = list(sheet.iter_rows(values_only=True))
        if rows and "本期应预扣预缴税额" in rows[0]:
            at = rows[0].index("本期应预扣预缴税额")
            return sum((Decimal(str(r[at])) for r in rows[1:] if r[at] not in (None, "")), Decimal("0"))
    raise AssertionError("no sheet with the tax column 本期应预扣预缴税额")


def downloaded(page, testid: str) -> bytes:
    """The file behind a link, as a person gets it: a click that lands while the live page swaps
    its content (one last refresh after the run's news) is lost, and they click again."""
    for attempt in (1, 2):
        try:
            with page.expect_download(timeout=15000) as d:
                page.get_by_test_id(testid).click()
            return open(d.value.path(), "rb").read()
        except PlaywrightTimeout:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def import_november(page, keel, group_id: str, prefix: str) -> None:
    page.goto(f"{keel.base_url}/payroll/groups/{group_id}/")
    section = page.get_by_test_id("group-inputs")
    section.locator("input[name=year]").fill("2026")
    section.locator("select[name=month]").select_option("11")
    section.locator("input[name=file]").set_input_files(inputs_csv(prefix))
    section.get_by_test_id("inputs-submit").click()
    expect(page.get_by_test_id("inputs-version")).to_contain_text("2026-11")


def ask_in_chat(page, keel, text: str) -> None:
    page.goto(keel.base_url + "/console/")
    page.get_by_test_id("new-conversation").locator("button[type=submit]").click()
    expect(page.get_by_test_id("live-indicator")).to_have_attribute("class", re.compile(r"live-live"))
    box = page.locator("#chat-form textarea[name=text]")
    box.fill(text)
    box.press("Enter")


def open_month(page, keel, group_id: str) -> None:
    page.goto(f"{keel.base_url}/payroll/groups/{group_id}/")
    row = page.get_by_test_id("group-month").filter(has_text="2026-11")
    expect(row).to_have_count(1, timeout=30000)
    row.get_by_role("link").click()
    page.wait_for_url(re.compile(r".*/payroll/months/\d+/$"))


def bob_approves(browser, keel, group_name: str, *, locale: str, words: dict) -> None:
    context, bob = logged_in(browser, keel.base_url, "bob", locale=locale)
    try:
        bob.goto(keel.base_url + "/approvals/")
        # The queue names the group and that it is a payroll month; so does the card.
        item = bob.get_by_test_id("queue-item").filter(has_text=group_name).filter(has_text=words["kind"])
        expect(item).to_have_count(1)
        item.click()
        card = bob.get_by_test_id("approval-card")
        expect(card.get_by_test_id("month")).to_contain_text(group_name)
        totals = card.get_by_test_id("month-totals")
        expect(totals).to_contain_text(words["headcount"])
        expect(totals).to_contain_text("3")
        expect(card.get_by_test_id("month-change")).to_have_count(3)
        flagged = card.get_by_test_id("month-change").filter(has_text=words["no_inputs"])
        expect(flagged).to_have_count(1)  # the employee the file left out
        expect(card.get_by_test_id("month-sample")).not_to_have_count(0)
        expect(card.get_by_test_id("month-sample-items")).to_contain_text("sales_amount")
        expect(card.get_by_test_id("month-sample-items")).to_contain_text("overtime_workday_rate")
        screenshot(bob, f"month-card-{locale}")
        card.get_by_test_id("approve").click()
        expect(bob.get_by_test_id("toast")).to_contain_text(words["approved"], timeout=15000)
    finally:
        context.close()


def check_closed_month(page, *, words: dict, width: int | None = None) -> None:
    expect(page.get_by_test_id("month-status")).to_have_attribute("data-status", "closed", timeout=60000)
    # The run verifies the files after the close: once it has completed, the page stops refreshing.
    expect(page.get_by_test_id("month-run-status")).to_have_class(re.compile(r"\bstatus-completed\b"), timeout=60000)
    expect(page.get_by_test_id("month-payslip")).to_have_count(3)
    expect(page.get_by_test_id("month-file")).to_have_count(3)
    expect(page.get_by_test_id("month-file-sha256").first).to_have_text(re.compile(r"^[0-9a-f]{64}$"))
    net, tax = column_sum(page, "net"), column_sum(page, "tax")
    assert net > 0
    assert bank_total(downloaded(page, "month-file-link-bank_csv")) == net
    assert declared_tax(downloaded(page, "month-file-link-tax_xlsx")) == tax
    expect(page.get_by_test_id("month-totals").locator('[data-total="net"]')).to_contain_text(f"{net:,.2f}")
    if width:
        assert page.evaluate("document.documentElement.scrollWidth") <= width + 1


def check_payslip(page, *, words: dict) -> None:
    page.get_by_test_id("month-payslip").first.get_by_role("link").click()
    page.wait_for_url(re.compile(r".*/payroll/months/\d+/payslips/\d+/$"))
    items = page.get_by_test_id("payslip-items")
    expect(items).to_contain_text("overtime_workday_hours * hourly_wage * overtime_workday_rate")
    expect(items).to_contain_text(words["commission"])
    expect(page.get_by_test_id("payslip-inputs").locator('[data-input="sales_amount"]')).to_contain_text("100000")
    expect(page.get_by_test_id("payslip-bank-account")).to_contain_text("•••• ")
    expect(page.get_by_test_id("payslip-bank-account")).not_to_contain_text("62220000")
    page.emulate_media(media="print")
    expect(page.locator("header.topbar")).to_be_hidden()
    expect(page.get_by_test_id("payslip-print")).to_be_hidden()
    expect(items).to_be_visible()
    page.emulate_media(media="screen")


EN = {"headcount": "Headcount", "no_inputs": "no inputs row", "approved": "Approved", "commission": "Sales commission",
      "started": "Running the payroll of", "kind": "Payroll month"}
ZH = {"headcount": "人数", "no_inputs": "无考勤/业绩数据行", "approved": "已批准", "commission": "销售提成",
      "started": "开始发放", "kind": "月度薪资"}


def test_alice_runs_november_from_the_chat_bob_approves_and_the_files_add_up_in_english(keel, browser):
    group_id = make_group(keel, "Shanghai Sales", "MW-E", "Walker ", "1")
    context, alice = logged_in(browser, keel.base_url, "alice")
    try:
        import_november(alice, keel, group_id, "MW-E")
        ask_in_chat(alice, keel, "run November payroll for Shanghai Sales")
        expect(alice.get_by_test_id("chat-messages")).to_contain_text(EN["started"], timeout=30000)
        open_month(alice, keel, group_id)
        expect(alice.get_by_test_id("month-inputs-version")).to_contain_text("version 1")
        expect(alice.get_by_test_id("month-status")).to_have_attribute("data-status", "awaiting_approval",
                                                                       timeout=60000)
        expect(alice.get_by_test_id("live-indicator")).to_contain_text("live")
        bob_approves(browser, keel, "Shanghai Sales", locale="en-US", words=EN)
        check_closed_month(alice, words=EN)  # no reload: the run's events refresh the page
        screenshot(alice, "month-closed-en")
        check_payslip(alice, words=EN)
        screenshot(alice, "month-payslip-en")
    finally:
        context.close()


def test_alice_runs_november_in_chinese_on_a_phone_and_bob_approves(keel, browser):
    group_id = make_group(keel, "上海销售", "MZ-E", "走查", "2")
    context, alice = logged_in(browser, keel.base_url, "alice", locale="zh-CN", size=PHONE)
    try:
        import_november(alice, keel, group_id, "MZ-E")
        ask_in_chat(alice, keel, "发上海销售11月的工资")
        expect(alice.get_by_test_id("chat-messages")).to_contain_text(ZH["started"], timeout=30000)
        open_month(alice, keel, group_id)
        expect(alice.get_by_test_id("month-status")).to_have_attribute("data-status", "awaiting_approval",
                                                                       timeout=60000)
        expect(alice.locator("h1")).to_contain_text("上海销售")
        bob_approves(browser, keel, "上海销售", locale="zh-CN", words=ZH)
        check_closed_month(alice, words=ZH, width=PHONE[0])
        screenshot(alice, "month-closed-zh-phone")
        check_payslip(alice, words=ZH)
        expect(alice.locator("h1")).to_contain_text("工资条")
        assert alice.evaluate("document.documentElement.scrollWidth") <= PHONE[0] + 1
        screenshot(alice, "month-payslip-zh-phone")
    finally:
        context.close()
