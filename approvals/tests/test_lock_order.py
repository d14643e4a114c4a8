"""The gate, a decision, an expiry or a cancel at the moment a sibling step
finishes. Every writer takes its run's lock first, as a step's completion does (the run,
its nodes and approvals, then the conversation's event numbers): none waits for another
in a circle, so PostgreSQL never rolls an approver's click or an expiry back, and the run
always says what it waits for. The interleavings are forced with pauses at named points,
never left to chance (as in workflows/tests/test_siblings_finishing_at_once.py)."""
import threading
from datetime import timedelta
from unittest import mock

import pytest

from approvals import services
from approvals.models import ApprovalRequest
from approvals.services import approval_decide, approvals_expire_overdue
from config.api import Conflict
from tests.support import wait_until
from timeline.models import Event
from workflows.blueprints import BLUEPRINTS, blueprint_register
from workflows.executor import steps_execute
from workflows import sql
from workflows.models import Node, Run, Transition
from workflows.services import run_cancel, run_start
from tests.concurrency import Actor, joined, waiting_for_a_lock
from tests.helpers import membership, statuses
from workflows.tools import TOOLS, Acceptance, Tool, tool_register

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("demo")]

STALE = {"reason": ""}  # what the gated step's preconditions say at decision time


@pytest.fixture
def siblings():
    """A, then B ∥ C (B a step with something to accept, as a match; C a write an approver
    decides, as a group's creation), then the join D."""
    tool_register(Tool(name="lock_sibling", description="Completes, its result accepted.",
                       input_schema={"type": "object"}, output_schema={"type": "object"},
                       fn=lambda ctx, arguments: {"ok": True},
                       accept=lambda ctx, arguments, output: [Acceptance("the step is done", True)]))
    tool_register(Tool(name="lock_gated", description="A write an approver decides.",
                       input_schema={"type": "object"}, output_schema={"type": "object"},
                       fn=lambda ctx, arguments: {"ok": True}, side_effects=True, read_only=False,
                       needs_approval=True, irreversible="a test's write",
                       preconditions_check=lambda tenant_id, run_id, arguments: STALE["reason"]))
    blueprint_register({"name": "lock_siblings", "title": "Siblings at the gate", "params": {}, "required": [],
                        "start": {"roles": ["business", "approver", "developer", "admin"], "doors": ["runs"]},
                        "nodes": [
        {"key": "a", "tool": "noop", "goal": "A", "depends_on": [], "arguments": {}},
        {"key": "b", "tool": "lock_sibling", "goal": "B", "depends_on": ["a"], "arguments": {},
         "acceptance": ["the step is done"]},
        {"key": "c", "tool": "lock_gated", "goal": "C, approved", "depends_on": ["a"], "arguments": {}},
        {"key": "d", "tool": "noop", "goal": "D, the join", "depends_on": ["b", "c"], "arguments": {}}]})
    yield
    STALE["reason"] = ""
    BLUEPRINTS.pop("lock_siblings")
    for name in ("lock_sibling", "lock_gated"):
        TOOLS.pop(name)


def _started() -> tuple[Run, Node, Node]:
    run = run_start(membership=membership("alice"), blueprint="lock_siblings", params={})
    steps_execute(Node.objects.get(run=run, key="a").id)
    b, c = (Node.objects.get(run=run, key=key) for key in ("b", "c"))
    assert b.status == c.status == "ready"
    return run, b, c


def _waiting() -> tuple[Node, ApprovalRequest]:
    """B ready, C awaiting its approval."""
    run, b, c = _started()
    steps_execute(c.id)
    approval = ApprovalRequest.objects.get(node=c, status="pending")
    return b, approval


def _paused(target, attribute: str, thread: str, *, after: bool = True):
    """Patch `target.attribute` so that in thread `thread` it pauses once, after it has run
    (or before): (the patch, reached, go)."""
    reached, go, real = threading.Event(), threading.Event(), getattr(target, attribute)

    def pause() -> None:
        if threading.current_thread().name == thread and not reached.is_set():
            reached.set()
            assert go.wait(10), f"{thread} was never let go"

    def paused(*args, **kwargs):
        if not after:
            pause()
        result = real(*args, **kwargs)
        if after:
            pause()
        return result

    return mock.patch.object(target, attribute, paused), reached, go


def _while_b_completes(b: Node, name: str, act) -> tuple[Actor, Actor]:
    """B's completion holds the run's lock (its node finished, its events not yet written)
    when `act` begins; B goes on once `act` waits for a lock."""
    patch, b_locked, b_go = _paused(sql, "nodes_finish", "b")
    with patch:
        worker_b = Actor("b", lambda: steps_execute(b.id), patient=True)
        worker_b.start()
        assert b_locked.wait(10), "B never reached its completion"
        other = Actor(name, act)
        other.start()
        wait_until(lambda: waiting_for_a_lock() > 0 or not other.is_alive(), f"{name} waiting for a lock",
                   timeout=10)
        b_go.set()
        joined(worker_b, other)
    assert worker_b.error is None, worker_b.error
    return worker_b, other


def _gapless(run: Run) -> None:
    seqs = list(Event.objects.filter(conversation_id=run.conversation_id).order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))


