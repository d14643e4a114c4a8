"""A system of record that says "that key is still in progress" (a dead worker holds
it) makes the step wait and try again — it never fails the step."""
from datetime import timedelta

import pytest
from django.utils import timezone

from config.api import Conflict
from workflows.blueprints import BLUEPRINTS, blueprint_register
from workflows.executor import node_execute
from workflows.models import Node
from workflows.services import run_start
from tests.helpers import drive, membership, no_broker, statuses
from workflows.tools import TOOLS, Tool, tool_register
from tests.demo import demo_ensure

pytestmark = pytest.mark.django_db
CALLS = []


def _busy_once(ctx, arguments):
    CALLS.append(ctx.idempotency_key)
    if len(CALLS) == 1:
        raise Conflict("A request with this Idempotency-Key is still in progress; retry it in a moment.",
                       code="idempotency_in_progress")
    return {"ok": True}


@pytest.fixture(autouse=True)
def busy_blueprint():
    demo_ensure()
    CALLS.clear()
    tool_register(Tool(name="busy_once", description="busy, then fine", input_schema={"type": "object"},
                       output_schema={"type": "object"}, fn=_busy_once, side_effects=True))
    blueprint_register({"name": "busy_chain", "title": "Busy", "params": {}, "required": [],
                        "start": {"roles": ["business", "approver", "developer", "admin"], "doors": ["runs"]},
                        "nodes": [{"key": "write", "tool": "busy_once", "goal": "Write", "depends_on": [],
                                   "arguments": {}}]})
    with no_broker():
        yield
    TOOLS.pop("busy_once")
    BLUEPRINTS.pop("busy_chain")


def test_a_key_still_in_progress_defers_the_step_and_the_retry_completes_it():
    run = drive(run_start(membership=membership("alice"), blueprint="busy_chain", params={}))
    assert statuses(run) == {"write": "in_progress"}  # waiting, not failed
    assert run.status == "running"
    node = Node.objects.get(run=run, key="write")
    # The sweeper hands it out again once the short lease has run out.
    Node.objects.filter(id=node.id).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    node_execute(node.id)
    run.refresh_from_db()
    assert statuses(run) == {"write": "completed"} and run.status == "completed"
    assert CALLS[0] == CALLS[1]  # the same idempotency key: the retry replays or takes over, never writes twice
