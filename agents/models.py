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


# --- The conversation front (seed 000 §4, §8) ------------------------------------------------

class Message(models.Model):
    """One turn of a conversation as the user typed it or Keel answered it: the history."""

    class Role(models.TextChoices):
        USER = "user"
        ASSISTANT = "assistant"

    id = BusinessIdField()
    conversation = models.ForeignKey("timeline.Conversation", on_delete=models.CASCADE, related_name="messages")
    activity = models.ForeignKey("timeline.Activity", null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="+")
    role = models.CharField(max_length=20, choices=Role.choices)
    text = models.TextField()
    intent = models.CharField(max_length=20, blank=True)
    run = models.ForeignKey("workflows.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    attachment_name = models.CharField(max_length=200, blank=True)
    attachment_rows = models.IntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "role"]


class Anchor(models.Model):
    """The original goal of a conversation's task, in the user's words. Narrative only."""

    conversation = models.OneToOneField("timeline.Conversation", on_delete=models.CASCADE, related_name="anchor")
    goal = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)


class LedgerEntry(models.Model):
    """Append-only material progress ("the template has been matched"). Never an id."""

    conversation = models.ForeignKey("timeline.Conversation", on_delete=models.CASCADE, related_name="ledger")
    run = models.ForeignKey("workflows.Run", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    milestone = models.CharField(max_length=80, help_text="what happened, as a key: one entry per milestone")
    text = models.CharField(max_length=300)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["at", "id"]
        constraints = [models.UniqueConstraint(fields=["conversation", "run", "milestone"],
                                               name="ledger_milestone_unique")]


class MemoryItem(models.Model):
    """Memory L2 (a traceable fact with its receipt) and L3 (experience distilled across
    runs, keeping the id of its L2 evidence). Scoped per tenant. Context, never authority:
    an approval is only ever an ApprovalRequest row."""

    class Layer(models.TextChoices):
        L2 = "L2"
        L3 = "L3"

    id = BusinessIdField()
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="+")
    layer = models.CharField(max_length=2, choices=Layer.choices)
    kind = models.CharField(max_length=40, help_text="e.g. template_approved, template_preference")
    text = models.TextField(help_text="the statement, in words; no business ids")
    signature = models.JSONField(default=dict, help_text="what kind of request it is about")
    data = models.JSONField(default=dict, help_text="program values (e.g. the template) — never shown to the model")
    evidence = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="distilled")
    approval = models.ForeignKey("approvals.ApprovalRequest", null=True, blank=True, on_delete=models.CASCADE,
                                 related_name="+")
    tool_call = models.ForeignKey(ToolCall, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [models.UniqueConstraint(fields=["tenant", "layer", "kind", "approval"],
                                               name="memory_receipt_unique")]


class Exploration(models.Model):
    """A ReAct exploration waiting for the user: run state, not a business record. It
    holds the scratchpad and counters between turns and is deleted when it ends."""

    conversation = models.OneToOneField("timeline.Conversation", on_delete=models.CASCADE,
                                        related_name="exploration")
    request = models.TextField()
    requirements = models.JSONField(default=dict)
    scratchpad = models.JSONField(default=list)
    iterations = models.IntegerField(default=0)
    question = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)
