"""A parallel step's result must never be dropped while its worker lives.

Two sibling branches of one run finish at the same moment: B completes while C stops
for input (or fails). Both outcomes must be recorded, whatever the interleaving; the
run then says what it waits for. The interleavings are forced with pauses at named
points, never left to chance."""
import threading
from unittest import mock

import pytest
from django.db import connection

from timeline.models import Event
from tests.support import wait_until
from workflows import executor, hop, sql, transitions
from workflows.blueprints import BLUEPRINTS, blueprint_register
from workflows.executor import steps_execute
from workflows.models import Node, Run, Transition
from workflows.services import run_start
from tests.concurrency import Actor, waiting_for_a_lock
from tests.helpers import membership, statuses
from workflows.tools import TOOLS, Acceptance, NeedsInput, Tool, ToolError, tool_register

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def _accepted(ctx, arguments, output):
    return [Acceptance("the step is done", True)]


def _asks(ctx, arguments):
    raise NeedsInput("That name is taken. What should it be called instead?", [{"label": "B (2)", "answer": "B (2)"}])


def _fails(ctx, arguments):
    raise ToolError("the name is held by another run")


@pytest.fixture
def siblings():
    """A, then B ∥ C (B a step with something to accept, as a match; C one that stops for
    input or fails, as a name's reservation that collides), then the join D."""
    for tool in (
        Tool(name="sibling_accepted", description="Completes, its result accepted.", input_schema={"type": "object"},
             output_schema={"type": "object"}, fn=lambda ctx, arguments: {"ok": True}, accept=_accepted),
        Tool(name="sibling_asks", description="Stops for input.", input_schema={"type": "object"},
             output_schema={"type": "object"}, fn=_asks, side_effects=True),
        Tool(name="sibling_fails", description="Fails.", input_schema={"type": "object"},
             output_schema={"type": "object"}, fn=_fails, side_effects=True),
    ):
        tool_register(tool)
    for name, other in (("siblings_ask", "sibling_asks"), ("siblings_fail", "sibling_fails")):
        blueprint_register({"name": name, "title": "Siblings", "params": {}, "required": [],
                            "start": {"roles": ["business", "approver", "developer", "admin"], "doors": ["runs"]},
                            "nodes": [
            {"key": "a", "tool": "noop", "goal": "A", "depends_on": [], "arguments": {}},
            {"key": "b", "tool": "sibling_accepted", "goal": "B", "depends_on": ["a"], "arguments": {},
             "acceptance": ["the step is done"]},
            {"key": "c", "tool": other, "goal": "C", "depends_on": ["a"], "arguments": {}},
            {"key": "d", "tool": "noop", "goal": "D, the join", "depends_on": ["b", "c"], "arguments": {}}]})
    yield
    for name in ("siblings_ask", "siblings_fail"):
        BLUEPRINTS.pop(name)
    for name in ("sibling_accepted", "sibling_asks", "sibling_fails"):
        TOOLS.pop(name)


def _started(blueprint: str) -> tuple[Run, Node, Node]:
    run = run_start(membership=membership("alice"), blueprint=blueprint, params={})
    steps_execute(Node.objects.get(run=run, key="a").id)
    b, c = (Node.objects.get(run=run, key=key) for key in ("b", "c"))
    assert b.status == c.status == "ready"
    return run, b, c


def _finish_at_once(b: Node, c: Node) -> tuple[Actor, Actor]:
    """B's worker has run its tool and is about to record its completion; C's worker has
    written the event of C's stop (input asked, or failure) in its transaction and is about
    to count it against the run's cap. Then B's completion goes ahead: C goes on once B
    holds the run's lock or waits for a lock (whichever the engine's order makes it)."""
    b_ready, c_paused, c_go, b_locked = (threading.Event() for _ in range(4))
    real_finish, real_count, real_nodes_finish = hop.finish, transitions._count, sql.nodes_finish

    def finish(*args, **kwargs):
        if threading.current_thread().name == "b":
            b_ready.set()
            assert c_paused.wait(10), "C never reached its stop"
        return real_finish(*args, **kwargs)

    def count(run):
        if threading.current_thread().name == "c" and not c_paused.is_set():
            c_paused.set()
            assert c_go.wait(10)
        return real_count(run)

    def nodes_finish(*args, **kwargs):
        result = real_nodes_finish(*args, **kwargs)
        if threading.current_thread().name == "b":
            b_locked.set()
        return result

    with mock.patch.object(hop, "finish", finish), mock.patch.object(transitions, "_count", count), \
            mock.patch.object(sql, "nodes_finish", nodes_finish):
        worker_b, worker_c = Actor("b", lambda: steps_execute(b.id)), Actor("c", lambda: steps_execute(c.id))
        worker_b.start()
        assert b_ready.wait(10), "B never finished its tool"
        worker_c.start()
        assert c_paused.wait(10), "C never reached its stop"
        wait_until(lambda: b_locked.is_set() or waiting_for_a_lock() > 0 or not worker_b.is_alive(),
                   "B's completion holding the run's lock, or waiting for one", timeout=10)
        c_go.set()
        worker_b.join(20)
        worker_c.join(20)
    assert not worker_b.is_alive() and not worker_c.is_alive()
    return worker_b, worker_c


