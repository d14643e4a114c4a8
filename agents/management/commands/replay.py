"""Replay a recorded run in a sandbox and compare it with the record (see agents/replay.py).

    python manage.py replay RUN_ID [--as USERNAME] [--keep-sandbox]

Prints {replay_id, identical, differences, …} as JSON; exits 1 when the replay differs."""
import json

from django.core.management.base import BaseCommand, CommandError

from agents.replay import replay_run
from tenants.models import Membership, Role
from workflows.models import Run


class Command(BaseCommand):
    help = "Replay a recorded run in a sandbox against its recorded model answers and decisions."

    def add_arguments(self, parser):
        parser.add_argument("run_id", type=int)
        parser.add_argument("--as", dest="username", default="",
                            help="a developer or admin of the run's tenant (default: its first developer)")
        parser.add_argument("--keep-sandbox", action="store_true",
                            help="keep the sandbox tenant to look at (the periodic cleanup deletes it later)")

    def handle(self, *args, run_id: int, username: str, keep_sandbox: bool = False, **options):
        run = Run.objects.filter(id=run_id).first()
        if run is None:
            raise CommandError(f"No run {run_id}.")
        members = Membership.objects.filter(tenant_id=run.tenant_id, role__in=[Role.DEVELOPER, Role.ADMIN])
        membership = (members.filter(user__username=username) if username else members.order_by("role")).first()
        if membership is None:
            raise CommandError("No developer or admin of the run's tenant" + (f" named {username}." if username
                                                                               else "."))
        result = replay_run(membership=membership, run_id=run_id, keep_sandbox=keep_sandbox)
        self.stdout.write(json.dumps(result, ensure_ascii=False, indent=2))
        if not result["identical"]:
            raise SystemExit(1)
