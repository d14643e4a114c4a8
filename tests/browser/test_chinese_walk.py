"""In a real browser: a person whose browser asks for Chinese walks the pages people
visit — the conversation, the run page, the runs grid, the approvals desk with "Recently decided" and
a run's approval history, payroll, expenses — and meets no English sentence, not even in an error
the API answered and the page shows. Names people typed (groups, cities, the request) and codes
(blueprint keys, tool names, ids) are data: they are kept out of the check by the allowlist below
or because the page marks them (<code>, lang="…", translate="no")."""
import re

from playwright.sync_api import expect

from tests.browser.test_approvals import approval_of
from tests.browser.test_approvals import start_run as start_run_as
from tests.browser.test_chinese_pages import chinese  # noqa: F401 - the fixture
from tests.support import Api, screenshot

# Two English words in a row are a phrase someone would read — unless they are one of these
# names or codes, which read the same in every language.
ALLOWED = {
    "Walk Decided", "Walk Pending", "Walk Claim",  # group names and a claim description typed in this test
    "Alice Chen", "Bob Li", "Ada Zhao", "Dora Wang", "Demo Manufacturing Co",  # the seed's people and tenant
    "Shanghai Sales", "Beijing", "Keel",
    "Open Telemetry",
}
PHRASE = re.compile(r"[A-Za-z][A-Za-z'’\-]*(?:[ ,/]+[A-Za-z][A-Za-z'’\-]*)+")
# A template's code and version ("cn-sales-commission v1") reads the same in every language.
TEMPLATE_CODE = re.compile(r"[a-z]+(?:-[a-z]+){2,}(?: v)?")

# The text a person reads, without what the page marks as data or code.
VISIBLE_TEXT = """() => {
  const skip = el => el.closest('code, pre, kbd, script, style, [translate="no"], [lang]:not(html), .sr-only')
                     || el.closest('[hidden]') || getComputedStyle(el).display === 'none';
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode, el = node.parentElement;
    if (el && !skip(el) && node.textContent.trim()) out.push(node.textContent.trim());
  }
  document.querySelectorAll('[title], [placeholder], [aria-label]').forEach(el => {
    if (skip(el)) return;
    ['title', 'placeholder', 'aria-label'].forEach(a => { if (el.getAttribute(a)) out.push(el.getAttribute(a)); });
  });
  return out;
}"""


REQUEST_ZH = "为我们上海的销售团队建立一个带提成的月度薪资组"


def start_run(api: Api, group_name: str) -> dict:
    """A run a Chinese-speaking user asked for (so Keel's messages about it are in Chinese too)."""
    return start_run_as(api, group_name, REQUEST_ZH)


def claim_file(page, nights: str) -> None:
    form = page.get_by_test_id("claim-form")
    form.get_by_label("城市").fill("Beijing")
    form.get_by_label("开始日期").fill("2026-11-16")
    form.get_by_label("晚数").fill(nights)
    form.get_by_label("总金额").fill("1400")
    form.get_by_role("button", name="创建草稿").click()


def english_left(page) -> list[str]:
    found = []
    for text in page.evaluate(VISIBLE_TEXT):
        for phrase in PHRASE.findall(text):
            words = phrase.strip(" ,/")
            if len(re.findall(r"[A-Za-z]+", words)) < 2 or words in ALLOWED or TEMPLATE_CODE.fullmatch(words):
                continue
            if any(words in allowed or allowed in words and len(words) <= len(allowed) + 2 for allowed in ALLOWED):
                continue
            found.append(f"{words!r} in {text[:120]!r}")
    return found


def no_english_sentence(page, where: str) -> None:
    left = english_left(page)
    assert not left, f"{where} ({page.url}) still reads English:\n" + "\n".join(left)


def test_a_chinese_reader_walks_the_console_and_reads_no_english_sentence(keel, chinese):  # noqa: F811
    alice, bob, ada = (Api(keel.base_url, name) for name in ("alice", "bob", "ada"))
    decided = start_run(alice, "Walk Decided")
    status, _ = bob.post(f"/api/v1/approvals/{approval_of(bob, decided['id'])['id']}/approve/", {"comment": ""})
    assert status == 200
    pending = start_run(alice, "Walk Pending")
    finished = alice.wait_for_run(decided["id"], {"completed"})

    page = chinese("alice")
    page.goto(keel.base_url + f"/conversations/{finished['conversation']}/")
    expect(page.get_by_test_id("run-status")).to_have_text("已完成")
    no_english_sentence(page, "the conversation")
    screenshot(page, "zh-walk-conversation")

    page.goto(keel.base_url + f"/runs/{finished['id']}/")
    expect(page.locator("main")).to_contain_text("将模板导入新薪资组")  # a step's goal, in Chinese
    no_english_sentence(page, "the run page")
    screenshot(page, "zh-walk-run")

    page.goto(keel.base_url + "/runs/")
    expect(page.locator("main")).to_contain_text("薪资组设置")  # the blueprint's title
    no_english_sentence(page, "the runs grid")

    desk = chinese("bob")
    desk.goto(keel.base_url + "/approvals/")
    expect(desk.get_by_test_id("approval-card")).to_have_attribute("data-run-id", pending["id"])
    expect(desk.get_by_test_id("recent-status").first).to_have_text("已批准")
    expect(desk.get_by_test_id("routing")).to_contain_text("审批矩阵：")
    no_english_sentence(desk, "the approvals desk")
    # Ada decides the pending one meanwhile; bob's "a" is refused — by the API (409) if his card has
    # not caught up yet, else by the page — in Chinese either way.
    assert ada.post(f"/api/v1/approvals/{approval_of(ada, pending['id'])['id']}/reject/",
                    {"comment": "walk"})[0] == 200
    desk.keyboard.press("a")
    toast = desk.get_by_test_id("toast")
    expect(toast).to_be_visible()
    expect(toast).to_contain_text("此审批")
    no_english_sentence(desk, "the approvals desk after a refused decision")
    screenshot(desk, "zh-walk-approvals")

    desk.goto(keel.base_url + f"/approvals/runs/{finished['id']}/history/")
    no_english_sentence(desk, "the approval history")

    page.goto(keel.base_url + "/payroll/")
    no_english_sentence(page, "payroll")
    group = page.locator("main a[href^='/payroll/groups/']").first
    if group.count():
        group.click()
        page.wait_for_url(re.compile(r"/payroll/groups/\d+/"))  # read the group's page, not the one it leaves
        no_english_sentence(page, "a payroll group")

    # Bob files a lodging claim for no night: the service refuses it, and the page says why in Chinese.
    desk.goto(keel.base_url + "/expenses/")
    claim_file(desk, "0")
    expect(desk.locator("main")).to_contain_text("住宿申请需要 1 到")
    no_english_sentence(desk, "the expense claims with a refusal")
    screenshot(desk, "zh-walk-claim-refused")
    claim_file(desk, "2")
    expect(desk).to_have_url(re.compile(r"/expenses/claims/\d+/$"))
    desk.get_by_test_id("submit-claim").click()
    expect(desk.get_by_test_id("claim-history")).to_contain_text("已提交")
    no_english_sentence(desk, "a submitted expense claim")
    desk.goto(keel.base_url + "/expenses/")
    no_english_sentence(desk, "the expense claims")
