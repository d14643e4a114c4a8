import os

from tests.support import templates_share

# Playwright's sync API runs an event loop in this thread; Django's async-safety
# check would otherwise refuse ORM calls made by fixtures here.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def pytest_configure(config):
    """Migrate and seed one embedded PostgreSQL for the whole session before xdist's workers
    start; each module's Keel serves a copy of it (tests/support.py)."""
    if not hasattr(config, "workerinput"):  # the controller, or a session without workers
        templates_share("embedded")
