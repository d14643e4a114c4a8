"""At every width: a conversation longer than the screen opens at its newest
message (the news people come back for), not at the oldest; English and Chinese."""
import pytest
from playwright.sync_api import expect

from tests.support import Api, logged_in, screenshot

SIZES = {"phone": (390, 844), "laptop": (1366, 768), "desktop": (1920, 1080)}


@pytest.fixture(scope="module")
def long_conversation(keel):
    alice = Api(keel.base_url, "alice")
    status, conversation = alice.post("/api/v1/conversations/", {"title": "A long chat"})
    assert status == 201, conversation
    for n in range(9):
        status, reply = alice.post(f"/api/v1/conversations/{conversation['id']}/messages/",
                                   {"text": f"hello, this is message {n + 1}"})
        assert status == 201, reply
    status, last = alice.post(f"/api/v1/conversations/{conversation['id']}/messages/", {"text": "thanks!"})
    assert status == 201, last
    return conversation["id"]


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("lang", ["en-US", "zh-CN"])
def test_the_chat_opens_at_its_newest_message(keel, browser, long_conversation, size, lang):
    context, page = logged_in(browser, keel.base_url, "alice", locale=lang, size=SIZES[size])
    try:
        page.goto(f"{keel.base_url}/conversations/{long_conversation}/")
        messages = page.get_by_test_id("chat-messages")
        expect(page.get_by_test_id("user-message").last).to_contain_text("thanks!")
        assert page.evaluate("(el) => el.scrollHeight > el.clientHeight", messages.element_handle()), \
            "the chat is longer than its box"
        expect(page.get_by_test_id("keel-message").last).to_be_in_viewport()
        expect(page.get_by_test_id("user-message").first).not_to_be_in_viewport()
        screenshot(page, f"chat-opens-at-newest-{lang}-{size}")
    finally:
        context.close()
