"""In the browser: a console for everyone. Every page at 390 px (no sideways scroll, the
menu collapses behind a keyboard-usable toggle) and at 1366 × 768 (the message box and Send in
view), no 404s (a favicon), a conversation titled by its first request, the runs grid with its
filters, and the run's waterfall on one time axis with the wait labelled by who was waited on."""
import re

import pytest
from playwright.sync_api import expect

from tests.browser.test_console import approve
from tests.support import Api, log_in, screenshot

pytestmark = pytest.mark.long(70)  # seconds; started first (tests/fixtures.py)

# The words a person reads, in each language the browser may ask for.
WORDS = {
    "en": {"status": "Status", "apply": "Apply", "started_by": "Started by", "from": "From", "to": "To",
           "runs": "Runs", "menu": "Menu", "log_out": "Log out", "no_match": "No run matches the filters",
           "after": "after", "waited": "waited on Bob Li for approval", "console": "Console",
           "username": "Username", "password": "Password", "log_in": "Log in", "live": "● live", "send": "Send",
           "awaiting_input": "Awaiting Input", "errors_only": "errors only", "no_activity": "No activity has frames"},
    "zh-CN": {"status": "状态", "apply": "应用", "started_by": "发起人", "from": "从", "to": "到",
              "runs": "运行记录", "menu": "菜单", "log_out": "退出登录", "no_match": "没有符合筛选条件的运行",
              "after": "晚于", "waited": "等待 Bob Li 审批", "console": "控制台",
              "username": "用户名", "password": "密码", "log_in": "登录", "live": "● 实时", "send": "发送",
              "awaiting_input": "等待输入", "errors_only": "仅错误", "no_activity": "没有活动包含"},
}
LANGS = list(WORDS)
REQUEST = "Set up a monthly payroll group for our Shanghai sales team with commission. Call the group Wuxi Sales."
WIDTHS = {"phone": (390, 844), "laptop": (1366, 768)}


@pytest.fixture(scope="module")
def walked(keel, browser):
    """One run typed into the console by alice and approved by bob: every page has something to show."""
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    log_in(page, keel.base_url, "alice")
    page.goto(keel.base_url + "/console/")
    page.get_by_role("button", name="New conversation").click()
    expect(page.get_by_test_id("live-indicator")).to_have_text("● live")
    conversation_id = page.get_by_test_id("conversation").get_attribute("data-conversation-id")
    page.get_by_label("Message").fill(REQUEST)
    page.get_by_test_id("send").click()
    panel = page.locator("#run-panel [data-run-id]")
    expect(panel).not_to_have_attribute("data-run-id", "", timeout=30000)
    run_id = panel.get_attribute("data-run-id")
    Api(keel.base_url, "alice").wait_for_run(run_id, {"awaiting_approval"})
    approve(keel.base_url, run_id)
    Api(keel.base_url, "alice").wait_for_run(run_id, {"completed"})
    context.close()
    return {"conversation": conversation_id, "run": run_id}


def pages(walked) -> list[tuple[str, str]]:
    c, r = walked["conversation"], walked["run"]
    return [("ada", "/"), ("ada", "/console/"), ("ada", f"/conversations/{c}/"), ("ada", f"/runs/{r}/"),
            ("ada", "/runs/"), ("ada", "/timeline/"), ("ada", f"/conversations/{c}/timeline/"),
            ("dora", f"/conversations/{c}/timeline/?view=developer"), ("bob", "/approvals/"),
            ("ada", "/approvals/matrix/"), ("ada", f"/approvals/runs/{r}/history/"), ("ada", "/payroll/"),
            ("ada", "/payroll/templates/"), ("ada", "/expenses/"), ("ada", "/hiring/"), ("ada", "/metrics/"),
            ("ada", "/password/")]


