"""The hop's hot path: the hand-written statements of workflows/sql.py
leave the records a person and the engine read (events, transitions, frames)."""
import threading
from unittest import mock

import pytest
from django.db import connection

from timeline.models import Activity, ActivityLink, Event, Frame
from timeline.services import conversation_create, event_append, events_batched
from tests.support import wait_until
from workflows import executor, hop, sql
from workflows.blueprints import BLUEPRINTS, blueprint_register
from workflows.dispatch import NODE_RUN, NODES_RUN, SPREAD, dispatch_messages
from workflows.executor import nodes_execute, steps_execute
from workflows.models import Node, Run, ToolCall, Transition
from workflows.services import run_start
from tests.helpers import drive, membership, statuses

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def noop(shape: str, n: int) -> Run:
    return run_start(membership=membership("dora"), blueprint=f"noop_{shape}", params={"n": n})


def assert_recorded(run: Run, n: int) -> None:
    """Every node: ready, claimed, completed — each a transition row and an event,
    one tool call and its frame; the conversation's events gapless."""
    run.refresh_from_db()
    assert run.status == "completed"
    nodes = list(Node.objects.filter(run=run))
    assert len(nodes) == n and {node.status for node in nodes} == {"completed"}
    for node in nodes:
        path = list(Transition.objects.filter(node=node).order_by("at", "id").values_list("to_status", "worker"))
        assert [to for to, _ in path] == ["ready", "in_progress", "completed"], (node.key, path)
        assert all(worker for to, worker in path if to != "ready"), (node.key, path)  # who claimed, who completed
        calls = list(ToolCall.objects.filter(node=node))
        assert len(calls) == 1 and calls[0].status == "succeeded" and node.result_ref == str(calls[0].id)
        assert Frame.objects.filter(activity_id=node.activity_id, kind="tool_call").count() == 1
        assert ActivityLink.objects.filter(activity_id=node.activity_id, kind="tool_call",
                                           object_id=str(calls[0].id)).count() == 1
    seqs = list(Event.objects.filter(conversation_id=run.conversation_id).order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))
    node_events = list(Event.objects.filter(conversation_id=run.conversation_id, type="node.status")
                       .order_by("seq").values_list("data", flat=True))
    assert len(node_events) == 3 * n
    # In the order it happened: each node ready, then claimed, then completed.
    for node in nodes:
        told = [(e["from"], e["to"]) for e in node_events if e["node"] == node.key]
        assert told == [("pending", "ready"), ("ready", "in_progress"), ("in_progress", "completed")], told
    assert run.transition_count == 3 * n + 1  # and the run's own completion


def _statements_seen(seen: list):
    """Patch the hand-written statements' execution to note each (statement, whether
    inside a transaction) in `seen`."""
    real_execute = sql.sql.execute

    def execute(statement, *args, **kwargs):
        seen.append((statement, connection.in_atomic_block))
        return real_execute(statement, *args, **kwargs)

    return mock.patch.object(sql.sql, "execute", execute)


def test_it_runs_a_chain_in_place_with_every_record():
    run = drive(noop("chain", 6))
    assert_recorded(run, 6)
    # A chain's timeline reads as one: a step completes before the next is ready.
    keys = list(Node.objects.filter(run=run).order_by("position").values_list("key", flat=True))
    told = [(e["node"], e["to"]) for e in Event.objects.filter(conversation_id=run.conversation_id,
                                                                type="node.status")
            .order_by("seq").values_list("data", flat=True)]
    assert told == [(key, to) for key in keys for to in ("ready", "in_progress", "completed")]


def test_a_step_sends_its_successors_message_before_its_push(monkeypatch, django_capture_on_commit_callbacks):
    """The next step's worker waits for no push of this one: the message goes first
    (a side-effect-free step, dispatched as such: a step claimed first pushes its claim
    when the claim commits, before it runs)."""
    monkeypatch.setenv("KEEL_IN_PLACE", "0")
    run = noop("chain", 2)
    first = Node.objects.get(run=run, status="ready")
    sent = []
    with mock.patch("workflows.dispatch.messages_send", side_effect=lambda messages: sent.append("message")), \
            mock.patch("timeline.push.group_send_many", side_effect=lambda batch, **kw: sent.append("push")):
        with django_capture_on_commit_callbacks(execute=True):
            steps_execute(first.id, plain=True)
    assert sent[:2] == ["message", "push"], sent


