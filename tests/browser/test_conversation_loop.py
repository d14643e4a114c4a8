"""In the browser, typed and clicked as a person would: a request for a city with
no template is understood, Keel says so and offers the nearest as buttons; a click answers;
the chat is told who must approve and, after bob approves, that the group exists, with a
link; each message shows who typed it; the attach control is reachable with Tab."""
import json
import re

import pytest
from playwright.sync_api import expect

from tests.fake_openai import FakeOpenAI
from tests.support import Api, keel_start, keel_stop, log_in, logged_in, screenshot


def open_new_conversation(page, base_url):
    page.goto(base_url + "/console/")
    page.get_by_role("button", name="New conversation").click()
    expect(page.get_by_test_id("live-indicator")).to_have_text("● live")
    return page.get_by_test_id("conversation").get_attribute("data-conversation-id")


def send(page, text):
    page.get_by_label("Message").fill(text)
    page.get_by_label("Message").press("Enter")


def test_alice_is_offered_the_nearest_template_clicks_one_and_is_told_the_outcome(keel, new_page):
    page = new_page()
    log_in(page, keel.base_url, "alice")
    conversation_id = open_new_conversation(page, keel.base_url)
    send(page, "hey can u set up pay for the hangzhou engineering folks? monthly pls, call it Hangzhou Eng")
    chat = page.get_by_test_id("chat-messages")
    expect(chat).to_contain_text("no template for Hangzhou", timeout=20000)
    options = page.get_by_test_id("chat-option")
    expect(options.first).to_be_visible(timeout=30000)
    assert 1 <= options.count() <= 3
    label = options.first.inner_text()
    assert "{" not in label
    screenshot(page, "chat-options")
    options.first.click()
    expect(chat).to_contain_text(f"continuing with “{label}”", timeout=20000)
    expect(chat).to_contain_text(re.compile(r"waiting for .*Bob.* to approve it"), timeout=30000)

    bob = Api(keel.base_url, "bob")
    pending = bob.get("/api/v1/approvals/?status=pending")
    rows = pending["results"] if isinstance(pending, dict) else pending
    run_id = page.locator("#run-panel [data-run-id]").get_attribute("data-run-id")
    approval = next(a for a in rows if str(a.get("run")) == run_id or str(a.get("run_id")) == run_id)
    status, body = bob.post(f"/api/v1/approvals/{approval['id']}/approve/", {"comment": "fine"})
    assert status == 200, body
    expect(chat).to_contain_text("Done: the payroll group “Hangzhou Eng” has been created", timeout=30000)
    page.get_by_test_id("message-link").last.click()
    page.wait_for_url("**/payroll/groups/*/")
    expect(page.locator("body")).to_contain_text("Hangzhou Eng")

    # Asked in the chat, answered from the records.
    page.goto(f"{keel.base_url}/conversations/{conversation_id}/")
    send(page, "what's the status?")
    expect(chat).to_contain_text("is complete", timeout=20000)


def test_each_message_shows_who_typed_it_and_the_attach_control_takes_the_keyboard(keel, new_page):
    alice = new_page()
    log_in(alice, keel.base_url, "alice")
    conversation_id = open_new_conversation(alice, keel.base_url)
    send(alice, "What is the housing fund rate for Shanghai employees?")
    chat = alice.get_by_test_id("chat-messages")
    expect(chat).to_contain_text("7%", timeout=20000)

    dora = new_page()
    log_in(dora, keel.base_url, "dora")
    dora.goto(f"{keel.base_url}/conversations/{conversation_id}/")
    send(dora, "谁来审批？")
    expect(dora.get_by_test_id("message-author").last).not_to_have_text("Alice Chen", timeout=20000)
    authors = alice.get_by_test_id("message-author")
    expect(authors).to_have_count(2, timeout=20000)
    assert "dora" in authors.nth(1).inner_text().lower() or "Dora" in authors.nth(1).inner_text()

    alice.get_by_label("Message").focus()
    for _ in range(3):
        alice.keyboard.press("Tab")
        if alice.evaluate("document.activeElement.getAttribute('data-testid')") == "attach-input":
            break
    assert alice.evaluate("document.activeElement.getAttribute('data-testid')") == "attach-input"


def test_an_unknown_employee_in_alices_export_is_proposed_to_bob_and_created_on_approval(keel, new_page, tmp_path):
    from openpyxl import Workbook

    book = Workbook()
    for row in (["工号", "姓名", "部门", "城市", "基本工资"], ["D-0001", "", "", "", ""],
                ["N-8001", "Chen Mo 陈默", "Sales", "Shanghai", "16000"]):
        book.active.append(row)
    export = tmp_path / "hr-export.xlsx"
    book.save(export)

    alice = new_page()
    log_in(alice, keel.base_url, "alice")
    open_new_conversation(alice, keel.base_url)
    alice.get_by_test_id("attach-input").set_input_files(str(export))
    send(alice, "set up a monthly payroll group for our Shanghai sales team with commission, called 'Newcomers'")
    chat = alice.get_by_test_id("chat-messages")
    expect(chat).to_contain_text("not in the payroll system yet", timeout=20000)
    expect(chat).to_contain_text(re.compile(r"waiting for .*Bob.* to approve it"), timeout=30000)

    bob = new_page()
    log_in(bob, keel.base_url, "bob")
    bob.goto(keel.base_url + "/approvals/")
    bob.get_by_test_id("queue-item").filter(has_text="Newcomers").click()
    card = bob.get_by_test_id("approval-card")
    expect(card).to_contain_text("“Newcomers”")
    new = card.get_by_test_id("new-employee")
    expect(new).to_have_count(1)
    expect(new).to_contain_text("new employee")
    expect(new).to_contain_text("Chen Mo 陈默")
    expect(new).to_contain_text("N-8001")
    expect(new).to_contain_text("Sales")
    expect(new).to_contain_text("Shanghai")
    expect(card.get_by_test_id("employees-affected")).to_contain_text("2 employees from the attached list")
    screenshot(bob, "approval-card-new-employee")
    card.get_by_test_id("approve").click()
    expect(bob.get_by_test_id("toast")).to_contain_text("Approved", timeout=15000)  # held with Undo, then sent

    expect(chat).to_contain_text("Done: the payroll group “Newcomers” has been created", timeout=30000)
    alice.get_by_test_id("message-link").last.click()
    alice.wait_for_url("**/payroll/groups/*/")
    body = alice.locator("body")
    expect(body).to_contain_text("Newcomers")
    expect(body).to_contain_text("Sales, Shanghai")
    alice.get_by_role("link", name="Chen Mo 陈默").click()
    alice.wait_for_url("**/payroll/employees/*/")
    expect(alice.locator("body")).to_contain_text("N-8001")
    expect(alice.locator("body")).to_contain_text("Newcomers")