def log_in_at(browser, keel, username, width, height, lang="en"):
    context = browser.new_context(viewport={"width": width, "height": height}, locale=lang)
    page = context.new_page()
    missing: list[str] = []
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
    words = WORDS.get(lang, WORDS["en"])
    page.goto(keel.base_url + "/login/")
    page.get_by_label(words["username"]).fill(username)
    page.get_by_label(words["password"]).fill("keel-demo")
    page.get_by_role("button", name=words["log_in"], exact=True).click()
    expect(page.get_by_test_id("who")).to_be_attached()
    return context, page, missing


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("size", list(WIDTHS))
def test_every_page_fits_the_screen_and_nothing_is_missing(keel, browser, walked, size, lang):
    width, height = WIDTHS[size]
    sessions = {}
    try:
        overflowing = []
        for username, path in pages(walked):
            if username not in sessions:
                sessions[username] = log_in_at(browser, keel, username, width, height, lang)
            _, page, _missing = sessions[username]
            page.goto(keel.base_url + path)
            page.wait_for_load_state("load")
            expect(page.locator("html")).to_have_attribute("lang", "en" if lang == "en" else "zh-hans")
            expect(page.get_by_test_id("main-menu")).to_contain_text(WORDS[lang]["console"])
            scroll_width = page.evaluate("document.documentElement.scrollWidth")
            if scroll_width > width:
                wide = page.evaluate("""(w) => Array.from(document.querySelectorAll('body *'))
                    .filter(e => e.getBoundingClientRect().right > w + 1 && getComputedStyle(e).position !== 'absolute')
                    .slice(0, 3).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))""",
                                     width)
                overflowing.append((path, scroll_width, wide))
            if size == "phone":
                screenshot(page, f"phone-{lang}" + re.sub(r"[^a-z0-9]+", "-", re.sub(r"\d{6,}", "id", path.lower())).rstrip("-"))
        assert not overflowing, overflowing
        assert not [u for _, _, m in sessions.values() for u in m], "404s: %s" % [m for _, _, m in sessions.values()]
    finally:
        for context, _, _ in sessions.values():
            context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_the_menu_collapses_at_390_and_the_keyboard_opens_it(keel, browser, walked, lang):
    words = WORDS[lang]
    context, page, _ = log_in_at(browser, keel, "alice", 390, 844, lang)
    try:
        page.goto(keel.base_url + "/console/")
        menu, toggle = page.get_by_test_id("main-menu"), page.get_by_test_id("menu-toggle")
        expect(menu).to_be_hidden()
        expect(toggle).to_have_attribute("aria-expanded", "false")
        expect(toggle).to_have_text(words["menu"])
        toggle.focus()
        page.keyboard.press("Enter")
        expect(menu).to_be_visible()
        expect(toggle).to_have_attribute("aria-expanded", "true")
        log_out = page.get_by_role("button", name=words["log_out"])
        expect(log_out).to_be_visible()
        box = log_out.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390
        screenshot(page, f"phone-{lang}-menu-open")
        page.keyboard.press("Escape")
        expect(menu).to_be_hidden()
        page.get_by_test_id("menu-toggle").click()
        page.get_by_test_id("nav-runs").click()
        expect(page).to_have_url(re.compile(r"/runs/$"))
    finally:
        context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_at_1366_by_768_the_message_box_and_send_are_in_view_and_the_title_is_the_request(keel, browser,
                                                                                            walked, lang):
    context, page, _ = log_in_at(browser, keel, "alice", 1366, 768, lang)
    try:
        page.goto(f"{keel.base_url}/conversations/{walked['conversation']}/")
        expect(page.get_by_test_id("live-indicator")).to_have_text(WORDS[lang]["live"])
        expect(page.get_by_test_id("send")).to_have_text(WORDS[lang]["send"])
        screenshot(page, f"conversation-1366x768-{lang}")
        for element in (page.locator("#chat-form textarea"), page.get_by_test_id("send")):
            box = element.bounding_box()
            assert box["y"] >= 0 and box["y"] + box["height"] <= 768, box
        # The conversation, started without a title, is named by its first request.
        expect(page.locator(".chat .panel-head h2")).to_contain_text("Set up a monthly payroll group")
        page.goto(keel.base_url + "/console/")
        expect(page.get_by_test_id("conversations")).to_contain_text("Set up a monthly payroll group")
        expect(page.get_by_test_id("conversations")).not_to_contain_text(f"Conversation {walked['conversation']}")
    finally:
        context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_the_runs_grid_filters_and_the_waterfall_shows_who_was_waited_on(keel, browser, walked, lang):
    w = WORDS[lang]
    context, page, _ = log_in_at(browser, keel, "alice", 1366, 860, lang)
    try:
        page.get_by_role("link", name=w["runs"]).click()
        grid = page.get_by_test_id("run-grid")
        row = grid.locator(f'tr[data-run="{walked["run"]}"]')
        expect(row).to_be_visible()
        expect(row.locator(".grid-cell.status-completed")).to_have_count(6)  # with the trial
        # Coloured by status: completed green; the compensation step that never ran (and never will:
        # the run completed) reads skipped, hatched pale grey, not pending's solid grey.
        expect(row.locator(".grid-cell.status-completed").first).to_have_css("background-color", "rgb(47, 158, 68)")
        expect(row.locator(".grid-cell.status-pending")).to_have_count(0)
        expect(row.locator('.grid-cell.status-skipped[data-status="skipped"]')).to_have_count(1)
        expect(row.locator(".grid-cell.status-skipped")).to_have_css("background-image", re.compile("repeating-linear-gradient"))
        screenshot(page, f"runs-grid-{lang}")
        page.get_by_label(w["status"]).select_option("awaiting_input")
        page.get_by_role("button", name=w["apply"]).click()
        expect(page.get_by_test_id("runs-empty")).to_contain_text(w["no_match"])
        page.get_by_label(w["status"]).select_option("completed")
        page.get_by_label(w["started_by"]).select_option("alice")
        page.get_by_role("button", name=w["apply"]).click()
        expect(row).to_be_visible()
        page.get_by_label(w["from"], exact=True).fill("2001-01-02")
        page.get_by_label(w["to"], exact=True).fill("2001-01-01")
        page.get_by_role("button", name=w["apply"]).click()
        expect(page.get_by_test_id("runs-error")).to_contain_text(w["after"])

        page.goto(f"{keel.base_url}/runs/{walked['run']}/")
        waterfall = page.get_by_test_id("run-waterfall")
        expect(waterfall.get_by_test_id("wait-label")).to_contain_text(w["waited"])
        lanes = waterfall.locator(".wf-lane")
        assert lanes.count() >= 5
        # One axis: every lane's track spans the same pixels, and verify's work starts right of interpret's.
        tracks = [lanes.nth(i).locator(".wf-lane-track").bounding_box() for i in range(lanes.count())]
        assert len({(round(t["x"]), round(t["width"])) for t in tracks}) == 1
        first = waterfall.locator('[data-lane="interpret"] .wf-seg-work').first.bounding_box()
        last = waterfall.locator('[data-lane="verify"] .wf-seg-work').first.bounding_box()
        assert last["x"] > first["x"]
        screenshot(page, f"run-waterfall-{lang}")
    finally:
        context.close()


