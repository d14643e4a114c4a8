"""In the browser: bob (an approver) records an employee's new pay on the employee page,
sees it in the pay history and on a payslip computed from it (English, 1366 px); the same pages
read in Chinese on a phone (zh-CN, 390 px)."""
import re

from playwright.sync_api import expect

from tests.support import log_in, screenshot

PHONE = {"width": 390, "height": 844}

# A payslip needs a group whose template names the city: put a Shanghai employee in one (the
# chat's setup run would, at much greater length; test_trial_payroll.py walks that).
GROUPED = """
from payroll.models import Employee, GroupItem, PayrollGroup, PayrollTemplate
from tenants.models import Tenant
demo = Tenant.objects.get(slug="demo")
template = PayrollTemplate.objects.get(code="cn-sh-monthly-salaried", version=1)
group = PayrollGroup.objects.create(tenant=demo, name="Pay Edit Group", template_version=1, template=template)
# A group computes its own items: the template's, as an import copies them.
for item in template.items.all():
    GroupItem.objects.create(group=group, position=item.position, code=item.code, name=item.name, kind=item.kind,
                             rate=item.rate, rate_name=item.rate_name, base=item.base, formula=item.formula)
employee = Employee.objects.filter(tenant=demo, location="Shanghai").order_by("employee_no").first()
Employee.objects.filter(id=employee.id).update(group=group)
print(employee.id)
"""


def test_bob_records_a_pay_and_the_payslip_uses_it(keel, new_page, browser):
    employee_id = keel.manage("shell", "-c", GROUPED).split()[-1]
    bob = new_page()
    log_in(bob, keel.base_url, "bob")
    bob.goto(keel.base_url + "/payroll/")
    bob.get_by_test_id("employees").locator("tr", has_text="Pay Edit Group").get_by_role("link").click()
    bob.wait_for_url(re.compile(r".*/payroll/employees/\d+/$"))
    url = bob.url
    assert url.endswith(f"/payroll/employees/{employee_id}/"), (url, employee_id)

    form = bob.get_by_test_id("pay-form")
    expect(form).to_be_visible()
    form.get_by_label("Base salary").fill("abc")
    form.get_by_test_id("pay-save").click()
    expect(bob.get_by_test_id("error-base_salary")).to_contain_text("Enter a number")

    form = bob.get_by_test_id("pay-form")
    form.get_by_label("Base salary").fill("31,000")
    form.get_by_label("Allowance 1: name").fill("Meal")
    form.get_by_label("Allowance 1: amount").fill("600")
    form.get_by_label("Children's education").fill("2000")
    form.get_by_test_id("pay-save").click()
    bob.wait_for_url(url)
    expect(bob.locator(".notice")).to_contain_text("recorded from")
    history = bob.get_by_test_id("pay-history")
    expect(history.get_by_test_id("pay-row").first).to_contain_text("31000.00")
    expect(history.get_by_test_id("pay-row").first).to_contain_text("Meal 600.00")
    expect(history.get_by_test_id("pay-row").first).to_contain_text("Children's education 2000.00")
    expect(history.get_by_test_id("pay-row").first).to_contain_text("bob, employee page")
    screenshot(bob, "pay-edit-en")

    bob.get_by_test_id("payslip-links").get_by_role("link").first.click()
    bob.wait_for_url(re.compile(r".*/payslips/\d{4}/1/$"))
    payslip_url = bob.url
    expect(bob.locator('[data-row="gross"] td')).to_contain_text("31,600.00")
    expect(bob.locator('[data-row="gross"] td')).to_have_attribute("title", re.compile(r"31,000\.00 \+ 600\.00"))
    screenshot(bob, "pay-edit-payslip-en")

    # The same pages in Chinese on a phone. Needs the rebuilt catalog (scripts/i18n_fill.py).
    context = browser.new_context(viewport=PHONE, locale="zh-CN")
    try:
        phone = context.new_page()
        phone.goto(keel.base_url + "/login/")
        phone.locator('input[name="username"]').fill("bob")
        phone.locator('input[name="password"]').fill("keel-demo")
        phone.locator('input[name="password"]').press("Enter")
        phone.wait_for_url(lambda u: "/login/" not in u)
        phone.goto(url)
        expect(phone.locator("h2", has_text="薪资历史")).to_be_visible()
        expect(phone.get_by_test_id("pay-row").first).to_contain_text("31000.00")
        expect(phone.get_by_test_id("pay-row").first).to_contain_text("子女教育 2000.00")
        expect(phone.get_by_test_id("pay-form")).to_contain_text("基本工资")
        # Nothing wider than the phone: the history is a card per row.
        assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"] + 1
        screenshot(phone, "pay-edit-zh-phone")
        phone.goto(payslip_url)
        expect(phone.get_by_test_id("payslip")).to_contain_text("31,600.00")
        expect(phone.get_by_test_id("payslip")).to_contain_text("实发工资")
        screenshot(phone, "pay-edit-payslip-zh-phone")
    finally:
        context.close()
