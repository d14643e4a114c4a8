"""Approvals safe under a thumb. At 390 × 844 the next card slid in under the same buttons at once,
Reject was one tap and there was no undo: a second tap rejected the wrong card. Now a decision
waits a few seconds on its card with Undo before it is sent, the decided card stays (shown as
decided) until the person taps Next, and Reject asks first, with room for a reason — on the phone
and the desktop alike, in English and Chinese."""
import pytest
from playwright.sync_api import expect

from tests.browser.test_approvals import approval_of, start_run
from tests.browser.test_approvals_phone import DESKTOP, PHONE, clean_up, pending_ids
from tests.support import Api, screenshot

pytestmark = pytest.mark.long(150)  # seconds; started first (tests/fixtures.py)

WORDS = {
    "en": {"locale": "en-US", "user": "Username", "password": "Password", "log_in": "Log in",
           "approved": "Approved", "rejected": "Rejected", "undone": "Undone: nothing was decided.",
           "held": "Approving in", "ask_reject": "Reject this step? Say why if you like (optional), then confirm.",
           "empty": "Nothing else is waiting for a decision."},
    "zh": {"locale": "zh-CN", "user": "用户名", "password": "密码", "log_in": "登录",
           "approved": "已批准", "rejected": "已拒绝", "undone": "已撤销：没有做出任何决定。",
           "held": "秒后批准", "ask_reject": "拒绝此步骤？可以写下原因（可选），然后确认。",
           "empty": "没有其他等待决定的审批。"},
}
SENT = 15000  # ms: the few seconds a decision is held, and the request after them


def desk(browser, base_url: str, viewport: dict, lang: str):
    words = WORDS[lang]
    context = browser.new_context(viewport=viewport, locale=words["locale"])
    page = context.new_page()
    page.goto(base_url + "/login/")
    page.get_by_label(words["user"]).fill("bob")
    page.get_by_label(words["password"]).fill("keel-demo")
    page.get_by_role("button", name=words["log_in"], exact=True).click()
    expect(page.get_by_test_id("who")).to_be_attached()
    return context, page


def status_of(bob: Api, approval_id: str) -> dict:
    return next(a for a in bob.get("/api/v1/approvals/")["results"] if a["id"] == approval_id)


@pytest.mark.parametrize("size, lang", [("phone", "en"), ("phone", "zh"), ("desktop", "en")])
def test_bob_approves_three_in_a_row_rejects_with_confirmation_and_undoes_one(keel, browser, size, lang):
    words, viewport = WORDS[lang], PHONE if size == "phone" else DESKTOP
    alice, bob = Api(keel.base_url, "alice"), Api(keel.base_url, "bob")
    names = [f"Thumb {size} {lang} {n}" for n in ("One", "Two", "Three", "Four")]
    approvals = [approval_of(bob, start_run(alice, name)["id"]) for name in names]
    context, page = desk(browser, keel.base_url, viewport, lang)
    try:
        page.goto(keel.base_url + f"/approvals/{approvals[0]['id']}/")
        expect(page.locator("#approvals-inbox[data-socket=open]")).to_have_count(1)
        card = page.get_by_test_id("approval-card")

        for i in range(3):  # three in a row, each a tap on Approve then a deliberate Next
            expect(card).to_contain_text(names[i])
            approve = page.get_by_test_id("approve")
            approve.scroll_into_view_if_needed()
            box = approve.bounding_box()
            approve.click()
            expect(page.get_by_test_id("decision-held")).to_contain_text(words["held"])
            assert approvals[i]["id"] in pending_ids(bob)  # held, not sent: nothing is decided yet
            if i == 0:
                screenshot(page, f"approvals-thumb-held-{size}-{lang}")
            # The thumb taps the same spot again: the same card's Approve, disabled — never another card.
            page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            expect(page.get_by_test_id("first-decision")).to_be_visible(timeout=SENT)
            expect(page.get_by_test_id("toast")).to_contain_text(words["approved"])
            expect(card).to_have_attribute("data-approval-id", approvals[i]["id"])  # the decided card stays
            expect(page.get_by_test_id("card-status")).to_have_text(words["approved"])
            expect(page.get_by_test_id("approve")).to_be_disabled()
            page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            page.wait_for_timeout(300)
            expect(card).to_have_attribute("data-approval-id", approvals[i]["id"])
            if i == 0:
                screenshot(page, f"approvals-thumb-decided-{size}-{lang}")
            page.get_by_test_id("next-card").click()
            expect(card).to_have_attribute("data-approval-id", approvals[i + 1]["id"])
        decided = [status_of(bob, a["id"]) for a in approvals[:3]]
        assert [(d["status"], d["decided_by"]) for d in decided] == [("approved", "bob")] * 3
        assert approvals[3]["id"] in pending_ids(bob)

        # The fourth: approved by mistake and undone in time; nothing was decided.
        expect(card).to_contain_text(names[3])
        page.get_by_test_id("approve").click()
        expect(page.get_by_test_id("undo")).to_be_visible()
        page.get_by_test_id("undo").click()
        expect(page.get_by_test_id("decision-confirm")).to_have_text(words["undone"])
        expect(page.get_by_test_id("approve")).to_be_enabled()
        page.wait_for_timeout(6000)  # past the hold: had it been sent, the API would say so now
        assert status_of(bob, approvals[3]["id"])["status"] == "pending"

        # Reject asks first, with room for why; keeping the card decides nothing.
        page.get_by_test_id("reject").click()
        expect(page.get_by_test_id("decision-confirm")).to_have_text(words["ask_reject"])
        expect(page.get_by_test_id("reject-reason")).to_be_visible()
        page.get_by_test_id("keep-card").click()
        expect(page.get_by_test_id("reject-confirm")).to_be_hidden()
        assert status_of(bob, approvals[3]["id"])["status"] == "pending"
        page.get_by_test_id("reject").click()
        page.get_by_test_id("reject-reason").fill("Not this quarter")
        screenshot(page, f"approvals-thumb-reject-{size}-{lang}")
        page.get_by_test_id("confirm-reject").click()
        expect(page.get_by_test_id("first-decision")).to_be_visible(timeout=SENT)
        expect(page.get_by_test_id("toast")).to_contain_text(words["rejected"])
        rejected = status_of(bob, approvals[3]["id"])
        assert (rejected["status"], rejected["comment"]) == ("rejected", "Not this quarter")
        page.get_by_test_id("next-card").click()
        expect(page.get_by_test_id("toast")).to_contain_text(words["empty"])
        expect(card).to_have_attribute("data-approval-id", approvals[3]["id"])
    finally:
        context.close()
        clean_up(bob)
