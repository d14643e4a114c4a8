"""The unit tests' plain helpers: drive a run without a broker (the unit tests' stand-in for
the workers; integration tests use real `celery worker` processes instead), a logged-in page
client, a payroll setup driven to its approval gate."""
from unittest import mock

from django.contrib.auth.models import User
from django.test import Client

from approvals.models import ApprovalRequest

from tenants.models import Membership
from workflows.inprocess import RUNNABLE, run_drive, runs_plan  # noqa: F401 (RUNNABLE: tests import it here)
from workflows.models import Node, Run
from workflows.services import run_start

PROMPT = "Extract payroll-group requirements as JSON"  # the system prompt of interpret_request
REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"


def membership(username: str) -> Membership:
    return User.objects.get(username=username).membership


def drive(run: Run, max_steps: int = 100) -> Run:
    """Plan the run if no worker has (a chat message leaves that to a worker, unless the
    mode is embedded), then execute ready (and handed-over) nodes until none is left, as
    workers would (workflows.inprocess)."""
    return run_drive(run, max_steps)


def plan_unplanned(runs) -> None:
    """Plan those of `runs` no worker has planned yet, as a worker would."""
    runs_plan(runs)


def no_broker():
    """Patch the dispatch so nothing reaches a broker; `drive` runs the nodes."""
    return mock.patch("workflows.dispatch.app.send_task")


def statuses(run: Run) -> dict[str, str]:
    return dict(Node.objects.filter(run=run, retired_in__isnull=True).values_list("key", "status"))


def client_for(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def run_to_approval(username: str = "alice", group_name: str = "Shanghai Sales") -> Run:
    """Start a payroll setup as `username` and drive it as far as it goes without a decision."""
    run = run_start(membership=membership(username), blueprint="payroll_group_setup",
                    params={"request": REQUEST, "group_name": group_name})
    return drive(run)


def waiting_approval(username: str = "alice", group_name: str = "Shanghai Sales") -> ApprovalRequest:
    """Start a payroll setup as `username` and drive it to its approval gate."""
    run = run_to_approval(username, group_name)
    assert run.status == "awaiting_approval", run.status_reason
    return ApprovalRequest.objects.get(run=run, status="pending")
