"""Issue 16 in the browser: a console for everyone. Every page at 390 px (no sideways scroll, the
menu collapses behind a keyboard-usable toggle) and at 1366 × 768 (the message box and Send in
view), no 404s (a favicon), a conversation titled by its first request, the runs grid with its
filters, and the run's waterfall on one time axis with the wait labelled by who was waited on."""
import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import log_in, screenshot
from tests.browser.test_console import approve
from tests.support import Api

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


def log_in_at(browser, keel, username, width, height):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    missing: list[str] = []
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
    log_in(page, keel.base_url, username)
    expect(page.get_by_test_id("who")).to_be_attached()
    return context, page, missing


@pytest.mark.parametrize("size", list(WIDTHS))
def test_every_page_fits_the_screen_and_nothing_is_missing(keel, browser, walked, size):
    width, height = WIDTHS[size]
    sessions = {}
    try:
        overflowing = []
        for username, path in pages(walked):
            if username not in sessions:
                sessions[username] = log_in_at(browser, keel, username, width, height)
            _, page, missing = sessions[username]
            page.goto(keel.base_url + path)
            page.wait_for_load_state("load")
            scroll_width = page.evaluate("document.documentElement.scrollWidth")
            if scroll_width > width:
                wide = page.evaluate("""(w) => Array.from(document.querySelectorAll('body *'))
                    .filter(e => e.getBoundingClientRect().right > w + 1 && getComputedStyle(e).position !== 'absolute')
                    .slice(0, 3).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))""",
                                     width)
                overflowing.append((path, scroll_width, wide))
            if size == "phone":
                screenshot(page, "phone" + re.sub(r"[^a-z0-9]+", "-", re.sub(r"\d{6,}", "id", path.lower())).rstrip("-"))
        assert not overflowing, overflowing
        assert not [u for _, _, m in sessions.values() for u in m], "404s: %s" % [m for _, _, m in sessions.values()]
    finally:
        for context, _, _ in sessions.values():
            context.close()


def test_the_menu_collapses_at_390_and_the_keyboard_opens_it(keel, browser, walked):
    context, page, _ = log_in_at(browser, keel, "alice", 390, 844)
    try:
        page.goto(keel.base_url + "/console/")
        menu, toggle = page.get_by_test_id("main-menu"), page.get_by_test_id("menu-toggle")
        expect(menu).to_be_hidden()
        expect(toggle).to_have_attribute("aria-expanded", "false")
        toggle.focus()
        page.keyboard.press("Enter")
        expect(menu).to_be_visible()
        expect(toggle).to_have_attribute("aria-expanded", "true")
        log_out = page.get_by_role("button", name="Log out")
        expect(log_out).to_be_visible()
        box = log_out.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390
        screenshot(page, "phone-menu-open")
        page.keyboard.press("Escape")
        expect(menu).to_be_hidden()
        page.get_by_test_id("menu-toggle").click()
        page.get_by_test_id("nav-runs").click()
        expect(page).to_have_url(re.compile(r"/runs/$"))
    finally:
        context.close()


def test_at_1366_by_768_the_message_box_and_send_are_in_view_and_the_title_is_the_request(keel, browser,
                                                                                            walked):
    context, page, _ = log_in_at(browser, keel, "alice", 1366, 768)
    try:
        page.goto(f"{keel.base_url}/conversations/{walked['conversation']}/")
        for element in (page.get_by_label("Message"), page.get_by_test_id("send")):
            box = element.bounding_box()
            assert box["y"] >= 0 and box["y"] + box["height"] <= 768, box
        # The conversation, started without a title, is named by its first request.
        expect(page.locator(".chat .panel-head h2")).to_contain_text("Set up a monthly payroll group")
        page.goto(keel.base_url + "/console/")
        expect(page.get_by_test_id("conversations")).to_contain_text("Set up a monthly payroll group")
        expect(page.get_by_test_id("conversations")).not_to_contain_text(f"Conversation {walked['conversation']}")
    finally:
        context.close()


def test_the_runs_grid_filters_and_the_waterfall_shows_who_was_waited_on(keel, browser, walked):
    context, page, _ = log_in_at(browser, keel, "alice", 1366, 860)
    try:
        page.get_by_role("link", name="Runs").click()
        grid = page.get_by_test_id("run-grid")
        row = grid.locator(f'tr[data-run="{walked["run"]}"]')
        expect(row).to_be_visible()
        expect(row.locator(".grid-cell.status-completed")).to_have_count(5)
        # Coloured by status: completed green, the compensation step that never ran pending grey.
        expect(row.locator(".grid-cell.status-completed").first).to_have_css("background-color", "rgb(47, 158, 68)")
        expect(row.locator(".grid-cell.status-pending").first).to_have_css("background-color", "rgb(138, 148, 166)")
        screenshot(page, "runs-grid")
        page.get_by_label("Status").select_option("awaiting_input")
        page.get_by_role("button", name="Apply").click()
        expect(page.get_by_test_id("runs-empty")).to_contain_text("No run matches the filters")
        page.get_by_label("Status").select_option("completed")
        page.get_by_label("Started by").select_option("alice")
        page.get_by_role("button", name="Apply").click()
        expect(row).to_be_visible()
        page.get_by_label("From", exact=True).fill("2001-01-02")
        page.get_by_label("To", exact=True).fill("2001-01-01")
        page.get_by_role("button", name="Apply").click()
        expect(page.get_by_test_id("runs-error")).to_contain_text("after")

        page.goto(f"{keel.base_url}/runs/{walked['run']}/")
        waterfall = page.get_by_test_id("run-waterfall")
        expect(waterfall.get_by_test_id("wait-label")).to_contain_text("waited on Bob Li for approval")
        lanes = waterfall.locator(".wf-lane")
        assert lanes.count() >= 5
        # One axis: every lane's track spans the same pixels, and verify's work starts right of interpret's.
        tracks = [lanes.nth(i).locator(".wf-lane-track").bounding_box() for i in range(lanes.count())]
        assert len({(round(t["x"]), round(t["width"])) for t in tracks}) == 1
        first = waterfall.locator('[data-lane="interpret"] .wf-seg-work').first.bounding_box()
        last = waterfall.locator('[data-lane="verify"] .wf-seg-work').first.bounding_box()
        assert last["x"] > first["x"]
        screenshot(page, "run-waterfall")
    finally:
        context.close()
