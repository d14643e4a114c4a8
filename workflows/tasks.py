"""Celery tasks: thin — fetch by id, call the engine, return quietly if done."""
import time
from datetime import timedelta

import redis
from celery import shared_task
from django.conf import settings
from django.utils import timezone

from timeline.push import pushes_gathered

from .executor import nodes_execute, steps_execute
from .gate import gate
from .models import RUN_TERMINAL, Node, NodeStatus, Run, RunStatus
from .services import lease_seconds, run_plan


@shared_task(acks_late=True, reject_on_worker_lost=True)
def node_run(node_id: int, plain: bool = False) -> None:
    """Run a node (`plain`: its sender knew its tool side-effect-free, workflows.dispatch)."""
    with pushes_gathered():  # a chain run in place commits step after step: its pushes merged
        steps_execute(node_id, plain=plain)  # and in place the one ready successor it leaves, no broker hop


@shared_task(acks_late=True, reject_on_worker_lost=True)
def nodes_run(node_ids: list[int]) -> None:
    """A chunk of a fan-out: claimed together, side-effect-free ones completed together."""
    with pushes_gathered():  # one commit per run of the chunk: their pushes merged
        for step in nodes_execute(node_ids):
            steps_execute(step)


@shared_task(acks_late=True, reject_on_worker_lost=True)
def plan_run(run_id: int) -> None:
    """Plan v1 of a run a chat message started (services.run_create); once, whoever asks twice."""
    run_plan(run_id)


@shared_task
def sweep() -> dict:
    """Recovery that never waits for the broker's visibility timeout: re-dispatch
    expired leases and ready nodes nobody picked up, expire overdue approvals."""
    now = timezone.now()
    stale = now - timedelta(seconds=lease_seconds())
    expired_leases = list(Node.objects.filter(status=NodeStatus.IN_PROGRESS, lease_expires_at__lt=now,
                                              retired_in__isnull=True)
                          .exclude(run__status__in=RUN_TERMINAL).values_list("id", flat=True)[:500])
    undispatched = []
    for node_id in Node.objects.filter(status=NodeStatus.READY, dispatched_at__lt=stale, retired_in__isnull=True
                                       ).exclude(run__status__in=RUN_TERMINAL).values_list("id", flat=True)[:500]:
        # compare-and-set on dispatched_at so two sweepers do not both send it
        if Node.objects.filter(id=node_id, status=NodeStatus.READY, dispatched_at__lt=stale).update(dispatched_at=now):
            undispatched.append(node_id)
    for node_id in expired_leases + undispatched:
        node_run.delay(node_id)
    # A run whose planning message was lost (its sender died after the commit): plan it now.
    unplanned = list(Run.objects.filter(status=RunStatus.RUNNING, created_at__lt=stale, plans__isnull=True)
                     .values_list("id", flat=True)[:500])
    for run_id in unplanned:
        plan_run.delay(run_id)
    expired = gate().expire_overdue(now=now)
    return {"leases": len(expired_leases), "undispatched": len(undispatched), "unplanned": len(unplanned),
            "approvals_expired": expired}


@shared_task(acks_late=True, reject_on_worker_lost=True)
def baseline_hop(key: str, index: int) -> None:
    """The benchmarks' baseline: a raw Celery task that only notes when it ran."""
    redis.Redis.from_url(settings.REDIS_URL).rpush(key, f"{index}:{time.time()}")
