"""The tests' shared fixtures, a pytest plugin that the root conftest.py registers: the seeded
test database, each test's language and password hashing, the demo without a broker, the Keel
of real processes an integration or browser module runs against, Chromium for the browser
tests, and the order in which xdist hands out the modules."""
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.test import override_settings
from django.utils import translation

from tests.demo import demo_ensure
from tests.helpers import no_broker
from tests.support import keel_running

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
FAST_HASHERS = django_settings.FAST_PASSWORD_HASHERS


def pytest_collection_modifyitems(items):
    """The longest modules first (`pytestmark = pytest.mark.long(seconds)`, the longest first),
    the others in their order. xdist hands a suite's modules to its workers in this order
    (`--dist loadfile --no-loadscope-reorder`): a long module started last ran alone while the
    other worker had finished."""
    def seconds(item) -> float:
        mark = item.get_closest_marker("long")
        return mark.args[0] if mark else 0
    items.sort(key=lambda item: -seconds(item))


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """The test database, migrated (pytest-django) and seeded once: tests roll back to it."""
    # The demo's passwords hashed as the tests' own (_fast_password_hashing), not at full strength.
    with django_db_blocker.unblock(), override_settings(PASSWORD_HASHERS=FAST_HASHERS):
        demo_ensure()


@pytest.fixture(autouse=True)
def _language_of_the_settings():
    """Each test starts in the settings' language and leaves none active: a test that reads a
    page in Chinese must not make the next one's words Chinese (xdist runs them in any order)."""
    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # PBKDF2 at full strength costs ~0.3 s a user; tests log in a lot.
    settings.PASSWORD_HASHERS = FAST_HASHERS


@pytest.fixture
def demo(db):
    """The demo tenants and users (`seed_demo`) and no broker: `drive` runs the nodes
    (tests/helpers.py). Yields the patched send, to look at what was sent."""
    demo_ensure()
    with no_broker() as send:
        yield send


@pytest.fixture
def builtin_llm(monkeypatch):
    """The builtin (rule-based) model backend, whatever the environment says."""
    monkeypatch.setenv("KEEL_LLM", "builtin")


@pytest.fixture(scope="module")
def keel(request):
    """The Keel of real processes a module's tests share: as the module's mark says
    (`pytestmark = pytest.mark.keel("production", env, workers=2, beat=True)`, the arguments of
    tests/support.py's `keel_running`) or an indirect parameter does (a dict of the same), else
    the embedded default, exactly as `make run` serves it."""
    if hasattr(request, "param"):
        args, kwargs = (), request.param
    else:
        mark = request.node.get_closest_marker("keel")
        args, kwargs = (mark.args, mark.kwargs) if mark else ((), {})
    with keel_running(*args, **kwargs) as keel:
        yield keel


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium package")
    from playwright.sync_api import sync_playwright  # here: a unit test session never needs it

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
