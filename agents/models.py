"""Tool calls and state coordinates with provenance (seed 000 §5, DESIGN.md §5)."""
from django.db import models

from config.ids import BusinessIdField


class ToolCall(models.Model):
    class Status(models.TextChoices):
        STARTED = "started"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    id = BusinessIdField()
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="+")
    run = models.ForeignKey("workflows.Run", on_delete=models.CASCADE, related_name="tool_calls")
    node = models.ForeignKey("workflows.Node", on_delete=models.CASCADE, related_name="tool_calls")
    tool = models.CharField(max_length=60)
    arguments = models.JSONField(default=dict, help_text="fully resolved arguments")
    result = models.JSONField(null=True, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.STARTED)
    error = models.TextField(blank=True)
    idempotency_key = models.CharField(max_length=120)
    approval_id = models.BigIntegerField(null=True, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    latency_ms = models.FloatField(default=0)

    class Meta:
        ordering = ["started_at"]
        constraints = [models.UniqueConstraint(fields=["node", "idempotency_key"], name="tool_call_key_unique")]


class StateCoordinate(models.Model):
    """{scope, key, value, producer, call_id, receipt_ref}: scope is tenant + run."""

    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="+")
    run = models.ForeignKey("workflows.Run", on_delete=models.CASCADE, related_name="coordinates")
    key = models.CharField(max_length=60)
    value = models.JSONField()
    producer = models.CharField(max_length=60)
    call = models.ForeignKey(ToolCall, on_delete=models.PROTECT, related_name="produced")
    receipt_ref = models.CharField(max_length=200)
    plan_version = models.IntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [models.UniqueConstraint(fields=["run", "key", "plan_version"], name="coordinate_unique")]


class CoordinateConsumption(models.Model):
    coordinate = models.ForeignKey(StateCoordinate, on_delete=models.CASCADE, related_name="consumptions")
    call = models.ForeignKey(ToolCall, on_delete=models.CASCADE, related_name="consumed")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["coordinate", "call"], name="consumption_unique")]


class ProvenanceBlock(models.Model):
    """A supplied value that differed from its coordinate: refused and counted."""

    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="+")
    run = models.ForeignKey("workflows.Run", on_delete=models.CASCADE, related_name="provenance_blocks")
    node = models.ForeignKey("workflows.Node", on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=60)
    supplied = models.TextField()
    expected = models.TextField()
    reason = models.TextField()
    at = models.DateTimeField(auto_now_add=True)
