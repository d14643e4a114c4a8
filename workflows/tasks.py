"""Celery tasks: thin — fetch by id, call the engine, return quietly if done."""
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import redis
from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.db.models import Q
from django.utils import timezone

from config.celery import on_broker_connect
from config.logs import log_context
from timeline.push import pushes_gathered

from .dispatch import dispatch_messages, messages_send
from .executor import nodes_execute, steps_execute
from .gate import gate
from .liveness import HANDED_OVER, LET_GO_RETRY, worker_name
from .models import RUN_TERMINAL, Node, NodeStatus, Run, RunStatus
from .services import lease_seconds, run_plan

log = logging.getLogger(__name__)
DATABASE_AWAY = (OperationalError, InterfaceError)  # the database unreachable, or lost mid-statement
LEASES_LET_GO = "workflows.tasks.leases_let_go"


@contextmanager
def _database_loss_survived(node_ids: list[int]) -> Iterator[None]:
    """The database went away mid-step: what this thread had claimed waits for no lease to
    run out. Once the database answers again (a task that retries each second), its leases
    are let go and its nodes sent again: a new attempt, whose idempotency key absorbs
    whatever the lost one had written."""
    me = worker_name()
    try:
        yield
    except DATABASE_AWAY as err:
        why = str(err).splitlines()[0] if str(err) else type(err).__name__
        log.warning("nodes %s: the database went away mid-step (%s); their leases (%s) are let go and they are "
                    "sent again once it answers", node_ids, why, me)
        leases_let_go.apply_async(args=[me, node_ids], countdown=0.5)


@shared_task(acks_late=True, reject_on_worker_lost=True)
def node_run(node_id: int, plain: bool = False) -> None:
    """Run a node (`plain`: its sender knew its tool side-effect-free, workflows.dispatch)."""
    with log_context(node=node_id), _database_loss_survived([node_id]), pushes_gathered():
        # A chain run in place commits step after step: its pushes merged; and in place the
        # one ready successor it leaves, no broker hop.
        steps_execute(node_id, plain=plain)


@shared_task(acks_late=True, reject_on_worker_lost=True)
def nodes_run(node_ids: list[int]) -> None:
    """A chunk of a fan-out: claimed together, side-effect-free ones completed together."""
    with _database_loss_survived(node_ids), pushes_gathered():  # one commit per run of the chunk: pushes merged
        for step in nodes_execute(node_ids):
            steps_execute(step)


@shared_task(acks_late=True, reject_on_worker_lost=True, autoretry_for=DATABASE_AWAY, default_retry_delay=1,
             max_retries=600)
def plan_run(run_id: int) -> None:
    """Plan v1 of a run a chat message started (services.run_create); once, whoever asks twice.
    The database away: asked again each second until it answers."""
    with log_context(run=run_id):
        run_plan(run_id)


@shared_task(name=LEASES_LET_GO, bind=True, max_retries=600)
def leases_let_go(self, owner: str, node_ids: list[int]) -> list[int]:
    """Let go of the leases `owner` (a worker thread whose step lost the database) still
    holds, as a transient failure lets go (the takeover is a new attempt), and send those
    nodes and `node_ids` again. Retried each second while the database is away."""
    try:
        held = list(Node.objects.filter(status=NodeStatus.IN_PROGRESS, lease_owner=owner)
                    .values_list("id", flat=True))
        Node.objects.filter(id__in=held, status=NodeStatus.IN_PROGRESS, lease_owner=owner).update(
            lease_owner=f"{LET_GO_RETRY}{owner}"[:120], lease_expires_at=timezone.now())
    except DATABASE_AWAY as err:
        raise self.retry(countdown=1, exc=err)
    nodes = sorted(set(held) | set(node_ids))
    messages_send(dispatch_messages(nodes))
    return nodes


@shared_task
def resume() -> dict:
    """A worker reached the broker again (config.celery.on_broker_connect): hand out at once
    what the database says is owed — ready nodes, handed-over or expired leases, runs with
    no plan — instead of waiting for a dispatch stamp or a lease to age. A Redis that
    restarted without persistence lost every message it held. Sending one twice is
    harmless: a claim is a compare-and-set, a plan is made once."""
    now = timezone.now()
    owed = Q(status=NodeStatus.READY) | Q(status=NodeStatus.IN_PROGRESS, lease_owner__startswith=HANDED_OVER) | Q(
        status=NodeStatus.IN_PROGRESS, lease_expires_at__lt=now)
    # Not a replay's sandbox run: its replay drives it in process (workflows.dispatch.dispatch_held).
    nodes = list(Node.objects.filter(owed, retired_in__isnull=True).exclude(run__status__in=RUN_TERMINAL)
                 .exclude(run__tenant__sandbox=True).order_by("id").values_list("id", flat=True)[:5000])
    Node.objects.filter(id__in=nodes, status=NodeStatus.READY).update(dispatched_at=now)
    if nodes:
        messages_send(dispatch_messages(nodes))
    unplanned = list(Run.objects.filter(status=RunStatus.RUNNING, plans__isnull=True, tenant__sandbox=False)
                     .values_list("id", flat=True)[:500])
    for run_id in unplanned:
        plan_run.delay(run_id)
    if nodes or unplanned:
        log.info("broker reached again: %s nodes and %s runs to plan sent again", len(nodes), len(unplanned))
    return {"nodes": len(nodes), "unplanned": len(unplanned)}


on_broker_connect("workflows.tasks.resume")


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
