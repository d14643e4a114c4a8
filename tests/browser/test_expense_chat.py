"""A person files the expense claim in the chat, in English on a desktop
and in Chinese on a phone. The chat names it an expense claim (never a payroll group), gives
the travel policy's verdict with the rule it cites (900 a night against 750, travel-v2), asks
for the invoice, and files an invoice sent later in the same conversation with that claim."""
import re

import pytest
from playwright.sync_api import expect

from tests.support import logged_in, screenshot

CLAIMS = {
    "en": "Please file an expense claim: lodging in Beijing, 2 nights from 2026-11-16, 1,800 yuan in total",
    "zh": "请帮我报销：北京住宿，2026-11-16起住了2晚，共1800元",
}
# What each language's reader must find in Keel's replies.
SAID = {
    "en": {"named": "expense claim", "verdict": "over the travel policy", "limit": "750.00 CNY a night",
           "ask": "attach the invoice", "later": "Here is the hotel invoice.", "filed": "I've filed the invoice"},
    "zh": {"named": "报销", "verdict": "超出差旅政策", "limit": "限额为每晚 750.00 CNY",
           "ask": "附上发票", "later": "这是酒店发票。", "filed": "已把发票"},
}
NOT_SAID = re.compile(r"(?i)payroll|薪资组|工资组|薪资|工资")
SIZES = {"en": (1366, 860), "zh": (390, 844)}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_expense_claim_is_told_as_an_expense_with_its_verdict_and_takes_a_later_invoice(keel, browser, tmp_path,
                                                                                          lang):
    said = SAID[lang]
    pdf = tmp_path / "hotel-invoice.pdf"
    pdf.write_bytes(b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n")
    context, page = logged_in(browser, keel.base_url, "alice", locale="zh-CN" if lang == "zh" else "en-US",
                              size=SIZES[lang])
    try:
        page.goto(keel.base_url + "/console/")
        page.get_by_role("button", name="新建对话" if lang == "zh" else "New conversation").click()
        expect(page.get_by_test_id("live-indicator")).to_contain_text("●")
        page.get_by_test_id("chat-form").locator("textarea, input[type=text]").first.fill(CLAIMS[lang])
        page.get_by_test_id("send").click()

        keel_says = page.get_by_test_id("keel-message")
        chat = page.get_by_test_id("chat-messages")
        expect(keel_says.first).to_contain_text(said["named"], timeout=20000)
        expect(chat).to_contain_text(said["ask"])
        # The verdict and the rule it cites arrive as news once the policy step has run.
        expect(chat).to_contain_text(said["verdict"], timeout=30000)
        expect(chat).to_contain_text(said["limit"])
        expect(chat).to_contain_text("travel-v2")
        screenshot(page, f"expense-chat-verdict-{lang}")

        # The invoice, sent afterwards in the same conversation, goes with that claim.
        page.get_by_test_id("chat-form").locator("textarea, input[type=text]").first.fill(said["later"])
        page.get_by_test_id("attach-input").set_input_files(str(pdf))
        expect(page.get_by_test_id("attachment-name")).to_have_text("hotel-invoice.pdf")
        page.get_by_test_id("send").click()
        expect(chat).to_contain_text(said["filed"], timeout=20000)
        expect(chat).to_contain_text("hotel-invoice.pdf")
        screenshot(page, f"expense-chat-invoice-later-{lang}")

        page.reload()  # what is stored reads the same once the page is opened again
        expect(chat).to_contain_text(said["filed"])
        replies = " ".join(keel_says.all_inner_texts())
        assert not NOT_SAID.search(replies), replies
        link = page.get_by_test_id("message-link").first
        expect(link).to_be_visible()
        link.click()
        expect(page.get_by_test_id("invoices")).to_contain_text("hotel-invoice.pdf")
    finally:
        context.close()
