"""Hand ready nodes to the workers once the transaction that made them ready commits.

The task is sent by name: the services that make nodes ready sit below the task
module (tasks → executor → services), so they must not import it."""
from __future__ import annotations

from django.db import transaction

from config.celery import app

NODE_RUN = "workflows.tasks.node_run"


def nodes_dispatch_on_commit(node_ids: list[int]) -> None:
    if not node_ids:
        return
    ids = list(node_ids)

    def send() -> None:
        for node_id in ids:
            app.send_task(NODE_RUN, args=[node_id])

    transaction.on_commit(send)
