"""A broker that refuses the publish after a commit: the write is answered as committed and
logged as what it is; a reconnect hands out again what the database says is owed; a step
that lost the database lets go of its lease once it answers again."""
import logging
from unittest import mock

import pytest
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerDown
from rest_framework.test import APIClient

from approvals.models import ApprovalRequest
from config.celery import app
from workflows.dispatch import NODE_RUN, PLAN_RUN
from workflows.liveness import HANDED_OVER, LET_GO_RETRY
from workflows.models import Node, NodeStatus, Run
from workflows.tasks import leases_let_go, resume
from workflows.tests.helpers import drive, membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]
REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"


def api(username: str) -> APIClient:
    client = APIClient()
    client.force_authenticate(membership(username).user)
    return client


def broker_down(*args, **kwargs):
    raise BrokerDown("Error 111 connecting to 127.0.0.1:6379. Connection refused.")


def sent_nodes(send: mock.Mock) -> set[int]:
    return {c.kwargs["args"][0] for c in send.call_args_list if c.args[0] == NODE_RUN}


def test_an_approval_while_the_broker_is_down_is_answered_approved_and_resumed_on_reconnect(
        django_capture_on_commit_callbacks, caplog):
    with mock.patch.object(app, "send_task", side_effect=broker_down), \
            django_capture_on_commit_callbacks(execute=True), caplog.at_level(logging.WARNING):
        started = api("alice").post("/api/v1/runs/", {"blueprint": "payroll_group_setup", "params": {
            "request": REQUEST, "group_name": "Broker Down Sales"}}, format="json")
        assert started.status_code == 201
        run = drive(Run.objects.get(id=int(started.json()["id"])))
        approval = ApprovalRequest.objects.get(run=run, status="pending")
        decided = api("bob").post(f"/api/v1/approvals/{approval.id}/approve/", {"comment": "ok"}, format="json")
    assert decided.status_code == 200 and decided.json()["status"] == "approved"
    approval.refresh_from_db()
    assert approval.status == "approved"
    handed = Node.objects.get(run=run, status=NodeStatus.IN_PROGRESS, lease_owner__startswith=HANDED_OVER)
    said = [r.getMessage() for r in caplog.records]
    assert any(f"nodes {handed.id} ready: committed; its publish is pending (OperationalError" in s for s in said)
    assert not any("not recorded" in s for s in said)
    # The broker is back: a worker's reconnect sends the handed-over step again.
    with mock.patch.object(app, "send_task") as send:
        resume()
    assert handed.id in sent_nodes(send)


def test_resume_sends_what_a_start_during_the_outage_owes(django_capture_on_commit_callbacks):
    with mock.patch.object(app, "send_task", side_effect=broker_down), django_capture_on_commit_callbacks(execute=True):
        started = api("alice").post("/api/v1/runs/", {"blueprint": "payroll_group_setup", "params": {
            "request": REQUEST, "group_name": "Unplanned Sales"}}, format="json")
    assert started.status_code == 201
    run = Run.objects.get(id=int(started.json()["id"]))
    ready = set(Node.objects.filter(run=run, status=NodeStatus.READY).values_list("id", flat=True))
    owed_plan = not run.plans.exists()
    assert ready or owed_plan  # the start left work the lost message was for
    with mock.patch.object(app, "send_task") as send:
        resume()
    planned = [c.kwargs["args"][0] for c in send.call_args_list if c.args[0] == PLAN_RUN]
    assert (run.id in planned) == owed_plan and ready <= sent_nodes(send)


def test_a_step_that_lost_the_database_lets_go_of_its_lease_and_is_sent_again():
    started = api("alice").post("/api/v1/runs/", {"blueprint": "payroll_group_setup", "params": {
        "request": REQUEST, "group_name": "Lost Database Sales"}}, format="json")
    run = drive(Run.objects.get(id=int(started.json()["id"])))
    node = Node.objects.filter(run=run, status=NodeStatus.AWAITING_APPROVAL).get()
    owner = "host:1:2"
    Node.objects.filter(id=node.id).update(status=NodeStatus.IN_PROGRESS, lease_owner=owner,
                                           lease_expires_at=timezone.now() + timezone.timedelta(seconds=30))
    with mock.patch.object(app, "send_task") as send:
        assert leases_let_go.run(owner, []) == [node.id]
    node.refresh_from_db()
    assert node.lease_owner == f"{LET_GO_RETRY}{owner}" and node.lease_expires_at <= timezone.now()
    assert sent_nodes(send) == {node.id}