def test_alice_switches_to_chinese_and_it_follows_her_to_another_browser(keel, browser, walked):
    context, page, _ = log_in_at(browser, keel, "alice", 1366, 860, "en")
    try:
        page.goto(keel.base_url + "/runs/")
        expect(page.get_by_role("heading", name="Runs")).to_be_visible()
        page.get_by_test_id("language-zh-hans").click()
        expect(page).to_have_url(re.compile(r"/runs/$"))
        expect(page.get_by_role("heading", name="运行记录")).to_be_visible()
        expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
        screenshot(page, "language-switched-zh")
    finally:
        context.close()
    # Another browser that asks for English: alice still reads Chinese, bob reads English.
    other, page, _ = log_in_at(browser, keel, "alice", 1366, 860, "en-US")
    bob, bob_page, _ = log_in_at(browser, keel, "bob", 1366, 860, "en-US")
    try:
        page.goto(keel.base_url + "/console/")
        expect(page.get_by_role("heading", name="控制台")).to_be_visible()
        bob_page.goto(keel.base_url + "/console/")
        expect(bob_page.get_by_role("heading", name="Console")).to_be_visible()
        page.get_by_test_id("language-en").click()
        expect(page.get_by_role("heading", name="Console")).to_be_visible()
    finally:
        other.close()
        bob.close()


@pytest.mark.parametrize("lang", LANGS)
def test_a_step_awaiting_input_reads_the_same_everywhere_and_errors_only_hides_the_rest(keel, browser, walked, lang):
    w = WORDS[lang]
    # ada types (alice chose a language in another test, and her choice outranks the browser's).
    context, page, _ = log_in_at(browser, keel, "ada", 1366, 860, lang)
    dora_context, dora, _ = log_in_at(browser, keel, "dora", 1366, 860, lang)
    try:
        page.goto(keel.base_url + "/console/")
        page.locator('[data-testid="new-conversation"] button').click()
        expect(page.get_by_test_id("live-indicator")).to_have_text(w["live"])
        conversation_id = page.get_by_test_id("conversation").get_attribute("data-conversation-id")
        page.locator("#chat-form textarea").fill(
            "hey can u set up pay for the hangzhou engineering folks? monthly pls, call it Hangzhou Eng " + lang)
        page.get_by_test_id("send").click()
        waiting = page.locator('.dag-node[data-status="awaiting_input"]')
        expect(waiting).to_have_count(1, timeout=30000)
        step = waiting.get_attribute("data-node")
        expect(waiting.locator(".dag-status")).to_have_text(w["awaiting_input"])

        dora.goto(f"{keel.base_url}/conversations/{conversation_id}/timeline/?view=developer")
        chip = dora.locator(f'details.activity[data-node="{step}"] > summary .status')
        expect(chip).to_have_text(w["awaiting_input"])
        expect(chip).to_have_class(re.compile("status-awaiting_input"))
        screenshot(dora, f"timeline-awaiting-input-{lang}")
        before = dora.locator("details.activity").count()
        dora.get_by_label(w["errors_only"]).check()
        dora.get_by_test_id("filters").locator("button[type=submit]").click()
        expect(dora).to_have_url(re.compile("errors=1"))
        # Only the Activities with an error frame stay, each showing its frames; the rest are gone,
        # and one line says how many were hidden (no "no frames match" under every header).
        expect(dora.get_by_test_id("hidden-activities").or_(dora.get_by_test_id("timeline-empty"))).to_be_visible()
        shown = dora.locator("details.activity")
        assert shown.count() < before
        for i in range(shown.count()):
            expect(shown.nth(i).locator(".frame-row").first).to_be_visible()
        expect(dora.locator(".waterfall p.muted")).to_have_count(0)
        screenshot(dora, f"timeline-errors-only-{lang}")
    finally:
        context.close()
        dora_context.close()
