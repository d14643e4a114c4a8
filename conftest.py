import pytest
from django.core.management import call_command

from workflows.tests.helpers import no_broker


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # PBKDF2 at full strength costs ~0.3 s a user; tests log in a lot.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def demo(db):
    """The demo tenants and users (`seed_demo`) and no broker: `drive` runs the nodes
    (workflows/tests/helpers.py). Yields the patched send, to look at what was sent."""
    call_command("seed_demo", verbosity=0)
    with no_broker() as send:
        yield send


@pytest.fixture
def builtin_llm(monkeypatch):
    """The builtin (rule-based) model backend, whatever the environment says."""
    monkeypatch.setenv("KEEL_LLM", "builtin")