def test_it_completes_a_fan_out_chunk_together_with_every_record(demo):
    run = noop("fanout", 40)
    ready = list(Node.objects.filter(run=run, status="ready").values_list("id", flat=True))
    assert len(ready) == 40
    for step in nodes_execute(ready):
        assert step is None  # independent nodes: nothing to run in place
    assert_recorded(run, 40)


def test_a_redelivered_chunk_runs_nothing_twice():
    run = noop("fanout", 20)
    ready = list(Node.objects.filter(run=run, status="ready").values_list("id", flat=True))
    nodes_execute(ready)
    nodes_execute(ready)  # the broker delivers the chunk again
    assert_recorded(run, 20)


def test_it_sends_a_wide_fan_out_in_chunks_and_a_narrow_one_node_by_node():
    assert dispatch_messages([1, 2, 3]) == [(NODE_RUN, [1]), (NODE_RUN, [2]), (NODE_RUN, [3])]
    # A node known to run a side-effect-free tool says so: its worker reads it rather than claiming it first.
    assert dispatch_messages([1, 2], plain={2}) == [(NODE_RUN, [1]), (NODE_RUN, [2, True])]
    wide = dispatch_messages(list(range(500)))
    assert len(wide) == SPREAD and {name for name, _ in wide} == {NODES_RUN}
    assert sorted(i for _, (chunk,) in wide for i in chunk) == list(range(500))


def test_a_fan_out_is_published_in_one_batch():
    from workflows import dispatch

    producer = mock.MagicMock()
    with mock.patch.object(dispatch.app, "producer_or_acquire") as acquire, \
            mock.patch.object(dispatch.app, "send_task") as send:
        acquire.return_value.__enter__.return_value = producer
        messages = dispatch_messages(list(range(100)))
        dispatch.messages_send(messages)
    producer.batch.assert_called_once()
    assert 1 < send.call_count == len(messages) <= SPREAD and all(c.kwargs["producer"] is producer for c in send.call_args_list)


def test_a_chunks_steps_that_cannot_run_together_go_to_other_slots_all_but_one():
    """What a reconnect resumes arrives in chunks: handed-over leases (approvals decided while
    the broker was away) that the chunk cannot claim together. Run in turn in one slot, the
    last waited for every other while slots stood idle."""
    from workflows import dispatch
    from workflows.liveness import HANDED_OVER

    run = noop("fanout", 3)
    ready = sorted(Node.objects.filter(run=run, status="ready").values_list("id", flat=True))
    Node.objects.filter(id__in=ready).update(status="in_progress", lease_owner=f"{HANDED_OVER}approver")
    with mock.patch.object(dispatch.app, "producer_or_acquire"), mock.patch.object(dispatch.app, "send_task") as send:
        assert nodes_execute(ready) == [ready[0]]
    assert [c.args for c in send.call_args_list] == [(NODE_RUN,), (NODE_RUN,)]
    assert [c.kwargs["args"] for c in send.call_args_list] == [[ready[1]], [ready[2]]]

    # The broker does not answer: this slot runs them all, in turn, rather than lose one.
    with mock.patch.object(dispatch.app, "producer_or_acquire", side_effect=OSError("broker away")):
        assert nodes_execute(ready) == ready


def test_a_lost_claim_writes_nothing():
    run = noop("chain", 2)
    first = Node.objects.get(run=run, key="n0")
    Node.objects.filter(id=first.id).update(status="in_progress")  # another worker got there first
    before = (Transition.objects.count(), Event.objects.count())
    assert nodes_execute([first.id]) == [first.id]  # handed to the general path, which leaves it
    assert (Transition.objects.count(), Event.objects.count()) == before


