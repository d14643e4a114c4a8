"""The expense system of record: claims, their invoices, every status
change of a claim, and the idempotency records its writes go through. A claim's id is
the `application_id` the agent carries from the create call to upload and submit."""
from decimal import Decimal

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from config.ids import BusinessIdField
from idempotency.models import IdempotencyRecordBase


class Category(models.TextChoices):
    LODGING = "lodging", _("Lodging")
    MEALS = "meals", _("Meals")
    TRANSPORT = "transport", _("Transport")
    OTHER = "other", _("Other")


class ClaimStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    SUBMITTED = "submitted", _("Submitted")
    APPROVED = "approved", _("Approved")
    REJECTED = "rejected", _("Rejected")
    PAID = "paid", _("Paid")


class PolicyVerdict(models.TextChoices):
    UNCHECKED = "", _("Not checked")
    WITHIN = "within_limit", _("Within the policy limit")
    OVER = "over_limit", _("Over the policy limit")
    NO_POLICY = "no_policy", _("No policy limit found")


class ExpenseClaim(models.Model):
    id = BusinessIdField()
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="expense_claims")
    claimant = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    category = models.CharField(max_length=20, choices=Category.choices)
    city = models.CharField(max_length=80)
    start_date = models.DateField()
    end_date = models.DateField()
    nights = models.PositiveIntegerField(default=0)
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    currency = models.CharField(max_length=3, default="CNY")
    description = models.CharField(max_length=500, blank=True)
    status = models.CharField(max_length=20, choices=ClaimStatus.choices, default=ClaimStatus.DRAFT)
    # What the policy check found when the claim was submitted (the system of record's own copy).
    policy_verdict = models.CharField(max_length=20, choices=PolicyVerdict.choices, blank=True, default="")
    policy_limit = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    policy_source = models.CharField(max_length=80, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name, verbose_name_plural = _("expense claim"), _("expense claims")  # the admin, in the reader's language
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.get_category_display()} {self.city} {self.amount} {self.currency}"

    @property
    def per_night(self):
        return (Decimal(self.amount) / self.nights).quantize(Decimal("0.01")) if self.nights else None


class ClaimTransition(models.Model):
    """Every status change of a claim (written by expenses.records.services._claim_transition only)."""

    claim = models.ForeignKey(ExpenseClaim, on_delete=models.CASCADE, related_name="transitions")
    from_status = models.CharField(max_length=20)
    to_status = models.CharField(max_length=20)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    approval_id = models.BigIntegerField(null=True, blank=True, help_text="the decided approval the agent wrote under")
    reason = models.TextField(blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("claim status change"), _("claim status changes")
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"{self.from_status or '—'} → {self.to_status}"


class Invoice(models.Model):
    """An uploaded invoice (PDF, PNG or JPEG), stored in the database with its SHA-256:
    it commits or rolls back with the claim it belongs to. `claim` is empty while the
    file waits to be filed by a run (an attachment to a chat message)."""

    id = BusinessIdField()
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="+")
    claim = models.ForeignKey(ExpenseClaim, null=True, blank=True, on_delete=models.CASCADE, related_name="invoices")
    filename = models.CharField(max_length=200)
    content_type = models.CharField(max_length=60)
    size = models.PositiveIntegerField()
    checksum = models.CharField(max_length=64)
    content = models.BinaryField()
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("invoice"), _("invoices")  # the admin, in the reader's language
        ordering = ["created_at"]

    def __str__(self) -> str:
        return self.filename


class IdempotencyRecord(IdempotencyRecordBase):
    """key → request hash → receipt, unique per tenant and operation (DESIGN.md §4), through
    idempotency.services.idempotent. Every expense write is one transaction, record
    included: a concurrent second request with the key waits on the unique index and then
    replays the receipt."""

    class Meta:
        verbose_name, verbose_name_plural = _("idempotency record"), _("idempotency records")  # the admin, in the reader's language
        constraints = [models.UniqueConstraint(fields=["tenant", "operation", "key"], name="expenses_idempotency_key")]
