"""A worker runs a chain's successors in place for a while, then hands the next one to the
broker, behind whatever waits there: no run waits for another's whole chain to end (after
a broker outage, every run moves again within seconds, not only one per worker slot)."""
from unittest import mock

import pytest

from tests.helpers import membership
from workflows.dispatch import NODE_RUN
from workflows.executor import steps_execute
from workflows.models import Node
from workflows.services import run_start

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def chain_from_its_first_step(django_capture_on_commit_callbacks) -> tuple[dict[str, int], dict[str, str], list]:
    sent: list = []
    with mock.patch("workflows.dispatch.messages_send", side_effect=sent.extend), \
            django_capture_on_commit_callbacks(execute=True):
        run = run_start(membership=membership("dora"), blueprint="noop_chain", params={"n": 3})
        steps_execute(Node.objects.get(run=run, key="n0").id, plain=True)
    nodes = Node.objects.filter(run=run)
    ids = dict(nodes.values_list("key", "id"))
    # The first step's own message (delivered here by hand) aside, what went through the broker:
    return ids, dict(nodes.values_list("key", "status")), [m for m in sent if m[1][0] != ids["n0"]]


def test_within_its_budget_a_worker_runs_the_whole_chain_in_place(django_capture_on_commit_callbacks):
    _, statuses, sent = chain_from_its_first_step(django_capture_on_commit_callbacks)
    assert statuses == {"n0": "completed", "n1": "completed", "n2": "completed"}
    assert sent == []  # no broker hop


def test_past_its_budget_the_next_step_goes_through_the_broker(django_capture_on_commit_callbacks, monkeypatch):
    monkeypatch.setenv("KEEL_IN_PLACE_SECONDS", "0")
    ids, statuses, sent = chain_from_its_first_step(django_capture_on_commit_callbacks)
    assert statuses == {"n0": "completed", "n1": "ready", "n2": "pending"}
    assert [(name, args[0]) for name, args in sent] == [(NODE_RUN, ids["n1"])]
