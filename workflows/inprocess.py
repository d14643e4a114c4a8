"""Runs driven in this process, as workers would drive them (plan what no worker planned,
then execute ready and handed-over steps until none is left): for whatever measures the
system's behaviour without a broker — `manage.py eval_dialogues`, and the unit tests' `drive`.
Production runs are driven by Celery workers (workflows.tasks), never by this."""
from __future__ import annotations

from django.db.models import Q

from .executor import steps_execute
from .liveness import HANDED_OVER
from .models import Node, NodeStatus, Plan, Run
from .services import run_plan

# What a worker would run: ready nodes, and nodes claimed for the worker their message goes
# to (an approval hands its node over, workflows.executor.node_hand_over).
RUNNABLE = Q(status=NodeStatus.READY) | Q(status=NodeStatus.IN_PROGRESS, lease_owner__startswith=HANDED_OVER)


def runs_plan(runs) -> None:
    """Plan those of `runs` (a queryset) no worker has planned yet."""
    for run_id in runs.exclude(id__in=Plan.objects.values("run_id")).values_list("id", flat=True):
        run_plan(run_id)


def run_drive(run: Run, max_steps: int = 100) -> Run:
    """Plan the run if need be, then execute its runnable steps until none is left."""
    runs_plan(Run.objects.filter(id=run.id))
    for _ in range(max_steps):
        ready = list(Node.objects.filter(run=run, retired_in__isnull=True).filter(RUNNABLE)
                     .values_list("id", flat=True))
        if not ready:
            break
        for node_id in ready:
            steps_execute(node_id)  # and the successors it runs in place
    run.refresh_from_db()
    return run


def conversation_runs_drive(conversation_id: int) -> None:
    """Every run of the conversation, oldest first (a cancelled run's undo too)."""
    for run in Run.objects.filter(conversation_id=conversation_id).order_by("created_at", "id"):
        run_drive(run)
