"""The approvals desk on a phone, and the keyboard that asks once before it decides.

At 390×844 the queue was sticky and 1,135 px tall, so it slid over the card; Approve / Reject overlapped
"Recently decided"; and on every width `a` approved at once. Now, on a phone, the card comes first, the
queue folds into one line below it, and the card's actions stick to the bottom of the screen over nothing;
on every width `a`, `r` and `R` ask once ("Approve this step? Press a again or Enter…"), Esc cancels.
A decision is held a few seconds with Undo, and the decided card stays until one moves on
(test_approvals_thumb.py)."""
import pytest
from playwright.sync_api import expect

from tests.browser.test_approvals import approval_of, start_run
from tests.support import ARTIFACTS, Api, screenshot

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1366, "height": 768}
WORDS = {
    "en": {"locale": "en-US", "user": "Username", "password": "Password", "log_in": "Log in",
           "ask_approve": "Approve this step? Press a again or Enter to approve; Esc cancels.",
           "ask_reject": "Reject this step? Press r again or Enter to reject; Esc cancels.",
           "cancelled": "Cancelled: nothing was decided.", "approved": "Approved", "rejected": "Rejected"},
    "zh": {"locale": "zh-CN", "user": "用户名", "password": "密码", "log_in": "登录",
           "ask_approve": "批准此步骤？再按一次 a 或按 Enter 确认批准；按 Esc 取消。",
           "ask_reject": "拒绝此步骤？再按一次 r 或按 Enter 确认拒绝；按 Esc 取消。",
           "cancelled": "已取消：没有做出任何决定。", "approved": "已批准", "rejected": "已拒绝"},
}

# The element at the centre of a node's box, in the viewport: is it the node, or inside it?
ON_TOP = """el => { const r = el.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return !!hit && (hit === el || el.contains(hit)); }"""
IN_VIEW = """el => { const r = el.getBoundingClientRect();
  return r.top >= 0 && r.left >= 0 && r.bottom <= window.innerHeight && r.right <= window.innerWidth; }"""


@pytest.fixture
def bob_at(keel, browser):
    contexts = []

    def open_desk(viewport: dict, lang: str = "en"):
        words = WORDS[lang]
        context = browser.new_context(viewport=viewport, locale=words["locale"])
        contexts.append(context)
        page = context.new_page()
        page.goto(keel.base_url + "/login/")
        page.get_by_label(words["user"]).fill("bob")
        page.get_by_label(words["password"]).fill("keel-demo")
        page.get_by_role("button", name=words["log_in"], exact=True).click()
        expect(page.get_by_test_id("who")).to_be_attached()
        return page

    yield open_desk
    for context in contexts:
        context.close()


def pending_ids(bob: Api) -> set[str]:
    return {a["id"] for a in bob.get("/api/v1/approvals/?status=pending")["results"]}


def clean_up(bob: Api) -> None:
    for approval in bob.get("/api/v1/approvals/?status=pending")["results"]:  # leave an empty queue
        bob.post(f"/api/v1/approvals/{approval['id']}/reject/", {"comment": "test cleanup"})


