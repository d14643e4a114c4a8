"""In the browser: alice attaches an HR export with salaries (Chinese headers) for a
Shanghai sales group; bob's approval card shows the trial's totals per month and three sample
payslips before he approves; after the approval the chat gives the trial's totals, and a
payslip opens from the group's page, in English and in Chinese, each amount's formula on hover."""
import re

from playwright.sync_api import expect

from tests.support import log_in, screenshot

EXPORT = ("工号,姓名,部门,城市,基本工资,岗位津贴,专项附加扣除\n"
          "S-3401,王芳,Sales,Shanghai,18000,1500,2000\n"
          "S-3402,李强,Sales,Shanghai,12000,800,1000\n"
          "S-3403,陈静,Sales,Shanghai,9000,,\n"
          "S-3404,赵磊,Sales,Shanghai,25000,2000,3000\n")


def send(page, text):
    page.get_by_label("Message").fill(text)
    page.get_by_label("Message").press("Enter")


def test_bob_sees_the_trial_on_the_card_and_alice_reads_a_payslip_in_both_languages(keel, new_page, browser, tmp_path):
    export = tmp_path / "hr-export.csv"
    export.write_text(EXPORT, encoding="utf-8")

    alice = new_page()
    log_in(alice, keel.base_url, "alice")
    alice.goto(keel.base_url + "/console/")
    alice.get_by_role("button", name="New conversation").click()
    expect(alice.get_by_test_id("live-indicator")).to_have_text("● live")
    alice.get_by_test_id("attach-input").set_input_files(str(export))
    send(alice, "set up a monthly payroll group for our Shanghai sales team with commission, called 'Trial Sales'")
    chat = alice.get_by_test_id("chat-messages")
    expect(chat).to_contain_text(re.compile(r"waiting for .*Bob.* to approve it"), timeout=30000)

    bob = new_page()
    log_in(bob, keel.base_url, "bob")
    bob.goto(keel.base_url + "/approvals/")
    bob.get_by_test_id("queue-item").filter(has_text="Trial Sales").click()
    card = bob.get_by_test_id("approval-card")
    expect(card).to_contain_text("Trial payroll")
    totals = card.get_by_test_id("trial-total")
    expect(totals).to_have_count(3)
    expect(card.get_by_test_id("trial-totals")).to_contain_text("Employer cost")
    expect(totals.first).to_contain_text("January")
    expect(totals.first).to_contain_text("68,300.00")  # gross: 19,500 + 12,800 + 9,000 + 27,000
    payslips = card.get_by_test_id("trial-payslip")
    expect(payslips).to_have_count(3)
    expect(payslips.first).to_contain_text("王芳")
    screenshot(bob, "approval-card-trial")
    card.get_by_test_id("approve").click()
    expect(bob.get_by_test_id("toast")).to_contain_text("Approved", timeout=15000)  # held with Undo, then sent

    expect(chat).to_contain_text("Done: the payroll group “Trial Sales” has been created", timeout=30000)
    expect(chat).to_contain_text("Trial payroll for 4 employees", timeout=30000)
    expect(chat).to_contain_text("employer cost")
    alice.get_by_test_id("message-link").last.click()
    alice.wait_for_url("**/payroll/groups/*/")
    alice.get_by_test_id("payslip-link").first.click()
    alice.wait_for_url(re.compile(r".*/payroll/employees/\d+/payslips/\d{4}/1/$"))
    payslip = alice.get_by_test_id("payslip")
    expect(payslip).to_contain_text("Gross")
    expect(payslip.locator('[data-row="gross"] td')).to_have_attribute("title", re.compile(r"18,000\.00 \+ 1,500\.00"))
    expect(payslip.locator('[data-row="net"] td')).to_have_attribute("title", re.compile(r" = [0-9,]+\.\d\d$"))
    screenshot(alice, "payslip-en")
    url = alice.url

    # The same page in Chinese (a browser whose language is Chinese). Needs the rebuilt catalog.
    context = browser.new_context(viewport={"width": 1366, "height": 860}, locale="zh-CN")
    try:
        chinese = context.new_page()
        chinese.goto(keel.base_url + "/login/")  # the log-in page reads in Chinese too
        chinese.locator('input[name="username"]').fill("alice")
        chinese.locator('input[name="password"]').fill("keel-demo")
        chinese.locator('input[name="password"]').press("Enter")
        chinese.wait_for_url(lambda u: "/login/" not in u)
        chinese.goto(url)
        expect(chinese.locator("h1")).to_contain_text("工资条")
        expect(chinese.get_by_test_id("payslip")).to_contain_text("实发工资")
        screenshot(chinese, "payslip-zh")
    finally:
        context.close()