@pytest.mark.django_db(transaction=True)
def test_a_step_completing_as_its_sibling_stops_for_input_is_recorded_and_the_run_asks(siblings):
    run, b, c = _started("siblings_ask")
    worker_b, worker_c = _finish_at_once(b, c)
    assert statuses(run) == {"a": "completed", "b": "completed", "c": "awaiting_input", "d": "pending"}, (
        worker_b.error, worker_c.error)
    assert (worker_b.error, worker_c.error) == (None, None)
    run.refresh_from_db()
    assert run.status == "awaiting_input"
    b.refresh_from_db()
    assert (b.lease_owner, b.lease_expires_at) == ("", None)  # nothing left for the sweeper to reclaim
    assert list(Transition.objects.filter(node=b).order_by("at", "id").values_list("to_status", flat=True)) == [
        "ready", "in_progress", "completed"]
    seqs = list(Event.objects.filter(conversation_id=run.conversation_id).order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))
    assert Event.objects.filter(conversation_id=run.conversation_id, type="input.requested").count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_step_completing_as_its_sibling_fails_is_recorded_and_the_run_fails(siblings):
    run, b, c = _started("siblings_fail")
    worker_b, worker_c = _finish_at_once(b, c)
    assert statuses(run) == {"a": "completed", "b": "completed", "c": "failed", "d": "pending"}, (
        worker_b.error, worker_c.error)
    assert (worker_b.error, worker_c.error) == (None, None)
    run.refresh_from_db()
    assert run.status == "failed"
    b.refresh_from_db()
    assert (b.lease_owner, b.lease_expires_at) == ("", None)


@pytest.mark.django_db(transaction=True)
def test_a_completion_rolled_back_by_a_deadlock_with_another_writer_is_recorded_on_a_second_try(siblings, caplog):
    """Another writer holds the conversation's lock and then asks for the run's while B's
    completion holds the run's and waits for the conversation's: PostgreSQL rolls B's
    transaction back (B waited first). B's worker records its completion again, and says so."""
    import psycopg

    run, b, c = _started("siblings_ask")
    executor.node_claim([c.id], executor.worker_name())  # C runs on another worker: B's completion takes a transaction
    b_ready, other_locked = threading.Event(), threading.Event()
    real_finish = hop.finish

    def finish(*args, **kwargs):
        b_ready.set()
        assert other_locked.wait(10)
        return real_finish(*args, **kwargs)

    settings = connection.settings_dict
    other = psycopg.connect(host=settings["HOST"], port=settings["PORT"] or 5432, user=settings["USER"],
                            password=settings["PASSWORD"], dbname=settings["NAME"])
    try:
        other.execute("SET deadlock_timeout = '20s'")  # B, waiting first, finds the deadlock
        with mock.patch.object(hop, "finish", finish):
            worker_b = Actor("b", lambda: steps_execute(b.id))
            worker_b.start()
            assert b_ready.wait(10)
            other.execute("UPDATE timeline_conversation SET last_seq = last_seq WHERE id = %s", [run.conversation_id])
            other_locked.set()
            wait_until(lambda: waiting_for_a_lock() > 0, "B's completion waiting for the conversation", timeout=10)
            asking = threading.Thread(target=other.execute, args=(
                "UPDATE workflows_run SET transition_count = transition_count WHERE id = %s", [run.id]))
            asking.start()
            asking.join(15)  # granted once PostgreSQL rolled B back
            assert not asking.is_alive()
            other.commit()
            worker_b.join(15)
    finally:
        other.close()
    assert worker_b.error is None
    assert statuses(run) == {"a": "completed", "b": "completed", "c": "in_progress", "d": "pending"}
    assert Transition.objects.filter(node=b, to_status="completed").count() == 1
    seqs = list(Event.objects.filter(conversation_id=run.conversation_id).order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))
    assert any(r.levelname == "WARNING" and "step b" in r.getMessage() and "rolled back" in r.getMessage()
               for r in caplog.records), [r.getMessage() for r in caplog.records]