def asks_once_then_decides(page, bob: Api, approval_id: str, words: dict) -> None:
    """`a` asks; Esc cancels; `a` asks again and a second `a` approves. Nothing is decided before."""
    prompt = page.get_by_test_id("decision-confirm")
    page.keyboard.press("a")
    expect(prompt).to_be_visible()
    expect(prompt).to_have_text(words["ask_approve"])
    expect(page.get_by_test_id("approve")).to_have_class("confirming")
    page.wait_for_timeout(500)  # had `a` decided, the API would say so by now
    assert approval_id in pending_ids(bob)
    expect(page.get_by_test_id("card-status")).not_to_have_text(words["approved"])
    screenshot(page, f"approvals-ask-{page.viewport_size['width']}-{words['locale']}")

    page.keyboard.press("Escape")
    expect(prompt).to_have_text(words["cancelled"])
    expect(page.get_by_test_id("approve")).not_to_have_class("confirming")
    page.keyboard.press("Enter")  # the question is gone: Enter decides nothing now
    page.wait_for_timeout(500)
    assert approval_id in pending_ids(bob)

    page.keyboard.press("a")
    expect(prompt).to_have_text(words["ask_approve"])
    assert approval_id in pending_ids(bob)
    page.keyboard.press("a")
    expect(page.get_by_test_id("first-decision")).to_be_visible(timeout=15000)  # held with Undo, then sent
    expect(page.get_by_test_id("toast")).to_contain_text(words["approved"])
    assert approval_id not in pending_ids(bob)
    decided = next(a for a in bob.get("/api/v1/approvals/")["results"] if a["id"] == approval_id)
    assert (decided["status"], decided["decided_by"]) == ("approved", "bob")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_on_a_phone_the_card_comes_first_and_its_buttons_stay_under_the_thumb(keel, bob_at, lang):
    words = WORDS[lang]
    alice, bob = Api(keel.base_url, "alice"), Api(keel.base_url, "bob")
    runs = [start_run(alice, f"Phone {lang} One"), start_run(alice, f"Phone {lang} Two")]
    decided = approval_of(bob, start_run(alice, f"Phone {lang} Decided")["id"])
    assert bob.post(f"/api/v1/approvals/{decided['id']}/approve/", {"comment": "so that Recently decided shows"})[0] == 200
    try:
        first = approval_of(bob, runs[0]["id"])
        page = bob_at(PHONE, lang)
        page.goto(keel.base_url + f"/approvals/{first['id']}/")
        expect(page.locator("#approvals-inbox[data-socket=open]")).to_have_count(1)
        card, queue = page.get_by_test_id("approval-card"), page.get_by_test_id("approval-queue")
        expect(card).to_contain_text(f"Phone {lang} One")

        # The card comes first; the queue is one folded line below it, with the count, not sticky.
        assert card.bounding_box()["y"] < queue.bounding_box()["y"]
        assert card.bounding_box()["y"] < PHONE["height"] / 2
        expect(page.get_by_test_id("queue-fold")).not_to_have_attribute("open", "")
        expect(page.get_by_test_id("queue-summary")).to_be_visible()
        expect(page.get_by_test_id("queue-summary-count")).to_have_text("2")
        expect(page.get_by_test_id("queue-next")).to_be_visible()
        expect(page.get_by_test_id("queue-item").first).to_be_hidden()
        expect(page.get_by_test_id("recent")).to_be_hidden()
        assert queue.bounding_box()["height"] < 80
        assert queue.evaluate("el => getComputedStyle(el).position") == "static"
        screenshot(page, f"approvals-phone-{lang}")

        # Scrolled into the card (its diff), Approve and Reject are in view, on top of everything.
        page.get_by_test_id("card-rows").scroll_into_view_if_needed()
        page.evaluate("window.scrollBy(0, 200)")
        for name in ("approve", "reject"):
            button = page.get_by_test_id(name)
            assert button.evaluate(IN_VIEW), f"{name} is out of the thumb's reach"
            assert button.evaluate(ON_TOP), f"something covers {name}"
        page.screenshot(path=str(ARTIFACTS
                                 / f"approvals-phone-{lang}-scrolled.png"))

        # At the very end of the page the bar has settled in the card: nothing covers it, and it
        # covers neither "Approval history" nor the queue (with "Recently decided" once opened).
        page.get_by_test_id("queue-summary").click()
        expect(page.get_by_test_id("recent")).to_be_visible()
        page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        for testid in ("approve", "reject", "history-link", "queue-summary"):
            node = page.get_by_test_id(testid)
            node.scroll_into_view_if_needed()
            assert node.evaluate(ON_TOP), f"something covers {testid}"
        for link in page.get_by_test_id("recent").locator("a").all():
            link.scroll_into_view_if_needed()
            assert link.evaluate(ON_TOP), "something covers Recently decided"
        bar = page.get_by_test_id("decision-bar").bounding_box()
        foot = page.locator(".card-foot").bounding_box()
        assert bar["y"] + bar["height"] <= foot["y"] + 1
        screenshot(page, f"approvals-phone-{lang}-open")
        page.get_by_test_id("queue-summary").click()  # fold it again

        # The keyboard asks once, in the page's language.
        page.evaluate("window.scrollTo(0, 0)")
        asks_once_then_decides(page, bob, first["id"], words)
        # The decided card stays until bob taps Next; the next card's buttons are under the thumb.
        page.get_by_test_id("next-card").click()
        expect(card).to_contain_text(f"Phone {lang} Two")
        expect(page.get_by_test_id("queue-summary-count")).to_have_text("1")
        assert page.get_by_test_id("approve").evaluate(IN_VIEW)
        screenshot(page, f"approvals-phone-{lang}-approved")
    finally:
        clean_up(bob)