def test_a_chain_stops_at_its_transition_cap_and_nothing_runs_after_it():
    run = run_start(membership=membership("dora"), blueprint="noop_chain", params={"n": 6},
                    caps={"transition_cap": 8})
    run = drive(run)
    assert run.status == "stopped" and run.status_reason == "transition cap reached"
    assert run.transition_count == 8
    ran = set(ToolCall.objects.filter(run=run).values_list("node__key", flat=True))
    statuses = dict(Node.objects.filter(run=run).values_list("key", "status"))
    # Every step that ran is recorded as completed; none ran after the stop.
    assert ran == {key for key, status in statuses.items() if status == "completed"} and 0 < len(ran) < 6
    assert not Node.objects.filter(run=run, status="ready").exclude(key__in=ran).filter(
        transitions__to_status="in_progress").exists()


@pytest.fixture
def join_blueprint():
    blueprint_register({"name": "noop_join", "title": "No-op join", "params": {}, "required": [],
                        "start": {"roles": ["business", "approver", "developer", "admin"], "doors": ["runs"]}, "nodes": [
        {"key": "a", "tool": "noop", "goal": "A", "depends_on": [], "arguments": {}},
        {"key": "b", "tool": "noop", "goal": "B", "depends_on": ["a"], "arguments": {}},
        {"key": "c", "tool": "noop", "goal": "C", "depends_on": ["a"], "arguments": {}},
        {"key": "d", "tool": "noop", "goal": "D, the join", "depends_on": ["b", "c"], "arguments": {}}]})
    yield
    BLUEPRINTS.pop("noop_join")


@pytest.mark.django_db(transaction=True)
def test_two_branches_finishing_at_once_still_start_their_join(join_blueprint):
    """B finishes while C's completion holds the run's lock: B's hop waits for it, and
    its snapshot, taken before, still sees C running. The join must start all the same
    (a chain's one-statement hop is for when nothing else of the run is active)."""
    run = run_start(membership=membership("alice"), blueprint="noop_join", params={})
    steps_execute(Node.objects.get(run=run, key="a").id)
    b, c = (Node.objects.get(run=run, key=key) for key in ("b", "c"))
    assert b.status == c.status == "ready"
    holding, release = threading.Event(), threading.Event()
    real_promoted = hop._promoted

    def promoted_then_hold(*args, **kwargs):
        if threading.current_thread().name == "finishing-c":
            holding.set()  # C is completed, the run row locked, nothing committed yet
            release.wait(10)
        return real_promoted(*args, **kwargs)

    def step(node_id: int) -> None:
        try:
            steps_execute(node_id)
        finally:
            connection.close()

    with mock.patch.object(hop, "_promoted", promoted_then_hold):
        finishing_c = threading.Thread(target=step, args=(c.id,), name="finishing-c")
        finishing_c.start()
        assert holding.wait(10)
        finishing_b = threading.Thread(target=step, args=(b.id,), name="finishing-b")
        finishing_b.start()
        wait_until(lambda: _waiting_for_a_lock() > 0, "B's hop waiting for the run's lock", timeout=10)
        release.set()
        finishing_c.join(10)
        finishing_b.join(10)
    run.refresh_from_db()
    assert statuses(run) == {"a": "completed", "b": "completed", "c": "completed", "d": "completed"}
    assert run.status == "completed"


def _waiting_for_a_lock() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                       "AND wait_event_type = 'Lock'")
        return cursor.fetchone()[0]


def test_a_promotion_finds_its_nodes_by_run_and_id_never_by_scanning_every_pending_node():
    """However young the statistics, no part of a hop reads the pending nodes of every run
    (the status index): a hop would slow down with every run waiting in the database."""
    import psycopg

    run = noop("chain", 3)
    params = sql._promotion_params(run.id, ["n0"], run.created_at, None, 0, (run.conversation_id, []))
    with connection.cursor():
        cursor = psycopg.RawCursor(connection.connection)
        cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        statement = sql._PROMOTE
        cursor.execute(f"EXPLAIN {statement.positional}", [params[name] for name in statement.names])
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "workflows_n_status_aaf1da_idx" not in plan, plan


