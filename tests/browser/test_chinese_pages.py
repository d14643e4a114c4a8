"""In a real browser: a person whose browser asks for Chinese reads the expense
claims, hiring and approvals pages in Chinese — headings, labels, the approval card's sentences —
and none of the English headings those pages used to show."""
import re

import pytest
from playwright.sync_api import expect

from tests.browser.test_approvals import start_run
from tests.support import Api, screenshot


@pytest.fixture
def chinese(keel, browser):
    """A zh-CN browser, logged in through the Chinese login form."""
    contexts = []

    def log_in(username: str):
        context = browser.new_context(viewport={"width": 1366, "height": 860}, locale="zh-CN")
        contexts.append(context)
        page = context.new_page()
        page.goto(keel.base_url + "/login/")
        page.get_by_label("用户名").fill(username)
        page.get_by_label("密码").fill("keel-demo")
        page.get_by_role("button", name="登录", exact=True).click()
        expect(page.get_by_test_id("who")).to_be_attached()
        return page

    yield log_in
    for context in contexts:
        context.close()


def no_english(page, *phrases: str) -> None:
    main = page.locator("main")
    for phrase in phrases:
        expect(main).not_to_contain_text(phrase)


def test_expense_claims_and_a_claim_read_in_chinese(keel, chinese):
    page = chinese("alice")
    page.goto(keel.base_url + "/expenses/")
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    expect(page.get_by_role("heading", name="报销申请", exact=True)).to_be_visible()
    expect(page.get_by_role("heading", name="新建申请")).to_be_visible()
    expect(page.get_by_test_id("claims").locator("thead")).to_contain_text("申请人")
    no_english(page, "Expense claims", "New claim", "Claimant", "Total amount", "Create draft", "file one here")
    form = page.get_by_test_id("claim-form")
    form.get_by_label("城市").fill("Beijing")
    form.get_by_label("开始日期").fill("2026-11-16")
    form.get_by_label("晚数").fill("2")
    form.get_by_label("总金额").fill("1800")
    form.get_by_role("button", name="创建草稿").click()
    expect(page).to_have_url(re.compile(r"/expenses/claims/\d+/$"))
    expect(page.get_by_test_id("claim-facts")).to_contain_text("日期")
    expect(page.get_by_test_id("claim-facts")).to_contain_text("2 晚")
    expect(page.get_by_role("heading", name="发票")).to_be_visible()
    expect(page.get_by_role("heading", name="历史")).to_be_visible()
    expect(page.get_by_test_id("submit-claim")).to_have_text("提交申请")
    expect(page.get_by_test_id("claim-history")).to_contain_text("已创建为草稿")
    no_english(page, "Invoices", "Submit claim", "History", "No invoice yet", "Created as a draft", "filed by",
               "nights)")
    screenshot(page, "zh-expense-claim")


def test_hiring_and_a_tan_read_in_chinese(keel, chinese):
    page = chinese("ada")
    page.goto(keel.base_url + "/hiring/")
    expect(page.get_by_role("heading", name="招聘申请（TAN）")).to_be_visible()
    expect(page.get_by_role("heading", name="新建招聘申请")).to_be_visible()
    expect(page.get_by_role("heading", name=re.compile(r"^简历库（\d+）$"))).to_be_visible()
    no_english(page, "Hiring requests (TANs)", "New TAN", "CV bank", "Seniority", "Headline", "Create draft")
    page.get_by_test_id("tan-row").filter(has_text="Data Analyst").get_by_role("link").first.click()
    expect(page.get_by_role("heading", name="候选人匹配")).to_be_visible()
    expect(page.get_by_test_id("approve-tan")).to_have_text("批准招聘申请")
    expect(page.get_by_test_id("matches")).to_contain_text("候选人")
    no_english(page, "Candidate matching", "Approve TAN", "No matches recorded yet", "skills:")
    screenshot(page, "zh-tan")


def test_the_approvals_card_matrix_and_history_read_in_chinese(keel, chinese):
    run = start_run(Api(keel.base_url, "alice"), "Zhongwen Group")
    page = chinese("bob")
    page.goto(keel.base_url + "/approvals/")
    expect(page.get_by_role("heading", name="审批", exact=True)).to_be_visible()
    card = page.get_by_test_id("approval-card")
    expect(card).to_have_attribute("data-run-id", run["id"])
    expect(card).to_contain_text("“Zhongwen Group”")  # the group's name is data: as typed
    expect(card.get_by_role("heading", name="代理将执行的操作")).to_be_visible()
    expect(card.get_by_role("heading", name="导入将带来的确切变更")).to_be_visible()
    expect(card.locator(".card-meta")).to_contain_text("发起人")
    expect(card.locator(".card-meta")).to_contain_text("已等待")
    expect(card.get_by_test_id("needs-role")).to_contain_text("需要：")
    expect(card.get_by_test_id("diff-group")).to_contain_text("新薪资组")
    expect(card.get_by_test_id("routing")).to_contain_text("审批矩阵：")
    expect(card.get_by_label(re.compile(r"^备注"))).to_be_visible()  # the comment box, labelled in Chinese
    expect(card.get_by_test_id("comment")).to_have_attribute("placeholder", "一句话说明原因")
    expect(card.get_by_test_id("approve")).to_contain_text("批准")
    expect(card.get_by_test_id("diff-group")).not_to_contain_text("New payroll group")
    # approvals.js re-counts the waits every second: still in Chinese after a tick.
    page.wait_for_timeout(1500)
    expect(page.get_by_test_id("queue-item").first).to_contain_text(re.compile(r"到期：23 小时 \d+ 分钟后"))
    expect(card.get_by_test_id("waited")).to_have_text(re.compile(r"^\d+ (秒|分钟)$"))
    no_english(page, "What the agent will do", "Exactly what the import will change", "Requested by",
               "Approval matrix:", "needs:", "added · no existing", "Comment",
               "shown to the requester", "Pending approvals", "due in")
    screenshot(page, "zh-approval-card")

    page.get_by_test_id("history-link").click()
    expect(page.get_by_role("heading", name="审批记录")).to_be_visible()
    expect(page.get_by_role("heading", name="每一次审批尝试")).to_be_visible()
    expect(page.get_by_role("heading", name="时间线事件")).to_be_visible()
    expect(page.get_by_test_id("history-decisions")).to_contain_text("还没有人尝试审批")
    no_english(page, "Approval history", "Every decision attempt", "Timeline events", "Nobody has tried",
               "started by")

    page.get_by_role("link", name=re.compile("返回审批台")).click()
    page.get_by_test_id("matrix-link").click()
    expect(page.get_by_role("heading", name="审批矩阵")).to_be_visible()
    expect(page.get_by_test_id("matrix-read-only")).to_contain_text("只有租户管理员可以修改审批矩阵")
    rule = page.locator("[data-tool=import_template]")
    expect(rule).to_contain_text("可批准")
    expect(rule).to_contain_text("截止时间（小时）")
    expect(rule.get_by_test_id("headcount-limit")).to_have_attribute("placeholder", "不限")
    no_english(page, "Who may approve each step", "Only a tenant admin", "May approve", "Deadline (hours)",
               "Remind before", "Headcount limit", "Monthly gross limit", "Above a limit")
    screenshot(page, "zh-matrix")
