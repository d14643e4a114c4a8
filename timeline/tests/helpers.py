"""Shared set-up for the timeline tests: the demo seed, a run driven without a broker."""
from django.test import Client

from workflows.services import run_start
from tests.helpers import drive, membership

PROMPT = "Extract payroll-group requirements as JSON"  # the system prompt of interpret_request
REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"


def client_for(username: str) -> Client:
    from django.contrib.auth.models import User

    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def run_to_approval(username: str = "alice"):
    run = run_start(membership=membership(username), blueprint="payroll_group_setup",
                    params={"request": REQUEST, "group_name": "Shanghai Sales"})
    return drive(run)
