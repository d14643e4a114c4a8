"""The demo every unit test starts from: seeded once per test database (the root conftest's
django_db_setup), then each test's transaction rolls back to it. A transactional test
(`django_db(transaction=True)`) empties the tables when it ends: the next test that asks for
the demo seeds it again."""
from django.core.management import call_command

from tenants.models import Tenant


def demo_ensure() -> None:
    if not Tenant.objects.filter(slug="demo").exists():
        call_command("seed_demo", verbosity=0)
