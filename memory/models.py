"""Memory L2 and L3 (DESIGN.md §2): traceable facts with their receipts, and the
experience distilled from them. Context, never authority."""
from django.db import models
from django.utils.translation import gettext_lazy as _

from config.ids import BusinessIdField
from config.words import value_text


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
    tool_call = models.ForeignKey("workflows.ToolCall", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("memory item"), _("memory items")
        db_table = "agents_memoryitem"  # moved from agents with its rows
        ordering = ["created_at"]
        constraints = [models.UniqueConstraint(fields=["tenant", "layer", "kind", "approval"],
                                               name="memory_receipt_unique")]

    def __str__(self) -> str:
        return f"{self.layer} · {self.kind}: {value_text(self.text, limit=60)}"


class WorkingMemory(models.Model):
    """Memory L1 (DESIGN.md §2): the working set of one step as it decided — what it read
    (consumed values, the user's earlier statements, recalled experience) and what it chose,
    each item with its evidence. One record per step and plan version, rewritten if the step
    runs again. Context, never authority."""

    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="+")
    run = models.ForeignKey("workflows.Run", on_delete=models.CASCADE, related_name="working_memory")
    node = models.OneToOneField("workflows.Node", on_delete=models.CASCADE, related_name="working_memory")
    step = models.CharField(max_length=60)
    items = models.JSONField(default=list, help_text="[{kind, text, evidence}]: what the step had in mind")
    decision = models.TextField(blank=True, help_text="what the step chose, in words")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name, verbose_name_plural = _("working memory"), _("working memories")
        ordering = ["run", "updated_at"]

    def __str__(self) -> str:
        return f"{self.step} (run {self.run_id})"
