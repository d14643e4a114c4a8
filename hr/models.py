"""The HR Core system of record: TANs (hiring requests), the candidate bank,
persisted matches, the outbox of business events, and idempotency records.

Workflow state (a TAN's status, its matches) lives here and changes only through
hr.services; a matching run's scratchpad is agent run state and never lands here."""
from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from config.ids import BusinessIdField
from idempotency.models import IdempotencyRecordBase


class TanStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    APPROVED = "approved", _("Approved")
    CLOSED = "closed", _("Closed")


class Seniority(models.IntegerChoices):
    JUNIOR = 1, _("Junior")
    MID = 2, _("Mid-level")
    SENIOR = 3, _("Senior")
    LEAD = 4, _("Lead")


class Tan(models.Model):
    """A talent acquisition notice: a hiring request."""

    id = BusinessIdField()
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="tans")
    title = models.CharField(max_length=200)
    title_zh = models.CharField(max_length=200, blank=True)
    location = models.CharField(max_length=80)
    skills = models.JSONField(default=list, help_text="required skills, lower case")
    seniority = models.PositiveSmallIntegerField(choices=Seniority.choices, default=Seniority.MID)
    max_matches = models.PositiveSmallIntegerField(default=5)
    status = models.CharField(max_length=20, choices=TanStatus.choices, default=TanStatus.DRAFT)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    approved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                    related_name="+")
    approved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("TAN"), _("TANs")  # the admin, in the reader's language
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.title


class TanTransition(models.Model):
    tan = models.ForeignKey(Tan, on_delete=models.CASCADE, related_name="transitions")
    from_status = models.CharField(max_length=20)
    to_status = models.CharField(max_length=20)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("TAN status change"), _("TAN status changes")
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"{self.from_status or '—'} → {self.to_status}"


class Candidate(models.Model):
    """The CV bank (read-only to the matching skill)."""

    id = BusinessIdField()
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="candidates")
    name = models.CharField(max_length=200)
    name_zh = models.CharField(max_length=200, blank=True)
    headline = models.CharField(max_length=200, blank=True)
    headline_zh = models.CharField(max_length=200, blank=True)
    location = models.CharField(max_length=80)
    skills = models.JSONField(default=list)
    seniority = models.PositiveSmallIntegerField(choices=Seniority.choices, default=Seniority.MID)

    class Meta:
        verbose_name, verbose_name_plural = _("candidate"), _("candidates")  # the admin, in the reader's language
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["tenant", "name"], name="hr_candidate_tenant_name")]

    def __str__(self) -> str:
        return self.name


class Match(models.Model):
    """A persisted match_score row: one per TAN and candidate, ever."""

    id = BusinessIdField()
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="+")
    tan = models.ForeignKey(Tan, on_delete=models.CASCADE, related_name="matches")
    candidate = models.ForeignKey(Candidate, on_delete=models.CASCADE, related_name="matches")
    rank = models.PositiveSmallIntegerField()
    score = models.DecimalField(max_digits=5, decimal_places=3)
    features = models.JSONField(default=dict)
    explanation = models.TextField()
    explanation_zh = models.TextField(blank=True)
    run_id = models.BigIntegerField(null=True, blank=True, help_text="the matching run that persisted it")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("candidate match"), _("candidate matches")  # the admin, in the reader's language
        ordering = ["tan", "rank"]
        constraints = [models.UniqueConstraint(fields=["tan", "candidate"], name="hr_match_tan_candidate")]

    def __str__(self) -> str:
        return f"TAN {self.tan_id} · #{self.rank} · {self.score}"


class OutboxEvent(models.Model):
    """A business event, written in the transaction of the change it announces; the
    supervisor consumes it (hr.tasks), at least once, and marks it consumed exactly once."""

    class Type(models.TextChoices):
        TAN_APPROVED = "hr.tan.approved", _("TAN approved")

    id = BusinessIdField()
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="+")
    type = models.CharField(max_length=60, choices=Type.choices)
    tan = models.ForeignKey(Tan, on_delete=models.CASCADE, related_name="events")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    payload = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)
    consumed_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=200, blank=True, help_text="started run …, or why nothing was started")
    run_id = models.BigIntegerField(null=True, blank=True)

    class Meta:
        verbose_name, verbose_name_plural = _("outbox event"), _("outbox events")  # the admin, in the reader's language
        ordering = ["created_at"]
        indexes = [models.Index(fields=["consumed_at", "created_at"])]

    def __str__(self) -> str:
        return f"{self.type} · TAN {self.tan_id}"


class IdempotencyRecord(IdempotencyRecordBase):
    """key → request hash → receipt (idempotency.services.idempotent): one per match key."""

    class Meta:
        verbose_name, verbose_name_plural = _("idempotency record"), _("idempotency records")  # the admin, in the reader's language
        constraints = [models.UniqueConstraint(fields=["tenant", "operation", "key"], name="hr_idempotency_key")]
