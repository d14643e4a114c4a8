"""The engine's fast path commits a hop in one statement of its own; the news its events owe
a subscriber (the chat's) is written by that same statement, so a worker killed right after
the commit — before any line of Python that follows it — leaves the news owed, once, with
the committed outcome, and the outbox delivers it exactly once."""
import pytest

from config.celery import app
from outbox.models import OutboxMessage
from outbox.services import outbox_drain, outbox_held
from timeline import services as timeline_services
from timeline.models import Event
from workflows import executor, hop, sql
from workflows.executor import steps_execute
from workflows.models import Node
from workflows.services import run_start
from tests.helpers import membership

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("demo")]

TASK = "tests.node_news"


class Killed(BaseException):
    """The worker dies here: nothing after this line runs (not even an except Exception)."""


@pytest.fixture
def told(monkeypatch):
    """A subscriber to every step's status change, whose deliveries are noted."""
    delivered: list[int] = []
    monkeypatch.setattr(timeline_services, "_SUBSCRIBERS", [(("node.status",), TASK)])
    monkeypatch.setitem(app.tasks, TASK, delivered.append)
    return delivered


def owed() -> dict[int, int]:
    rows = OutboxMessage.objects.filter(task=TASK).values_list("args", flat=True)
    counts: dict[int, int] = {}
    for args in rows:
        counts[args[0]] = counts.get(args[0], 0) + 1
    return counts


def test_a_claim_that_commits_by_itself_owes_its_news_in_the_same_statement(told):
    run = run_start(membership=membership("dora"), blueprint="noop_chain", params={"n": 2})
    first = Node.objects.get(run=run, key="n0")
    OutboxMessage.objects.filter(task=TASK).delete()
    now = executor.timezone.now()
    claim = sql.node_claim_alone(first.id, me="worker:1:1", lease=now, now=now, tools=executor.fast_tools())
    # The worker dies here, before events_written: the statement alone must have owed the news.
    event = Event.objects.get(conversation_id=run.conversation_id, type="node.status", data__node="n0",
                              data__to="in_progress")
    assert Node.objects.get(id=first.id).status == "in_progress"
    assert owed() == {event.id: 1}
    assert [e[0] for e in claim.events] == [event.id] and claim.events[0][5] == list(
        OutboxMessage.objects.filter(task=TASK).values_list("id", flat=True))
    assert outbox_drain(older_than=0) == 1 and outbox_drain(older_than=0) == 0
    assert told == [event.id]


def test_a_worker_killed_between_a_hops_commit_and_its_follow_up_loses_no_news(told, monkeypatch):
    run = run_start(membership=membership("dora"), blueprint="noop_chain", params={"n": 3})
    OutboxMessage.objects.filter(task=TASK).delete()
    before = set(Event.objects.filter(conversation_id=run.conversation_id).values_list("id", flat=True))

    def killed(*args, **kwargs):
        raise Killed()

    monkeypatch.setattr(hop, "events_written", killed)
    with pytest.raises(Killed):
        steps_execute(Node.objects.get(run=run, key="n0").id, plain=True)
    # What the hop's statement committed: n0 completed, n1 promoted (and claimed in place).
    assert Node.objects.get(run=run, key="n0").status == "completed"
    committed = list(Event.objects.filter(conversation_id=run.conversation_id, type="node.status")
                     .exclude(id__in=before).order_by("seq").values_list("id", "data"))
    assert ("n0", "completed") in [(d["node"], d["to"]) for _, d in committed], committed
    # Each committed step event is owed exactly once: none lost to the kill, none twice.
    assert owed() == {event_id: 1 for event_id, _ in committed}
    delivered = outbox_drain(older_than=0)
    assert delivered == len(committed) and outbox_drain(older_than=0) == 0
    assert sorted(told) == sorted(event_id for event_id, _ in committed)


def test_a_sandbox_owes_nobody(told):
    run = run_start(membership=membership("dora"), blueprint="noop_chain", params={"n": 2})
    first = Node.objects.get(run=run, key="n0")
    OutboxMessage.objects.filter(task=TASK).delete()
    now = executor.timezone.now()
    with outbox_held():
        sql.node_claim_alone(first.id, me="worker:1:1", lease=now, now=now, tools=executor.fast_tools())
    assert owed() == {}
