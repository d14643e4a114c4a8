from playwright.sync_api import expect

from tests.support import log_in, screenshot


def test_alice_logs_in_and_sees_her_tenants_members(keel, new_page):
    page = new_page()
    log_in(page, keel.base_url, "alice")
    expect(page.get_by_test_id("home-tenant")).to_have_text("Demo Manufacturing Co.")
    members = page.get_by_test_id("members")
    for name in ("Alice Chen", "Bob Li", "Dora Wang", "Ada Zhao"):
        expect(members).to_contain_text(name)
    expect(members).not_to_contain_text("Oscar")
    screenshot(page, "home-alice")


def test_oscar_sees_none_of_demos_members(keel, new_page):
    page = new_page()
    log_in(page, keel.base_url, "oscar")
    expect(page.get_by_test_id("home-tenant")).to_have_text("Other Trading Ltd.")
    members = page.get_by_test_id("members")
    expect(members).to_contain_text("Oscar Sun")
    for name in ("Alice", "Bob", "Dora", "Ada"):
        expect(members).not_to_contain_text(name)


def test_a_wrong_password_is_told_and_stays_logged_out(keel, new_page):
    page = new_page()
    log_in(page, keel.base_url, "alice", password="not-her-password")
    expect(page.get_by_role("alert")).to_contain_text("do not match")
    page.goto(keel.base_url + "/")
    expect(page).to_have_url(keel.base_url + "/login/?next=/")


def test_the_wiring_check_comes_back_live(keel, new_page):
    page = new_page()
    log_in(page, keel.base_url, "dora")
    button = page.get_by_test_id("wiring-check")
    expect(button).to_be_enabled()  # enabled once the websocket is open
    button.click()
    expect(page.get_by_test_id("wiring-result")).to_contain_text("Round trip complete", timeout=15000)


def test_logging_out_ends_the_session(keel, new_page):
    page = new_page()
    log_in(page, keel.base_url, "bob")
    page.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(keel.base_url + "/login/")
    page.goto(keel.base_url + "/")
    expect(page.get_by_role("heading", name="Log in to Keel")).to_be_visible()
