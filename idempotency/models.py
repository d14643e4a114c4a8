"""The idempotency record every system of record writes through (DESIGN.md §4):
key → request hash → receipt, unique per tenant and operation.

Abstract: each domain keeps its own table (`class IdempotencyRecord(IdempotencyRecordBase)`
with its own unique constraint), and `idempotency.services.idempotent` runs the one
protocol over whichever table it is given. This app names no domain."""
from __future__ import annotations

import json
from typing import Any

from django.db import models


class IdempotencyState(models.TextChoices):
    IN_PROGRESS = "in_progress", "In progress"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"  # the work raised after leaving partial state; a retry resumes it


class IdempotencyRecordBase(models.Model):
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="+")
    operation = models.CharField(max_length=60)
    key = models.CharField(max_length=200)
    request_hash = models.CharField(max_length=64)
    state = models.CharField(max_length=20, choices=IdempotencyState.choices, default=IdempotencyState.IN_PROGRESS)
    # Who holds the lease: a takeover changes it, so a worker that outlived its
    # lease cannot overwrite the receipt of the one that took over.
    lease_token = models.CharField(max_length=32, blank=True, default="")
    expires_at = models.DateTimeField(null=True, blank=True)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    # The exact JSON text of the first answer, replayed byte for byte.
    response_body = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self.operation}:{self.key} ({self.state})"

    @property
    def body(self) -> dict[str, Any]:
        """The stored receipt's body ({} while the work is in progress)."""
        return json.loads(self.response_body) if self.response_body else {}


class RequestRecord(IdempotencyRecordBase):
    """The generic apps' own writes that take an Idempotency-Key: starting a run
    (`runs/`) and posting a chat message. A domain keeps its writes in its own table."""

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "operation", "key"], name="request_idempotency_key")]