@pytest.fixture(scope="module")
def model_server():
    fake = FakeOpenAI.start()
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def keel_model(model_server):
    """The embedded default on the `openai` backend, answered by the loopback model server."""
    keel = keel_start("embedded", {
        "KEEL_LLM": "openai", "OPENAI_BASE_URL": model_server.base_url, "KEEL_LLM_MODEL": "fake-model",
        "OPENAI_API_KEY": ""})
    yield keel
    keel_stop(keel)


def test_alice_watches_the_models_reply_arrive_token_by_token(keel_model, model_server, new_page):
    answer = ("Hello Alice! I set up payroll groups, import employee lists and answer questions about "
              "your payroll configuration.")
    model_server.script("intent", [json.dumps({"signal": "chat", "reason": "a greeting"})])
    model_server.script("text", [answer])
    model_server.chunk, model_server.delay = 4, 0.06
    page = new_page()
    log_in(page, keel_model.base_url, "alice")
    open_new_conversation(page, keel_model.base_url)
    send(page, "hi there")
    streaming = page.locator(".bubble-keel.streaming")
    expect(streaming).to_be_visible(timeout=20000)
    partial = streaming.inner_text()
    assert "Hello" in partial and len(partial) < len(answer), partial  # seen while it was still arriving
    screenshot(page, "chat-streaming")
    chat = page.get_by_test_id("chat-messages")
    expect(chat).to_contain_text(answer, timeout=20000)
    expect(streaming).to_have_count(0)  # the stored message replaced the stream, once
    expect(chat.get_by_text(answer)).to_have_count(1)


# Counts, on every change of the chat, the Keel bubbles that hold `text`; keeps the most seen at once.
WATCH_REPLIES = """(text) => {
  const list = document.getElementById("chat-messages");
  window.keelMostShown = 0;
  const count = () => {
    const shown = [...list.querySelectorAll(".bubble-keel")].filter(b => b.textContent.includes(text)).length;
    window.keelMostShown = Math.max(window.keelMostShown, shown);
  };
  new MutationObserver(count).observe(list, {childList: true, subtree: true, characterData: true});
  count();
}"""


@pytest.mark.parametrize("lang,size,request_text", [
    ("en-US", (1366, 900), "What is the housing fund rate for Shanghai employees?"),
    ("zh-CN", (390, 844), "上海员工的住房公积金比例是多少？"),
])
def test_a_reply_shows_once_when_its_answer_arrives_after_the_live_events(keel, browser, lang, size, request_text):
    """The live events refresh the chat with Keel's reply before the POST's own answer comes
    back (a slow network, a busy server): the reply is never shown twice, not even for a moment."""
    context, page = logged_in(browser, keel.base_url, "alice", locale=lang, size=size)
    held = []
    try:
        page.goto(keel.base_url + "/console/")
        page.get_by_role("button", name=re.compile("New conversation|新建对话")).first.click()
        expect(page.get_by_test_id("live-indicator")).to_be_visible(timeout=15000)
        # The server answers at once; the browser gets that answer only when the test lets it.
        page.route("**/api/v1/conversations/*/messages/",
                   lambda route: held.append((route, route.fetch())) if route.request.method == "POST"
                   else route.continue_())
        box = page.get_by_label(re.compile("^(Message|消息)"))
        box.fill(request_text)
        box.press("Enter")
        chat = page.get_by_test_id("chat-messages")
        for _ in range(300):
            if held:
                break
            page.wait_for_timeout(100)
        route, answer = held[0]
        reply = answer.json()["reply"]
        mark = reply[:20]
        # The events have shown the reply already.
        expect(chat.locator(".bubble-keel", has_text=mark)).to_have_count(1, timeout=30000)
        page.evaluate(WATCH_REPLIES, mark)
        route.fulfill(response=answer)
        expect(page.get_by_test_id("chat-status")).to_have_text("", timeout=15000)
        expect(chat.locator(".bubble-user.pending")).to_have_count(0, timeout=15000)
        page.wait_for_timeout(500)  # the refresh the answer asks for, to its end
        expect(chat.locator(".bubble-keel", has_text=mark)).to_have_count(1)
        assert page.evaluate("window.keelMostShown") == 1, "the reply was shown twice"
        screenshot(page, f"reply-once-{lang}")
    finally:
        context.close()
