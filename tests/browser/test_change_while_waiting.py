"""In a real browser: alice's setup waits on bob's desk; she types a new name
in her chat; bob's card is withdrawn live and a fresh card with the new name takes its place;
after bob approves, the group carries the name alice said. In English on a desktop and in
Chinese on a phone."""
import re

import pytest
from playwright.sync_api import expect

from tests.support import logged_in, screenshot

DIALOGUES = {
    "en": ("Set up a monthly payroll group for our Beijing engineering team, call it BJ Eng",
           "actually, call it BJ Eng 2", "BJ Eng 2"),
    "zh": ("给北京研发的同事建个月薪工资组，叫研发一组", "改叫研发二组", "研发二组"),
}
SIZES = {"en": (1366, 860), "zh": (390, 844)}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_name_alice_says_while_bob_looks_at_the_card_reaches_him_as_a_fresh_card(keel, browser, lang):
    request, change, name = DIALOGUES[lang]
    locale = "zh-CN" if lang == "zh" else "en-US"
    alice_context, alice = logged_in(browser, keel.base_url, "alice", locale=locale, size=SIZES[lang])
    bob_context, bob = logged_in(browser, keel.base_url, "bob", locale=locale, size=SIZES[lang])
    try:
        alice.goto(keel.base_url + "/console/")
        alice.get_by_role("button", name="新建对话" if lang == "zh" else "New conversation").click()
        expect(alice.get_by_test_id("live-indicator")).to_contain_text("●")
        message = alice.get_by_test_id("chat-form").locator("textarea")
        message.fill(request)
        alice.get_by_test_id("send").click()
        expect(alice.locator('.dag-node[data-node="import"]')).to_have_attribute("data-status", "awaiting_approval",
                                                                                 timeout=30000)
        bob.goto(keel.base_url + "/approvals/")
        card = bob.get_by_test_id("approval-card")
        old_name = "BJ Eng" if lang == "en" else "研发一组"
        expect(card).to_contain_text(f"“{old_name}”")
        expect(bob.locator("#approvals-inbox[data-socket=open]")).to_have_count(1)

        message.fill(change)
        alice.get_by_test_id("send").click()
        expect(alice.get_by_test_id("chat-messages")).to_contain_text(name, timeout=20000)
        # Bob, without a reload: the card he looks at says it was withdrawn, and the fresh one,
        # naming what alice said, arrives in his queue.
        expect(bob.get_by_test_id("card-withdrawn")).to_be_visible(timeout=20000)
        fresh = bob.get_by_test_id("queue-item").filter(has_text=name)
        expect(fresh).to_have_count(1, timeout=30000)
        expect(bob.get_by_test_id("queue-item")).to_have_count(1)
        if lang == "zh":
            bob.locator("details.queue-fold summary, [data-testid=queue-fold] summary").first.click()
        fresh.click()
        expect(card).to_contain_text(f"“{name}”")
        screenshot(bob, f"change-while-waiting-card-{lang}")
        expect(alice.get_by_test_id("run-panel")).to_contain_text(name)
        screenshot(alice, f"change-while-waiting-chat-{lang}")
        assert re.search(r"v2", alice.get_by_test_id("run-meta").inner_text())  # a new plan version
        card.get_by_test_id("approve").click()
        expect(alice.get_by_test_id("run-status")).to_have_text("已完成" if lang == "zh" else "Completed",
                                                               timeout=30000)
        expect(alice.get_by_test_id("chat-messages")).to_contain_text(f"“{name}”")
    finally:
        alice_context.close()
        bob_context.close()
