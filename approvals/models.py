"""The durable approval gate: a request bound to a node, the hash of its fully
resolved arguments, and a deadline. Decided once."""
from django.conf import settings
from django.db import models

from config.ids import BusinessIdField


class ApprovalStatus(models.TextChoices):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"
    SUPERSEDED = "superseded"


class ApprovalRequest(models.Model):
    id = BusinessIdField()
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="approval_requests")
    run = models.ForeignKey("workflows.Run", on_delete=models.CASCADE, related_name="approvals")
    node = models.ForeignKey("workflows.Node", on_delete=models.CASCADE, related_name="approvals")
    tool = models.CharField(max_length=60)
    arguments = models.JSONField(help_text="the fully resolved arguments the approver sees")
    arguments_hash = models.CharField(max_length=64)
    summary = models.TextField(blank=True)
    diff = models.JSONField(null=True, blank=True)
    status = models.CharField(max_length=20, choices=ApprovalStatus.choices, default=ApprovalStatus.PENDING)
    deadline = models.DateTimeField()
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    comment = models.TextField(blank=True)
    replan = models.BooleanField(default=False)
    superseded_by = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["deadline"]
        indexes = [models.Index(fields=["status", "deadline"])]


class ApprovalDecision(models.Model):
    """Every decision attempt, the accepted one and the refused later ones alike."""

    approval = models.ForeignKey(ApprovalRequest, on_delete=models.CASCADE, related_name="decisions")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    verdict = models.CharField(max_length=20)
    accepted = models.BooleanField()
    comment = models.TextField(blank=True)
    at = models.DateTimeField(auto_now_add=True)