def test_a_chain_run_in_a_batch_that_holds_another_conversations_event_is_recorded_all_the_same():
    """The hop's statement cannot write a batch that holds events of two conversations:
    they are all written at the end of the batch, each conversation's numbered on."""
    run = noop("chain", 3)
    alice = membership("alice")
    other = conversation_create(tenant_id=alice.tenant_id, user_id=alice.user_id, title="other")
    with events_batched():
        event_append(conversation_id=other.id, type="message.received", data={"text": "meanwhile"})
        steps_execute(Node.objects.get(run=run, key="n0").id)
    assert_recorded(run, 3)
    assert list(Event.objects.filter(conversation_id=other.id).values_list("seq", flat=True)) == [1]


@pytest.mark.django_db(transaction=True)
def test_a_chains_hop_is_one_statement_that_commits_by_itself():
    """Outside a transaction, a plain inline node's hop is one statement and no BEGIN or
    COMMIT: through the broker a read and the statement, in place the statement alone."""
    run = noop("chain", 4)
    seen = []
    real_execute = sql.sql.execute

    def execute(statement, *args, **kwargs):
        seen.append((str(statement).split()[0:3], connection.in_atomic_block))
        return real_execute(statement, *args, **kwargs)

    with mock.patch.object(sql.sql, "execute", execute):
        steps_execute(Node.objects.get(run=run, key="n0").id, plain=True)  # as its message says
    # n0's read, then one statement per node, each its own transaction (no BEGIN, no COMMIT)...
    assert [words[0] for words, _ in seen[:5]] == ["SELECT", "WITH", "WITH", "WITH", "WITH"], seen
    assert not any(in_transaction for _, in_transaction in seen[:5]), seen
    # ...and then the run's completion, in a transaction of its own
    assert seen[5:] and all(in_transaction for _, in_transaction in seen[5:]), seen
    assert_recorded(run, 4)


def test_a_node_run_twice_at_once_is_recorded_once():
    """Two workers got the same message (a redelivery): both read the node ready and run
    its side-effect-free tool; the first statement wins, the second writes nothing."""
    run = noop("chain", 2)
    first = Node.objects.get(run=run, key="n0")
    read, rival = (sql.node_ready_read(first.id, tools=executor.fast_tools()) for _ in range(2))
    node, loaded_run, rival_node, rival_run = read.node, read.run, rival.node, rival.run
    tool = executor.tool_get(node.tool)
    mine, theirs = executor._inline_run(node, loaded_run, tool), executor._inline_run(rival_node, rival_run, tool)
    next_step = hop.finish(loaded_run, [hop.Finished(node, call=mine, ready=True)], executor.worker_name())
    before = (Transition.objects.count(), Event.objects.count(), ToolCall.objects.count(), Frame.objects.count())
    assert hop.finish(rival_run, [hop.Finished(rival_node, call=theirs, ready=True)], "rival:1:1") is None
    assert (Transition.objects.count(), Event.objects.count(), ToolCall.objects.count(),
            Frame.objects.count()) == before
    steps_execute(next_step)
    assert_recorded(run, 2)


@pytest.fixture
def beside_blueprint():
    blueprint_register({"name": "noop_beside", "title": "A chain beside a branch", "params": {}, "required": [],
                        "start": {"roles": ["business", "approver", "developer", "admin"], "doors": ["runs"]}, "nodes": [
        {"key": "a", "tool": "noop", "goal": "A", "depends_on": [], "arguments": {}},
        {"key": "b", "tool": "noop", "goal": "B", "depends_on": ["a"], "arguments": {}},
        {"key": "c", "tool": "noop", "goal": "C, the other branch", "depends_on": ["a"], "arguments": {}},
        {"key": "d", "tool": "noop", "goal": "D, after B", "depends_on": ["b"], "arguments": {}},
        {"key": "e", "tool": "noop", "goal": "E, the join", "depends_on": ["c", "d"], "arguments": {}}]})
    yield
    BLUEPRINTS.pop("noop_beside")


