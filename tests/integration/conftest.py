from django.conf import settings

from tests.support import migrated_template_use, templates_share


def pytest_configure(config):
    """Migrate once for the whole session, before xdist's workers start: each Keel a test
    starts serves a copy of a seeded template (tests/support.py), and pytest-django's own
    test database is a copy of the migrated one."""
    if not hasattr(config, "workerinput"):  # the controller, or a session without workers
        templates_share("migrated", "production", "embedded")
    migrated_template_use(settings)