def test_on_a_desk_the_keys_ask_once_and_a_click_on_approve_asks_nothing(keel, bob_at):
    words = WORDS["en"]
    alice, bob = Api(keel.base_url, "alice"), Api(keel.base_url, "bob")
    runs = [start_run(alice, "Desk Ask One"), start_run(alice, "Desk Ask Two"), start_run(alice, "Desk Ask Three")]
    try:
        one, two, three = (approval_of(bob, r["id"]) for r in runs)
        page = bob_at(DESKTOP)
        page.goto(keel.base_url + f"/approvals/{one['id']}/")
        expect(page.locator("#approvals-inbox[data-socket=open]")).to_have_count(1)
        card, queue = page.get_by_test_id("approval-card"), page.get_by_test_id("approval-queue")
        # Wide: the queue is open, left of the card, and its items are there to pick.
        expect(page.get_by_test_id("queue-summary")).to_be_hidden()
        expect(page.get_by_test_id("queue-item").first).to_be_visible()
        assert queue.bounding_box()["x"] < card.bounding_box()["x"]
        assert abs(queue.bounding_box()["y"] - card.bounding_box()["y"]) < 5

        # A key held down (auto-repeat) asks once and decides nothing.
        page.keyboard.down("a")
        page.keyboard.down("a")  # Playwright sends this one with repeat=true, as a held key does
        page.keyboard.up("a")
        expect(page.get_by_test_id("decision-confirm")).to_have_text(words["ask_approve"])
        page.wait_for_timeout(500)
        assert one["id"] in pending_ids(bob)
        page.keyboard.press("Escape")

        asks_once_then_decides(page, bob, one["id"], words)
        page.keyboard.press("j")
        expect(card).to_contain_text("“Desk Ask Two”")

        # `r` asks, `j` moves on and drops the question; `r`, then Enter, rejects the card one is on.
        prompt = page.get_by_test_id("decision-confirm")
        page.keyboard.press("r")
        expect(prompt).to_have_text(words["ask_reject"])
        page.keyboard.press("j")
        expect(card).to_contain_text("“Desk Ask Three”")
        expect(prompt).to_be_hidden()
        assert {two["id"], three["id"]} <= pending_ids(bob)
        page.keyboard.press("r")
        expect(prompt).to_have_text(words["ask_reject"])
        page.keyboard.press("Enter")
        expect(page.get_by_test_id("first-decision")).to_be_visible(timeout=15000)
        expect(page.get_by_test_id("toast")).to_contain_text(words["rejected"])
        assert three["id"] not in pending_ids(bob) and two["id"] in pending_ids(bob)
        screenshot(page, "approvals-desk-keys")

        # A click on Approve is deliberate already: no question (held a few seconds with Undo).
        page.keyboard.press("j")
        expect(card).to_contain_text("“Desk Ask Two”")
        page.get_by_test_id("approve").click()
        expect(page.get_by_test_id("first-decision")).to_be_visible(timeout=15000)
        expect(page.get_by_test_id("toast")).to_contain_text(words["approved"])
        expect(prompt).to_be_hidden()
        assert two["id"] not in pending_ids(bob)
    finally:
        clean_up(bob)