def test_a_chain_beside_a_running_branch_waits_for_it_at_the_join(beside_blueprint):
    """While C runs, B's hop and D's, run in place after it, cannot promote on their
    statement's snapshot: they take the steps of a transaction, and the join E starts
    only once C is done."""
    run = run_start(membership=membership("alice"), blueprint="noop_beside", params={})
    steps_execute(Node.objects.get(run=run, key="a").id)
    c = Node.objects.get(run=run, key="c")
    (claimed_c,) = executor.node_claim([c.id], executor.worker_name())  # C is running on another worker
    steps_execute(Node.objects.get(run=run, key="b").id)
    assert statuses(run) == {"a": "completed", "b": "completed", "c": "in_progress", "d": "completed",
                             "e": "pending"}
    assert Transition.objects.filter(node__key="d", node__run=run, to_status="in_progress",
                                     reason="claimed").count() == 1  # run in place, once
    steps_execute(claimed_c)
    assert_recorded(run, 5)


@pytest.mark.django_db(transaction=True)
def test_a_hop_that_finds_another_branch_active_writes_nothing_and_takes_a_transaction(join_blueprint):
    """B was taken for alone, but C is ready by the time B's one statement runs: it writes
    nothing, and B's hop is done in a transaction whose promotion follows the run's lock,
    the join left waiting for C."""
    run = run_start(membership=membership("alice"), blueprint="noop_join", params={})
    steps_execute(Node.objects.get(run=run, key="a").id)
    read = sql.node_ready_read(Node.objects.get(run=run, key="b").id, tools=executor.fast_tools())
    assert read.busy  # C is ready
    call = executor._inline_run(read.node, read.run, executor.tool_get(read.node.tool))
    with mock.patch.object(sql, "inline_hop", wraps=sql.inline_hop) as once:
        assert hop.finish(read.run, [hop.Finished(read.node, call=call, ready=True)], executor.worker_name()) is None
    assert [c.kwargs["anyway"] for c in once.call_args_list] == [False, True]
    assert statuses(run) == {"a": "completed", "b": "completed", "c": "ready", "d": "pending"}
    steps_execute(Node.objects.get(run=run, key="c").id)
    assert_recorded(run, 4)


@pytest.mark.django_db(transaction=True)
def test_a_message_delivered_again_after_its_hop_runs_nothing_twice(monkeypatch):
    """The worker died after the hop's statement, before it acked: the broker delivers
    the message again, and nothing is run or recorded a second time."""
    monkeypatch.setenv("KEEL_IN_PLACE", "0")
    run = noop("chain", 2)
    first = Node.objects.get(run=run, key="n0")
    with mock.patch("workflows.dispatch.messages_send"):
        steps_execute(first.id, plain=True)
        before = (Transition.objects.count(), Event.objects.count(), ToolCall.objects.count(), Frame.objects.count())
        steps_execute(first.id, plain=True)  # the same message again
    assert (Transition.objects.count(), Event.objects.count(), ToolCall.objects.count(),
            Frame.objects.count()) == before
    steps_execute(Node.objects.get(run=run, key="n1").id)
    assert_recorded(run, 2)


@pytest.mark.django_db(transaction=True)
def test_a_steps_message_says_whether_its_successor_is_plain_and_a_node_with_effects_is_claimed_first(
        monkeypatch, beside_blueprint):
    """A noop successor's message says it is plain (its worker reads it, then one statement
    claims and completes it); a node the message does not say is plain — one with effects —
    is claimed first, with no read before its claim, in one statement that commits by
    itself (its event and its count with it)."""
    monkeypatch.setenv("KEEL_IN_PLACE", "0")
    run = noop("chain", 2)
    sent = []
    with mock.patch("workflows.dispatch.messages_send", side_effect=sent.extend):
        steps_execute(Node.objects.get(run=run, key="n0").id, plain=True)
    assert sent == [(NODE_RUN, [Node.objects.get(run=run, key="n1").id, True])]

    seen: list = []
    with _statements_seen(seen), mock.patch.object(executor, "_execute_claimed") as run_it:
        executor.node_execute(Node.objects.get(run=run, key="n1").id)  # as if its tool had effects
    # The claim, no read before it and no transaction around it; then noop proved plain: its
    # completion, one statement more (the run's completion follows, in a transaction).
    assert seen[:2] == [(sql._CLAIM_ALONE, False), (sql._INLINE_HOP[False], False)], seen
    run_it.assert_not_called()
    assert_recorded(run, 2)


