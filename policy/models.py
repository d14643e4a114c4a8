"""The policy corpus (documents, dated versions, numbered lines in each language) and the
answer cache of the exact-graph policy workflow ("KA-5", DESIGN.md §2)."""
from django.db import models
from django.utils.translation import gettext_lazy as _

from config.words import value_text
from tenants.models import Tenant


class PolicyDocument(models.Model):
    """One policy of one tenant ("travel"); its text lives in versions."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="policy_documents")
    topic = models.SlugField(max_length=40)
    title = models.CharField(max_length=200)
    authority = models.CharField(max_length=200, help_text="Who issues the policy; verification requires one.")

    class Meta:
        verbose_name, verbose_name_plural = _("policy document"), _("policy documents")
        ordering = ["tenant_id", "topic"]
        constraints = [models.UniqueConstraint(fields=["tenant", "topic"], name="policy_document_tenant_topic")]

    def __str__(self) -> str:
        return f"{self.title} ({self.topic})"  # its own fields: no query per row where it is listed


class PolicyVersion(models.Model):
    """A dated version. A version is in force on a date inside [effective_from, effective_to]
    unless a later version in force on that date replaces it."""

    document = models.ForeignKey(PolicyDocument, on_delete=models.CASCADE, related_name="versions")
    label = models.SlugField(max_length=40, help_text="travel-v2")
    effective_from = models.DateField()
    effective_to = models.DateField(null=True, blank=True)
    replaces = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="replaced_by")

    class Meta:
        verbose_name, verbose_name_plural = _("policy version"), _("policy versions")
        ordering = ["document_id", "-effective_from"]
        constraints = [models.UniqueConstraint(fields=["document", "label"], name="policy_version_label")]

    def __str__(self) -> str:
        return self.label


class LineRole(models.TextChoices):
    UNIT = "unit", "States the unit"
    EFFECTIVE = "effective", "States the effective date"
    AMOUNT = "amount", "States an amount"
    NOTE = "note", "Other text"


class PolicyLine(models.Model):
    """One numbered line of a version in one language. An amount line carries its amount
    and the terms a question must contain for the line to answer it (`subject_terms`: a
    list of alternatives groups, every group must match)."""

    version = models.ForeignKey(PolicyVersion, on_delete=models.CASCADE, related_name="lines")
    lang = models.CharField(max_length=8)
    number = models.PositiveIntegerField()
    text = models.TextField()
    role = models.CharField(max_length=16, choices=LineRole.choices)
    amount = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    unit = models.CharField(max_length=80, blank=True)
    subject_terms = models.JSONField(default=list, blank=True)

    class Meta:
        verbose_name, verbose_name_plural = _("policy line"), _("policy lines")
        ordering = ["version_id", "lang", "number"]
        constraints = [models.UniqueConstraint(fields=["version", "lang", "number"], name="policy_line_number")]

    def __str__(self) -> str:
        return f"L{self.number} ({self.lang})"  # its own fields: the inline lists a version's lines


class PolicyAnswerCache(models.Model):
    """A finished answer, reusable while every input that can change it is unchanged:
    the key hashes question, date, topic, language, corpus version, processing version
    and tenant, so a new policy version or a changed workflow is never answered from an older
    answer, nor one tenant from another's."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="policy_answers")
    key = models.CharField(max_length=64)
    question = models.TextField()
    on_date = models.DateField()
    topic = models.SlugField(max_length=40)
    lang = models.CharField(max_length=8)
    corpus_version = models.CharField(max_length=64)
    processing_version = models.CharField(max_length=200)
    result = models.JSONField()
    hits = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("cached policy answer"), _("cached policy answers")
        constraints = [models.UniqueConstraint(fields=["tenant", "key"], name="policy_answer_cache_key")]

    def __str__(self) -> str:
        return value_text(self.question, limit=60)
