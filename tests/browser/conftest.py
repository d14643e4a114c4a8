import os
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from tests.support import templates_share

# Playwright's sync API runs an event loop in this thread; Django's async-safety
# check would otherwise refuse ORM calls made by fixtures here.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"


def pytest_configure(config):
    """Migrate and seed one embedded PostgreSQL for the whole session before xdist's workers
    start; each module's Keel serves a copy of it (tests/support.py)."""
    if not hasattr(config, "workerinput"):  # the controller, or a session without workers
        templates_share("embedded")


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium package")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        # Every page asks for reduced motion (keel.css then pulses nothing): an animated status
        # keeps headless Chromium drawing ~60 frames a second for as long as its page is open.
        new_context = browser.new_context
        browser.new_context = lambda **options: new_context(**{"reduced_motion": "reduce", **options})
        yield browser
        browser.close()


@pytest.fixture
def new_page(browser):
    contexts = []

    def make():
        context = browser.new_context(viewport={"width": 1366, "height": 860})
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


def log_in(page, base_url: str, username: str, password: str = "keel-demo") -> None:
    page.goto(base_url + "/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


def screenshot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def logged_in(browser, base_url: str, username: str, *, locale: str = "en-US", size: tuple[int, int] = (1366, 860),
              password: str = "keel-demo"):
    """A new browser context in `locale` at `size`, logged in through the login form (by its
    fields' names, so in either language). Returns (context, page); the caller closes the context."""
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, locale=locale)
    page = context.new_page()
    page.goto(base_url + "/login/")
    page.locator("input[name=username]").fill(username)
    page.locator("input[name=password]").fill(password)
    page.locator("input[name=password]").press("Enter")
    page.wait_for_url(lambda url: "/login/" not in url)
    return context, page