def test_a_runs_first_steps_messages_say_which_are_plain(django_capture_on_commit_callbacks, beside_blueprint):
    sent = []
    with mock.patch("workflows.dispatch.messages_send", side_effect=sent.extend), \
            django_capture_on_commit_callbacks(execute=True):
        run = noop("chain", 2)
    assert sent == [(NODE_RUN, [Node.objects.get(run=run, key="n0").id, True])]
    BLUEPRINTS["noop_beside"]["nodes"][0]["acceptance"] = ["a criterion"]  # now something to accept
    sent.clear()
    with mock.patch("workflows.dispatch.messages_send", side_effect=sent.extend), \
            django_capture_on_commit_callbacks(execute=True):
        run = run_start(membership=membership("alice"), blueprint="noop_beside", params={})
    assert sent == [(NODE_RUN, [Node.objects.get(run=run, key="a").id])]


def test_a_step_whose_tool_is_not_registered_is_sent_all_the_same(django_capture_on_commit_callbacks):
    """Deciding whether a step is plain never fails the promotion that made it ready."""
    from types import SimpleNamespace

    from workflows.services import ready_dispatch_on_commit

    sent = []
    gone = SimpleNamespace(id=7, tool="a_tool_no_longer_registered", acceptance=[])
    with mock.patch("workflows.dispatch.messages_send", side_effect=sent.extend), \
            django_capture_on_commit_callbacks(execute=True):
        ready_dispatch_on_commit([gone])
    assert sent == [(NODE_RUN, [7])]


def test_a_claim_first_step_is_claimed_once_with_its_event_and_count_and_a_rival_claim_writes_nothing():
    """A step claimed before its tool runs (one with effects) is claimed by one statement:
    its transition (who claimed it), its node.status event numbered on in the conversation,
    its activity opened and its count against the cap; a second claim of it finds it
    taken and writes nothing."""
    run = noop("chain", 2)
    first = Node.objects.get(run=run, key="n0")
    counted = Run.objects.get(id=run.id).transition_count
    last_seq = Event.objects.filter(conversation_id=run.conversation_id).order_by("-seq").first().seq
    lease = executor.timezone.now()
    claim = sql.node_claim_alone(first.id, me="worker:1:1", lease=lease, now=lease, tools=executor.fast_tools())
    assert claim is not None and claim.within_cap and claim.claimed.node.status == "in_progress"
    first.refresh_from_db()
    assert (first.status, first.lease_owner, first.attempts) == ("in_progress", "worker:1:1", 1)
    assert list(Transition.objects.filter(node=first).order_by("id").values_list("to_status", "worker")) == [
        ("ready", ""), ("in_progress", "worker:1:1")]
    told = Event.objects.get(conversation_id=run.conversation_id, seq=last_seq + 1)
    assert (told.type, told.data["node"], told.data["to"]) == ("node.status", "n0", "in_progress")
    assert [(seq, data["to"]) for _, seq, _, _, data, _ in claim.events] == [(last_seq + 1, "in_progress")]
    assert Run.objects.get(id=run.id).transition_count == counted + 1
    assert first.activity_id and Activity.objects.get(id=first.activity_id).status == "in_progress"
    before = (Transition.objects.count(), Event.objects.count(), Run.objects.get(id=run.id).transition_count)
    assert sql.node_claim_alone(first.id, me="rival:1:1", lease=lease, now=lease, tools=executor.fast_tools()) is None
    assert (Transition.objects.count(), Event.objects.count(), Run.objects.get(id=run.id).transition_count) == before


@pytest.mark.django_db(transaction=True)
def test_a_claim_first_step_past_the_runs_cap_stops_the_run_and_its_tool_never_runs():
    run = noop("chain", 2)
    first = Node.objects.get(run=run, key="n0")
    Run.objects.filter(id=run.id).update(transition_cap=Run.objects.get(id=run.id).transition_count)
    with mock.patch.object(executor, "_inline_run") as tool_run, \
            mock.patch.object(executor, "_execute_claimed") as effects_run:
        assert executor.node_execute(first.id) is None  # not said plain: claimed first
    tool_run.assert_not_called()
    effects_run.assert_not_called()
    run.refresh_from_db()
    assert (run.status, run.status_reason) == ("stopped", "transition cap reached")
    assert not ToolCall.objects.filter(run=run).exists()
    seqs = list(Event.objects.filter(conversation_id=run.conversation_id).order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))


