"""Seed the demo tenants and users. Safe to run any number of times."""
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from tenants.models import Membership, Role, Tenant

DEMO_PASSWORD = "keel-demo"  # demo only: README says so

TENANTS = {
    "demo": ("Demo Manufacturing Co.", [
        ("alice", "Alice", "Chen", Role.BUSINESS),
        ("bob", "Bob", "Li", Role.APPROVER),
        ("dora", "Dora", "Wang", Role.DEVELOPER),
        ("ada", "Ada", "Zhao", Role.ADMIN),
    ]),
    "other": ("Other Trading Ltd.", [
        ("oscar", "Oscar", "Sun", Role.BUSINESS),
    ]),
}


class Command(BaseCommand):
    help = "Create the demo tenants (demo, other) and users (password keel-demo). Idempotent."

    @transaction.atomic
    def handle(self, *args, **options):
        User = get_user_model()
        for slug, (name, people) in TENANTS.items():
            tenant, _ = Tenant.objects.update_or_create(slug=slug, defaults={"name": name})
            for username, first, last, role in people:
                user, created = User.objects.get_or_create(
                    username=username,
                    defaults={"first_name": first, "last_name": last, "email": f"{username}@{slug}.example"},
                )
                if created:
                    user.set_password(DEMO_PASSWORD)
                    user.save(update_fields=["password"])
                Membership.objects.update_or_create(user=user, defaults={"tenant": tenant, "role": role})
        # Other apps add their demo data through this hook, in dependency order.
        from django.apps import apps

        for app_config in apps.get_app_configs():
            seed = getattr(app_config, "seed_demo", None)
            if callable(seed):
                seed()
        self.stdout.write(self.style.SUCCESS("Demo seeded: tenants demo and other; password keel-demo."))
