"""A task call a committed write owes, written in the write's own transaction."""
from __future__ import annotations

from django.db import models


class OutboxMessage(models.Model):
    """Owed: run task `task` with `args`, once. Deleted in the transaction that ran it
    (outbox.services.outbox_deliver); while it exists, the sweep and a broker reconnect
    deliver it again."""

    task = models.CharField(max_length=200)
    args = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # Failed deliveries (the task raised): a message that keeps failing is left for a
    # person to read (last_error) instead of being retried for ever.
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True, default="")

    def __str__(self) -> str:
        return f"{self.task}{self.args}"
