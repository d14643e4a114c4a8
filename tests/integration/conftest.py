from tests.support import seeded_share


def pytest_configure(config):
    """Migrate and seed one database for the whole session before xdist's workers start; each
    production Keel a test starts serves a copy of it (tests/support.py)."""
    if not hasattr(config, "workerinput"):  # the controller, or a session without workers
        seeded_share("production")
