"""Hand ready nodes to the workers once the transaction that made them ready commits.

The task is sent by name: the services that make nodes ready sit below the task
module (tasks → executor → services), so they must not import it.

Nodes made ready together go out in one broker round trip (kombu's publish
batch: one Redis pipeline). A wide fan-out is sent in chunks, one message per
chunk: the worker claims and completes a chunk's nodes in batched statements,
and there are still enough chunks to keep every worker slot busy."""
from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from config.celery import app
from outbox.services import outbox_held, publish, publish_on_commit

NODE_RUN = "workflows.tasks.node_run"
NODES_RUN = "workflows.tasks.nodes_run"
PLAN_RUN = "workflows.tasks.plan_run"
SPREAD = 16  # at most this many messages per fan-out; below it, one node each


def dispatch_messages(node_ids: list[int], plain: set[int] | frozenset[int] = frozenset()) -> list[tuple[str, list]]:
    """The (task, args) to send for these ready nodes. `plain`: those known to run a
    side-effect-free tool with nothing to accept (their worker reads them first and
    claims them in the statement that completes them; others are claimed at once)."""
    if len(node_ids) <= SPREAD:
        return [(NODE_RUN, [node_id, True] if node_id in plain else [node_id]) for node_id in node_ids]
    size = math.ceil(len(node_ids) / SPREAD)
    return [(NODES_RUN, [node_ids[i:i + size]]) for i in range(0, len(node_ids), size)]


def messages_send(messages: list[tuple[str, list]]) -> None:
    if len(messages) == 1:
        app.send_task(messages[0][0], args=messages[0][1])
        return
    with app.producer_or_acquire() as producer:
        # One pipeline for the lot; transports without batches publish one by one.
        with producer.batch(max_size=len(messages) * 2 + 1):
            for name, args in messages:
                app.send_task(name, args=args, producer=producer)


# Held in this context (a replay drives its sandbox run itself, in process): nothing of it
# reaches the workers.
_held: ContextVar[bool] = ContextVar("keel_dispatch_held", default=False)


@contextmanager
def dispatch_held() -> Iterator[None]:
    """Runs are driven here, in process: no step is sent to a worker, and no news is owed
    to one (outbox_held)."""
    token = _held.set(True)
    try:
        with outbox_held():
            yield
    finally:
        _held.reset(token)


def dispatch_is_held() -> bool:
    return _held.get()


# The database remembers what these messages are about (a run with no plan, a ready node,
# a handed-over lease): a send that fails leaves it to the reconnect's resume and the sweep.
RECOVERED_BY = "the workers send it again when they reach the broker (workflows.tasks.resume), else the sweep"


def run_plan_send_on_commit(run_id: int) -> None:
    """A worker plans the run once the transaction that made it commits."""
    publish_on_commit(lambda: app.send_task(PLAN_RUN, args=[run_id]), f"run {run_id}: its planning",
                      recovered_by=RECOVERED_BY)


def nodes_dispatch_on_commit(node_ids: list[int], plain: set[int] | frozenset[int] = frozenset()) -> None:
    if not node_ids or _held.get():
        return
    messages = dispatch_messages(list(node_ids), plain)
    publish_on_commit(lambda: messages_send(messages), f"nodes {', '.join(map(str, node_ids))} ready",
                      recovered_by=RECOVERED_BY)


def nodes_spread(node_ids: list[int]) -> bool:
    """Send these nodes now, one message each, for other slots to take: the steps of a chunk
    that were not completed together (a gated or slow step each, a resumed run's handed-over
    lease). Run in turn in the chunk's one slot, the last of them waited for all the others
    while other slots stood idle. False when the broker does not answer (the caller runs them)."""
    if not node_ids or _held.get():
        return False
    return publish(lambda: messages_send([(NODE_RUN, [node_id]) for node_id in node_ids]),
                   f"nodes {', '.join(map(str, node_ids))} spread over the workers",
                   recovered_by="this worker runs them itself")