@pytest.mark.django_db(transaction=True)
def test_a_step_with_effects_completes_and_hops_in_one_statement_that_commits_by_itself():
    """A step whose tool has effects is claimed, runs, and is then completed — its transition,
    its activity closed, its successor promoted and claimed in place, their events and their
    count — by one statement outside any transaction (was BEGIN, finish, promote, COMMIT),
    unless it is the run's last."""
    run = noop("chain", 3)
    seen: list = []
    with mock.patch.object(executor.TOOLS["noop"], "inline", False), _statements_seen(seen):
        steps_execute(Node.objects.get(run=run, key="n0").id)
    # The last step's statement writes nothing (no successor goes on): it completes in the
    # transaction that completes the run.
    assert [(s, in_transaction) for s, in_transaction in seen if s in (sql._COMPLETE_HOP, sql._FINISH_HEAD)] == [
        (sql._COMPLETE_HOP, False), (sql._COMPLETE_HOP, False), (sql._COMPLETE_HOP, False), (sql._FINISH_HEAD, True)]
    assert_recorded(run, 3)
    for node in Node.objects.filter(run=run):
        assert Activity.objects.get(id=node.activity_id).status == "completed"
        assert node.acceptance_results == []  # none asked for: what was checked is recorded as such


@pytest.mark.django_db(transaction=True)
def test_a_step_with_effects_that_finds_another_branch_active_writes_nothing_and_takes_a_transaction(
        join_blueprint):
    """B completes while C is still ready: its one statement writes nothing, and B is
    completed in a transaction whose promotion follows the run's lock, the join left
    waiting for C; once C completes, the join runs."""
    run = run_start(membership=membership("alice"), blueprint="noop_join", params={})
    steps_execute(Node.objects.get(run=run, key="a").id)
    seen: list = []
    with mock.patch.object(executor.TOOLS["noop"], "inline", False), _statements_seen(seen):
        steps_execute(Node.objects.get(run=run, key="b").id)
        assert statuses(run) == {"a": "completed", "b": "completed", "c": "ready", "d": "pending"}
        assert [s for s, _ in seen if s in (sql._COMPLETE_HOP, sql._FINISH_HEAD)] == [sql._COMPLETE_HOP,
                                                                                      sql._FINISH_HEAD]
        steps_execute(Node.objects.get(run=run, key="c").id)
    assert_recorded(run, 4)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("plain", [True, False], ids=["plain", "with effects"])
def test_a_worker_killed_as_a_runs_last_step_completes_leaves_the_run_to_finish(plain):
    """The last step's completion and the run's own commit together: a worker killed
    between them (here: the run's settling dies) leaves the step in progress under its
    lease, not completed in a run still running with nothing left to run; when the lease
    runs out, the step runs again and the run completes."""
    run = noop("chain", 3)
    killed = mock.patch.object(hop, "run_settle", side_effect=SystemExit("killed"))
    with mock.patch.object(executor.TOOLS["noop"], "inline", plain), killed, pytest.raises(SystemExit):
        steps_execute(Node.objects.get(run=run, key="n0").id, plain=plain)
    assert statuses(run) == {"n0": "completed", "n1": "completed", "n2": "in_progress"}
    assert Run.objects.get(id=run.id).status == "running"
    Node.objects.filter(run=run, key="n2").update(lease_expires_at=executor.timezone.now())  # the lease ran out
    with mock.patch.object(executor.TOOLS["noop"], "inline", plain):
        steps_execute(Node.objects.get(run=run, key="n2").id)  # as the sweeper sends it again
    run.refresh_from_db()
    assert run.status == "completed" and statuses(run) == {"n0": "completed", "n1": "completed", "n2": "completed"}
    seqs = list(Event.objects.filter(conversation_id=run.conversation_id).order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))
