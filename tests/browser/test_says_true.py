"""Say only what is true, as alice sees it — in English on a desktop and in Chinese on
a phone: the chat's heading becomes the conversation's title as soon as her first message gives it
one (no reload); an attached list of one reads "1 row"; her rename while the card waits is chipped
a change, the run page calls the run by its new name and the withdrawn card's wait says
withdrawn; a claim waiting for its approver shows the verdict its policy check reached."""
import re

import pytest
from playwright.sync_api import expect

from tests.support import logged_in, screenshot

SAID = {
    "en": {"new": "New conversation", "request": "Set up a monthly payroll group for our Beijing engineering team, "
                                                 "call it BJ True", "change": "actually, call it BJ True 2",
           "name": "BJ True 2", "row": "1 row", "chip": "change", "details": "Run details", "title": "Payroll group "
           "setup: BJ True 2", "withdrawn": "withdrawn", "waiting": "still waiting",
           "claim": "Please file an expense claim: lodging in Beijing, 2 nights from 2026-11-16, 1,800 yuan in total",
           "over": "Over the policy limit", "unchecked": "not checked"},
    "zh": {"new": "新建对话", "request": "给北京研发的同事建个月薪工资组，叫真话一组", "change": "改叫真话二组",
           "name": "真话二组", "row": "1 行", "chip": "更改", "details": "运行详情", "title": "薪资组设置：真话二组",
           "withdrawn": "已撤回", "waiting": "仍在等待",
           "claim": "请帮我报销：北京住宿，2026-11-16起住了2晚，共1800元", "over": "超出政策限额", "unchecked": "未检查"},
}
SIZES = {"en": (1366, 860), "zh": (390, 844)}


def new_conversation(page, base_url: str, said: dict) -> None:
    page.goto(base_url + "/console/")
    page.get_by_role("button", name=said["new"]).click()
    expect(page.get_by_test_id("live-indicator")).to_contain_text("●")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_what_alice_reads_agrees_with_what_happened(keel, browser, tmp_path, lang):
    said = SAID[lang]
    listed = tmp_path / "one.csv"
    # One Keel serves both languages: each list names its own employee, whom its run reserves.
    listed.write_text("employee_no,name\n" + ("D-0001,Zhang Wei 张伟" if lang == "en" else "D-0002,Wang Fang 王芳") + "\n",
                      encoding="utf-8")
    context, page = logged_in(browser, keel.base_url, "alice", locale="zh-CN" if lang == "zh" else "en-US",
                              size=SIZES[lang])
    try:
        new_conversation(page, keel.base_url, said)
        heading = page.get_by_test_id("conversation-title")
        expect(heading).to_have_text(re.compile(r"\d{6,}"))  # no title before the first message
        message = page.get_by_test_id("chat-form").locator("textarea")
        message.fill(said["request"])
        page.get_by_test_id("attach-input").set_input_files(str(listed))
        page.get_by_test_id("send").click()
        expect(heading).to_have_text(said["request"], timeout=20000)  # live: the page was not reloaded
        expect(page).to_have_title(re.compile("^" + re.escape(said["request"])))
        chip = page.get_by_test_id("user-message").locator(".attachment-chip")
        expect(chip).to_contain_text(said["row"])
        assert "rows" not in chip.inner_text()
        expect(page.locator('.dag-node[data-node="import"]')).to_have_attribute("data-status", "awaiting_approval",
                                                                                timeout=30000)
        message.fill(said["change"])
        page.get_by_test_id("send").click()
        expect(page.get_by_test_id("run-panel")).to_contain_text(said["name"], timeout=20000)
        # The reply to her message (run news may arrive after it, chipped as news).
        reply_chip = page.locator('[data-testid="keel-message"] .chip:not([data-intent="news"])').last
        expect(reply_chip).to_have_text(said["chip"], timeout=20000)
        screenshot(page, f"says-true-chat-{lang}")

        page.get_by_role("link", name=re.compile(said["details"])).click()
        expect(page.get_by_test_id("run-panel")).to_contain_text(said["title"], timeout=20000)
        waits = page.locator("ul.waits li")
        expect(waits.filter(has_text=said["withdrawn"])).to_have_count(1, timeout=20000)
        # The fresh card's wait only; the page shows it live when the card is asked after it loaded.
        expect(waits.filter(has_text=said["waiting"])).to_have_count(1, timeout=20000)
        screenshot(page, f"says-true-run-{lang}")

        new_conversation(page, keel.base_url, said)
        page.get_by_test_id("chat-form").locator("textarea").fill(said["claim"])
        page.get_by_test_id("send").click()
        link = page.get_by_test_id("message-link").first
        expect(link).to_be_visible(timeout=30000)
        expect(page.locator('.dag-node[data-node="submit"]')).to_have_attribute("data-status", "awaiting_approval",
                                                                                timeout=30000)
        link.click()
        policy = page.get_by_test_id("policy")
        expect(policy).to_contain_text(said["over"])
        expect(policy).not_to_contain_text(said["unchecked"])
        screenshot(page, f"says-true-claim-{lang}")
    finally:
        context.close()
