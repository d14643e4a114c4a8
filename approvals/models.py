"""The durable approval gate: a request bound to a node, the hash of its fully
resolved arguments, and a deadline. Decided once."""
from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from config.ids import BusinessIdField
from config.words import words_render


class ApprovalStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    APPROVED = "approved", _("Approved")
    REJECTED = "rejected", _("Rejected")
    EXPIRED = "expired", _("Expired")
    SUPERSEDED = "superseded", _("Superseded")


class ApprovalRequest(models.Model):
    id = BusinessIdField()
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="approval_requests",
                               verbose_name=_("tenant"))
    run = models.ForeignKey("workflows.Run", on_delete=models.CASCADE, related_name="approvals", verbose_name=_("run"))
    node = models.ForeignKey("workflows.Node", on_delete=models.CASCADE, related_name="approvals",
                             verbose_name=_("node"))
    tool = models.CharField(_("tool"), max_length=60)
    arguments = models.JSONField(_("arguments"), help_text="the fully resolved arguments the approver sees")
    arguments_hash = models.CharField(_("argument hash"), max_length=64)
    summary = models.TextField(_("summary (English)"), blank=True, help_text="English, for search and logs")
    summary_words = models.JSONField(_("summary as words"), null=True, blank=True,
                                     help_text="the summary as meaning (config.words), rendered for each reader")
    diff = models.JSONField(_("diff"), null=True, blank=True)
    status = models.CharField(_("status"), max_length=20, choices=ApprovalStatus.choices,
                              default=ApprovalStatus.PENDING)
    deadline = models.DateTimeField(_("deadline"))
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+",
                                     verbose_name=_("requested by"))
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="+", verbose_name=_("decided by"))
    decided_at = models.DateTimeField(_("decided at"), null=True, blank=True)
    comment = models.TextField(_("comment"), blank=True)
    replan = models.BooleanField(_("replan"), default=False)
    superseded_by = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                                      verbose_name=_("superseded by"))
    # The approval matrix's answer for this request: who may approve it and why.
    # Kept current while pending (a matrix edit re-routes), frozen by the decision.
    allowed_roles = models.JSONField(_("allowed roles"), default=list, blank=True)
    needs_role = models.CharField(_("needs role"), max_length=20, default="approver")
    routing_reason = models.TextField(_("routing reason (English)"), blank=True,
                                      help_text="English, for search and logs")
    routing_reason_words = models.JSONField(_("routing reason as words"), null=True, blank=True,
                                            help_text="the routing reason as meaning (config.words)")
    # Size of what the step touches, as the tool's preview measured it: what the matrix's limits compare.
    measures = models.JSONField(_("measures"), default=dict, blank=True)
    decided_role = models.CharField(_("decided role"), max_length=20, blank=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("approval request"), _("approval requests")
        ordering = ["deadline"]
        indexes = [models.Index(fields=["status", "deadline"])]

    def __str__(self) -> str:
        return f"{self.tool} · {self.status}"

    @property
    def routing_reason_shown(self) -> str:
        """Why the matrix routed it, in the reader's language (a row routed before words existed: as stored)."""
        return words_render(self.routing_reason_words or self.routing_reason)

    @property
    def summary_shown(self) -> str:
        """What it does, in the reader's language (a row stored before words existed: as stored)."""
        return words_render(self.summary_words or self.summary)


class ApprovalDecision(models.Model):
    """Every decision attempt, the accepted one and the refused later ones alike."""

    approval = models.ForeignKey(ApprovalRequest, on_delete=models.CASCADE, related_name="decisions",
                                 verbose_name=_("approval"))
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+",
                             verbose_name=_("user"))
    verdict = models.CharField(_("verdict"), max_length=20)
    accepted = models.BooleanField(_("accepted"))
    comment = models.TextField(_("comment"), blank=True)
    at = models.DateTimeField(_("time"), auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("approval decision"), _("approval decisions")

    def __str__(self) -> str:
        return f"{self.verdict} · {'accepted' if self.accepted else 'refused'}"


class ApprovalRule(models.Model):
    """One row of a tenant's approval matrix: which roles may approve a tool, how
    long an approval of it may wait, when to remind, and above which size it
    needs a stronger role: a limit per measure the tool declares (`Tool.measures`)."""

    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="approval_rules",
                               verbose_name=_("tenant"))
    tool = models.CharField(_("tool"), max_length=60)
    roles = models.JSONField(_("roles"), default=list, help_text="roles that may approve below every threshold")
    deadline_seconds = models.PositiveIntegerField(_("deadline (seconds)"), default=24 * 3600)
    remind_before_seconds = models.PositiveIntegerField(_("remind before (seconds)"), default=2 * 3600)
    limits = models.JSONField(_("limits"), default=dict, blank=True,
                              help_text="measure name → its limit (a decimal string); a larger value needs "
                                        "above_limit_role. The tool declares its measures (Tool.measures)")
    above_limit_role = models.CharField(_("above limit role"), max_length=20, default="admin")
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+", verbose_name=_("updated by"))
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        verbose_name, verbose_name_plural = _("approval rule"), _("approval rules")
        ordering = ["tool"]
        constraints = [models.UniqueConstraint(fields=["tenant", "tool"], name="approvals_rule_tenant_tool")]

    def __str__(self) -> str:
        return f"{self.tool}: {', '.join(self.roles)}"


class ApprovalReminder(models.Model):
    """A reminder sent before an approval's deadline. One per approval: the unique
    constraint is what makes two sweepers racing send it once."""

    approval = models.OneToOneField(ApprovalRequest, on_delete=models.CASCADE, related_name="reminder",
                                    verbose_name=_("approval"))
    recipients = models.JSONField(_("recipients"), default=list)
    sent_at = models.DateTimeField(_("sent at"), auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("approval reminder"), _("approval reminders")

    def __str__(self) -> str:
        return f"reminder for approval {self.approval_id}"