def test_a_completion_that_finds_its_step_moved_by_someone_else_says_so(siblings, caplog):
    """A cancel blocked B while its tool ran: the completion is refused, and the worker's
    log says which step, what it was and what the step is now — never a silent return."""
    run, b, c = _started("siblings_ask")
    me, b = executor.worker_name(), Node.objects.select_related("run").get(id=b.id)
    assert executor.node_claim([b.id], me, tools=[b.tool])
    Node.objects.filter(id=b.id).update(status="blocked", lease_owner="", lease_expires_at=None)  # cancelled
    with caplog.at_level("WARNING", logger="workflows.executor"):
        assert executor._execute_claimed(b, b.run, executor.tool_get(b.tool), me, None, None, None) is None
    assert Node.objects.get(id=b.id).status == "blocked"
    told = [r.getMessage() for r in caplog.records if r.name == "workflows.executor" and r.levelname == "WARNING"]
    assert any("step b" in m and "completed" in m and "not recorded" in m and "blocked" in m for m in told), told


# --- A reclaim says `crash` only when the holder is gone -------------------------------------

def _lease_expired(node: Node, owner: str) -> None:
    Node.objects.filter(id=node.id).update(status="in_progress", lease_owner=owner, attempts=1,
                                           lease_expires_at=executor.timezone.now() - executor.timedelta(seconds=1))


def _reclaim_cause(run: Run, node: Node) -> str:
    executor.node_execute(node.id)  # as the sweeper sends it again
    (reclaimed,) = Event.objects.filter(run_id=run.id, type="node.reclaimed").values_list("data", flat=True)
    assert Node.objects.get(id=node.id).status == "completed"  # and it ran again
    return reclaimed["cause"]


def _gone_pid() -> int:
    import subprocess

    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_a_lease_its_live_worker_outlived_is_reclaimed_as_expired_not_as_a_crash(siblings, caplog):
    """The probe's case: the worker that held B is alive (here: this very process) — its
    step's outcome never reached the database, or it is slow. Not a crash."""
    run, b, c = _started("siblings_ask")
    _lease_expired(b, executor.worker_name())
    with caplog.at_level("WARNING", logger="workflows.executor"):
        assert _reclaim_cause(run, b) == "lease_expired"
    assert any("step b" in r.getMessage() and "lease ran out" in r.getMessage() for r in caplog.records)


def test_a_lease_whose_worker_process_is_gone_is_reclaimed_as_a_crash(siblings):
    import socket

    run, b, c = _started("siblings_ask")
    _lease_expired(b, f"{socket.gethostname()}:{_gone_pid()}:1")
    assert _reclaim_cause(run, b) == "crash"


@pytest.mark.skipif("not __import__('django.conf').conf.settings.REDIS_URL")
def test_a_worker_on_another_host_is_alive_while_it_holds_its_presence_in_redis(siblings):
    """Workers on other hosts (or containers) are told apart by their presence: a Redis
    connection named after the process, which the operating system closes when it dies."""
    import redis
    from django.conf import settings

    run, b, c = _started("siblings_ask")
    presence = redis.Redis.from_url(settings.REDIS_URL, client_name="keel-worker:elsewhere:4242",
                                    single_connection_client=True)
    presence.ping()
    try:
        _lease_expired(b, "elsewhere:4242:7")
        assert _reclaim_cause(run, b) == "lease_expired"
    finally:
        presence.close()  # the process died

    from workflows import liveness

    wait_until(lambda: liveness.holder_alive("elsewhere:4242:7") is False, "the presence gone", timeout=5)
    assert liveness.holder_alive("elsewhere:4243:7") is False  # never there
