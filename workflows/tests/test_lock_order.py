"""A person's cancel at the moment the run's question is answered, a step is
claimed, or a step's expired lease is taken over (the sweeper sent it again). Every writer takes its
locks in the order a step's completion takes them — the run, its nodes, then the
conversation (an event's number) — so none waits for another in a circle and PostgreSQL
rolls neither back (a 500 for one of the two). The interleavings are forced with pauses
at named points (as in test_siblings_finishing_at_once.py)."""
import threading
from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone

from tests.support import wait_until
from timeline.models import Event
from workflows import executor, sql, transitions
from workflows.blueprints import BLUEPRINTS, blueprint_register
from workflows.executor import steps_execute
from workflows.models import Node, Run
from workflows.services import node_input_answer, run_cancel, run_start
from tests.concurrency import Actor, waiting_for_a_lock
from tests.helpers import membership, statuses
from workflows.tools import TOOLS, NeedsInput, Tool, tool_register

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("demo")]


def _asks_once(ctx, arguments):
    if not arguments.get("answer"):
        raise NeedsInput("That name is taken. What should it be called instead?", [{"label": "B (2)",
                                                                                     "answer": "B (2)"}])
    return {"ok": True}


@pytest.fixture
def asking():
    """A, then B (a step that asks once, as a name's reservation that collides), then C."""
    tool_register(Tool(name="lock_asks", description="Asks once.", input_schema={"type": "object"},
                       output_schema={"type": "object"}, fn=_asks_once, side_effects=True))
    blueprint_register({"name": "lock_asking", "title": "A question", "params": {}, "required": [],
                        "start": {"roles": ["business", "approver", "developer", "admin"], "doors": ["runs"]},
                        "nodes": [
        {"key": "a", "tool": "noop", "goal": "A", "depends_on": [], "arguments": {}},
        {"key": "b", "tool": "lock_asks", "goal": "B, asks", "depends_on": ["a"], "arguments": {}},
        {"key": "c", "tool": "noop", "goal": "C", "depends_on": ["b"], "arguments": {}}]})
    yield
    BLUEPRINTS.pop("lock_asking")
    TOOLS.pop("lock_asks")


@pytest.fixture
def gated_below_its_limit():
    """A, then B: a step of a tool that asks for an approval only above a limit (as an
    expense claim's submission), below it here — its worker claims it on the general path."""
    tool_register(Tool(name="lock_below_limit", description="Approved above a limit only.",
                       input_schema={"type": "object"}, output_schema={"type": "object"},
                       fn=lambda ctx, arguments: {"ok": True}, needs_approval=True,
                       approval_when=lambda tenant_id, arguments: False))
    blueprint_register({"name": "lock_below", "title": "Below the limit", "params": {}, "required": [],
                        "start": {"roles": ["business", "approver", "developer", "admin"], "doors": ["runs"]},
                        "nodes": [
        {"key": "a", "tool": "noop", "goal": "A", "depends_on": [], "arguments": {}},
        {"key": "b", "tool": "lock_below_limit", "goal": "B, below the limit", "depends_on": ["a"],
         "arguments": {}}]})
    yield
    BLUEPRINTS.pop("lock_below")
    TOOLS.pop("lock_below_limit")


def _paused_before(target, attribute: str, thread: str):
    """Patch `target.attribute` so that in thread `thread` it pauses once before it runs:
    (the patch, reached, go)."""
    reached, go, real = threading.Event(), threading.Event(), getattr(target, attribute)

    def paused(*args, **kwargs):
        if threading.current_thread().name == thread and not reached.is_set():
            reached.set()
            assert go.wait(10), f"{thread} was never let go"
        return real(*args, **kwargs)

    return mock.patch.object(target, attribute, paused), reached, go


def _paused_after(target, attribute: str, thread: str):
    """As _paused_before, once it has run."""
    reached, go, real = threading.Event(), threading.Event(), getattr(target, attribute)

    def paused(*args, **kwargs):
        result = real(*args, **kwargs)
        if threading.current_thread().name == thread and not reached.is_set():
            reached.set()
            assert go.wait(10), f"{thread} was never let go"
        return result

    return mock.patch.object(target, attribute, paused), reached, go


def _cancelled_meanwhile(first: Actor, patch, reached, go, run: Run) -> Actor:
    """`first` runs until its pause; Bob's cancel then begins and waits for a lock; `first` goes on."""
    with patch:
        first.start()
        assert reached.wait(10), f"{first.name} never reached its pause"
        bob = Actor("bob", lambda: run_cancel(membership=membership("bob"), run_id=run.id,
                                               reason="started by mistake"))
        bob.start()
        wait_until(lambda: waiting_for_a_lock() > 0 or not bob.is_alive(), "Bob's cancel waiting for a lock",
                   timeout=10)
        go.set()
        for actor in (first, bob):
            actor.join(20)
            assert not actor.is_alive(), f"{actor.name} never finished"
    return bob


