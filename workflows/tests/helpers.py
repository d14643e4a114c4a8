"""Drive a run without a broker: the unit tests' stand-in for the workers.
Integration tests use real `celery worker` processes instead."""
from unittest import mock

from django.contrib.auth.models import User
from django.db.models import Q

from tenants.models import Membership
from workflows.executor import HANDED_OVER, steps_execute
from workflows.models import Node, NodeStatus, Plan, Run
from workflows.services import run_plan


def membership(username: str) -> Membership:
    return User.objects.get(username=username).membership


# What a worker would run: ready nodes, and nodes claimed for the worker their
# message goes to (an approval hands its node over, workflows.executor.node_hand_over).
RUNNABLE = Q(status=NodeStatus.READY) | Q(status=NodeStatus.IN_PROGRESS, lease_owner__startswith=HANDED_OVER)


def drive(run: Run, max_steps: int = 100) -> Run:
    """Plan the run if no worker has (a chat message leaves that to a worker, unless the
    mode is embedded), then execute ready (and handed-over) nodes until none is left, as
    workers would."""
    plan_unplanned(Run.objects.filter(id=run.id))
    for _ in range(max_steps):
        ready = list(Node.objects.filter(run=run, retired_in__isnull=True).filter(RUNNABLE)
                     .values_list("id", flat=True))
        if not ready:
            break
        for node_id in ready:
            steps_execute(node_id)  # and the successors it runs in place
    run.refresh_from_db()
    return run


def plan_unplanned(runs) -> None:
    """Plan those of `runs` no worker has planned yet (a chat message leaves that to a
    worker, unless the mode is embedded), as a worker would."""
    for run_id in runs.exclude(id__in=Plan.objects.values("run_id")).values_list("id", flat=True):
        run_plan(run_id)


def no_broker():
    """Patch the dispatch so nothing reaches a broker; `drive` runs the nodes."""
    return mock.patch("workflows.dispatch.app.send_task")


def statuses(run: Run) -> dict[str, str]:
    return dict(Node.objects.filter(run=run, retired_in__isnull=True).values_list("key", "status"))
