"""Drive a run without a broker: the unit tests' stand-in for the workers.
Integration tests use real `celery worker` processes instead."""
from unittest import mock

from django.contrib.auth.models import User

from tenants.models import Membership
from workflows.inprocess import RUNNABLE, run_drive, runs_plan  # noqa: F401 (RUNNABLE: tests import it here)
from workflows.models import Node, Run


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