def _gapless(run: Run) -> None:
    seqs = list(Event.objects.filter(conversation_id=run.conversation_id).order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))


def test_an_answer_and_a_cancel_at_once_are_both_recorded(asking):
    """Alice answers B's question while Bob cancels the run. Her answer held B and then
    asked for the run (to count the transition); his cancel held the run and then asked
    for B: PostgreSQL rolled one of them back."""
    run = run_start(membership=membership("alice"), blueprint="lock_asking", params={})
    steps_execute(Node.objects.get(run=run, key="a").id)  # and B in place: it asks
    run.refresh_from_db()
    assert run.status == "awaiting_input"
    patch, reached, go = _paused_before(transitions, "_count", "alice")  # B answered, not yet counted
    alice = Actor("alice", lambda: node_input_answer(membership=membership("alice"), run_id=run.id,
                                                      answer="B (2)"))
    bob = _cancelled_meanwhile(alice, patch, reached, go, run)
    assert (alice.error, bob.error) == (None, None)
    assert statuses(run) == {"a": "completed", "b": "blocked", "c": "blocked"}  # answered, then cancelled
    run.refresh_from_db()
    assert run.status == "cancelled"
    assert Event.objects.filter(run=run, type="input.answered").count() == 1
    _gapless(run)


def test_a_lease_taken_over_as_the_run_is_cancelled_is_recorded_and_the_run_cancelled(asking):
    """The sweeper sends A again (its lease ran out) while Bob cancels the run. The takeover
    held A and then asked for the conversation (its event); the cancel held the conversation
    (its own event, written first) and then asked for A: PostgreSQL rolled one back."""
    run = run_start(membership=membership("alice"), blueprint="lock_asking", params={})
    a = Node.objects.get(run=run, key="a")
    Node.objects.filter(id=a.id).update(status="in_progress", lease_owner="elsewhere:4242:7", attempts=1,
                                        lease_expires_at=timezone.now() - timedelta(seconds=1))
    patch, reached, go = _paused_before(executor, "event_append", "worker")  # A taken over, its event not yet
    worker = Actor("worker", lambda: executor.node_execute(a.id))
    bob = _cancelled_meanwhile(worker, patch, reached, go, run)
    assert (worker.error, bob.error) == (None, None)
    assert statuses(run) == {"a": "blocked", "b": "blocked", "c": "blocked"}
    run.refresh_from_db()
    assert run.status == "cancelled"
    assert Event.objects.filter(run=run, type="node.reclaimed").count() == 1
    _gapless(run)


def test_a_step_claimed_as_the_run_is_cancelled_is_recorded_and_the_run_cancelled(gated_below_its_limit):
    """B's worker claims B (a gated tool below its limit: the general path) while Bob cancels
    the run. The claim held B and then asked for the run (to count the transition, at its
    transaction's end); the cancel held the run and then asked for B."""
    run = run_start(membership=membership("alice"), blueprint="lock_below", params={})
    b = Node.objects.get(run=run, key="b")
    assert executor.node_execute(Node.objects.get(run=run, key="a").id) == b.id  # B left to run in place
    b.refresh_from_db()
    assert b.status == "ready"
    patch, reached, go = _paused_after(executor, "node_transitions_recorded", "worker")  # B claimed, not yet counted
    worker = Actor("worker", lambda: steps_execute(b.id))
    bob = _cancelled_meanwhile(worker, patch, reached, go, run)
    assert (worker.error, bob.error) == (None, None)
    run.refresh_from_db()
    assert run.status == "cancelled"
    assert Node.objects.get(id=b.id).status in ("blocked", "completed")  # cancelled, or done before the cancel
    _gapless(run)


def test_a_fan_out_chunk_claimed_as_the_run_is_cancelled_is_recorded_and_the_run_cancelled():
    """A fan-out's chunk is claimed (its nodes in one statement) while Bob cancels the run.
    The claim held the nodes and then asked for the run (to count the transitions, at its
    transaction's end); the cancel held the run and then asked for the nodes: PostgreSQL
    rolled the cancel back, and the run went on to complete."""
    run = run_start(membership=membership("dora"), blueprint="noop_fanout", params={"n": 3})
    chunk = list(Node.objects.filter(run=run, status="ready").values_list("id", flat=True))
    assert len(chunk) == 3
    patch, reached, go = _paused_after(sql, "nodes_claim", "worker")  # the chunk claimed, not yet counted
    worker = Actor("worker", lambda: [steps_execute(step) for step in executor.nodes_execute(chunk)])
    bob = _cancelled_meanwhile(worker, patch, reached, go, run)
    assert (worker.error, bob.error) == (None, None)
    run.refresh_from_db()
    assert run.status == "cancelled"
    assert set(statuses(run).values()) <= {"blocked", "completed"}  # cancelled, or done before the cancel
    assert Event.objects.filter(run=run, type="node.status", data__to="in_progress").count() == 3  # the claim
    _gapless(run)