def test_an_approval_superseded_as_a_sibling_step_completes_answers_409_and_both_are_recorded(siblings):
    """Bob approves C while what C would change has changed: his request supersedes the
    approval (409 preconditions_changed, a fresh plan). B completes at that moment. Taken
    in the other order (the event's number, then the run), Bob's request and B's completion
    each waited for the other and PostgreSQL rolled Bob's back: a 500 for his click."""
    b, approval = _waiting()
    run = approval.run
    STALE["reason"] = "the records changed"
    _, bob = _while_b_completes(b, "bob", lambda: approval_decide(
        membership=membership("bob"), approval_id=approval.id, verdict="approved"))
    assert isinstance(bob.error, Conflict) and bob.error.code == "preconditions_changed", repr(bob.error)
    approval.refresh_from_db()
    assert approval.status == "superseded"
    assert statuses(run) == {"a": "completed", "b": "completed", "c": "ready", "d": "pending"}  # C planned afresh
    assert Transition.objects.filter(node=b, to_status="completed").count() == 1
    _gapless(run)


def test_an_approval_expiring_as_a_sibling_step_completes_is_expired_and_the_run_blocks(siblings):
    """The sweeper's expiry pass meets B's completion: it expires the approval (and blocks C
    and the run) in the same pass, instead of being rolled back until the next sweep."""
    b, approval = _waiting()
    run = approval.run
    _, sweeper = _while_b_completes(b, "sweeper", lambda: approvals_expire_overdue(
        now=approval.deadline + timedelta(seconds=1)))
    assert (sweeper.error, sweeper.result) == (None, 1)
    approval.refresh_from_db()
    assert approval.status == "expired"
    assert statuses(run) == {"a": "completed", "b": "completed", "c": "blocked", "d": "pending"}
    run.refresh_from_db()
    assert run.status == "blocked"
    _gapless(run)


@pytest.mark.parametrize("first", ["the gate", "the sibling"])
def test_a_step_reaching_its_gate_as_its_sibling_completes_leaves_the_run_awaiting_approval(siblings, first):
    """C asks for its approval while B completes. Whichever commits first, the other then
    sees it: the run awaits the approval — never `running` with nothing left to run (the
    gate settled the run without its lock, on a snapshot where B was still running, and
    B's completion saw C still ready)."""
    run, b, c = _started()
    if first == "the gate":
        patch, c_reached, c_go = _paused(services, "run_settle", "c")
        with patch:
            worker_c = Actor("c", lambda: steps_execute(c.id))
            worker_c.start()
            assert c_reached.wait(10), "C never reached its gate"
            worker_b = Actor("b", lambda: steps_execute(b.id))
            worker_b.start()
            wait_until(lambda: waiting_for_a_lock() > 0 or not worker_b.is_alive(),
                       "B's completion done, or waiting for a lock", timeout=10)
            c_go.set()
            joined(worker_b, worker_c)
        assert worker_b.error is None, worker_b.error
    else:  # B's completion holds the run's lock when C's gate begins
        gate_patch, c_reached, c_go = _paused(services, "approval_gate", "c", after=False)
        b_patch, b_locked, b_go = _paused(sql, "nodes_finish", "b")
        with gate_patch, b_patch:
            worker_c = Actor("c", lambda: steps_execute(c.id))
            worker_c.start()
            assert c_reached.wait(10), "C never reached its gate"
            worker_b = Actor("b", lambda: steps_execute(b.id))
            worker_b.start()
            assert b_locked.wait(10), "B never reached its completion"
            c_go.set()
            wait_until(lambda: waiting_for_a_lock() > 0 or not worker_c.is_alive(),
                       "C's gate done, or waiting for a lock", timeout=10)
            b_go.set()
            joined(worker_b, worker_c)
        assert worker_b.error is None, worker_b.error
    assert worker_c.error is None, worker_c.error
    assert statuses(run) == {"a": "completed", "b": "completed", "c": "awaiting_approval", "d": "pending"}
    run.refresh_from_db()
    assert run.status == "awaiting_approval"
    assert ApprovalRequest.objects.filter(node=c, status="pending").count() == 1
    _gapless(run)


def test_a_rejection_and_a_cancel_at_once_are_both_recorded(siblings):
    """Bob rejects C while Alice cancels the run. Bob's decision held the approval and then
    asked for the run; Alice's cancel held the run and asked for the approval (to withdraw
    it): PostgreSQL rolled one of them back — a 500 for one of two people."""
    b, approval = _waiting()
    run = approval.run
    # Bob's decision has won its compare-and-set on the approval when Alice's cancel begins.
    patch, bob_decided, bob_go = _paused(services, "_decision_apply", "bob", after=False)
    with patch:
        bob = Actor("bob", lambda: approval_decide(membership=membership("bob"), approval_id=approval.id,
                                                    verdict="rejected", comment="not this one"))
        bob.start()
        assert bob_decided.wait(10)
        alice = Actor("alice", lambda: run_cancel(membership=membership("alice"), run_id=run.id,
                                                   reason="started by mistake"))
        alice.start()
        wait_until(lambda: waiting_for_a_lock() > 0 or not alice.is_alive(), "Alice's cancel waiting for a lock",
                   timeout=10)
        bob_go.set()
        joined(bob, alice)
    assert (bob.error, alice.error) == (None, None)
    approval.refresh_from_db()
    assert approval.status == "rejected"
    assert statuses(run) == {"a": "completed", "b": "blocked", "c": "blocked", "d": "blocked"}
    run.refresh_from_db()
    assert run.status == "cancelled"
    _gapless(run)
