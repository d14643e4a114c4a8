"""The conversation front's records: messages, the Anchor and Ledger, memory, explorations."""
from django.conf import settings
from django.db import models
from django.db.models import F
from django.utils.translation import gettext_lazy as _

from config.ids import BusinessIdField
from config.words import words_render

# --- The conversation front (control signal, memory: DESIGN.md §2) ---------------------------

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
    # Who typed it: a conversation is shared within a tenant, so it is not always its starter.
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="+")
    text = models.TextField(help_text="as typed, or Keel's message in English (for search and API clients)")
    # Keel's message as meaning (config.words), rendered in each reader's language; null for
    # what a person typed and for messages stored as prose before words existed.
    words = models.JSONField(null=True, blank=True)
    # Keel's message may offer answers as buttons ({label, label_en, label_zh, answer}) and a link.
    options = models.JSONField(default=list, blank=True)
    link = models.JSONField(default=dict, blank=True)
    # Keel's reply: what the person's message was understood as once the turn was done ("answer",
    # "change", "cancel", or the classifier's signal) — the chat's chip. `intent` keeps the
    # classifier's first reading, which an answer to a question ("the first one") does not match.
    understood = models.CharField(max_length=20, blank=True)
    # A message about what a run did is posted once per event that caused it (redelivery-safe).
    news_of = models.CharField(max_length=40, blank=True)
    # The conversation's event a news message tells (its seq): events written in one
    # transaction share a moment, and the chat reads them in the order they happened.
    event_seq = models.BigIntegerField(null=True, blank=True)

    # The order a conversation's messages are read in: as they happened, news of one moment by
    # the events they tell (a rejection before the replan it caused).
    READ_ORDER = ("created_at", F("event_seq").asc(nulls_first=True), "id")
    intent = models.CharField(max_length=20, blank=True)
    run = models.ForeignKey("workflows.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    attachment_name = models.CharField(max_length=200, blank=True)
    attachment_rows = models.IntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    @property
    def text_shown(self) -> str:
        """The message in the reader's (the active) language: its words, else its text as written."""
        return words_render(self.words) if self.words is not None else self.text

    @property
    def link_shown(self) -> dict:
        """The link with its label in the reader's language ({} when there is none)."""
        if not (self.link or {}).get("href"):
            return {}
        label = self.link.get("label_words")
        return {"href": self.link["href"], "label": words_render(label) if label is not None else self.link.get("label", "")}

    class Meta:
        verbose_name, verbose_name_plural = _("message"), _("messages")
        ordering = ["created_at", "role"]
        constraints = [models.UniqueConstraint(fields=["conversation", "news_of"], condition=~models.Q(news_of=""),
                                               name="message_news_once")]

    def __str__(self) -> str:
        return _short(self.text)


class ConversationVisit(models.Model):
    """When a person last opened a conversation: the chat marks what came after as unread."""

    conversation = models.ForeignKey("timeline.Conversation", on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    seen_at = models.DateTimeField()

    class Meta:
        verbose_name, verbose_name_plural = _("conversation visit"), _("conversation visits")
        constraints = [models.UniqueConstraint(fields=["conversation", "user"], name="conversation_visit_once")]

    def __str__(self) -> str:
        return f"{self.user} · {self.conversation_id} · {self.seen_at:%Y-%m-%d %H:%M}"


class Anchor(models.Model):
    """The original goal of a conversation's task, in the user's words. Narrative only."""

    conversation = models.OneToOneField("timeline.Conversation", on_delete=models.CASCADE, related_name="anchor")
    goal = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("anchor"), _("anchors")

    def __str__(self) -> str:
        return _short(self.goal)


class LedgerEntry(models.Model):
    """Append-only material progress ("the template has been matched"). Never an id."""

    conversation = models.ForeignKey("timeline.Conversation", on_delete=models.CASCADE, related_name="ledger")
    run = models.ForeignKey("workflows.Run", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    milestone = models.CharField(max_length=80, help_text="what happened, as a key: one entry per milestone")
    text = models.CharField(max_length=300)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("ledger entry"), _("ledger entries")
        ordering = ["at", "id"]
        constraints = [models.UniqueConstraint(fields=["conversation", "run", "milestone"],
                                               name="ledger_milestone_unique")]

    def __str__(self) -> str:
        return self.milestone


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

    class Meta:
        verbose_name, verbose_name_plural = _("exploration"), _("explorations")

    def __str__(self) -> str:
        return _short(self.request)


# --- Replay (agents/replay.py) ----------------------------------------------------------------

class ReplayResult(models.Model):
    """What a replay of a recorded run found: kept after its sandbox tenant is deleted."""

    class Status(models.TextChoices):
        RUNNING = "running"
        COMPARED = "compared"
        ABANDONED = "abandoned"  # the replay never finished (a crash); its sandbox was cleaned up

    id = BusinessIdField()
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="+")
    run = models.ForeignKey("workflows.Run", on_delete=models.CASCADE, related_name="+")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.RUNNING)
    identical = models.BooleanField(null=True)
    differences = models.JSONField(default=list)
    recorded = models.JSONField(default=dict)
    replayed = models.JSONField(default=dict)
    sandbox_slug = models.CharField(max_length=60)
    sandbox_tenant = models.ForeignKey("tenants.Tenant", null=True, on_delete=models.SET_NULL, related_name="+",
                                       help_text="while the sandbox exists")
    sandbox_run_id = models.BigIntegerField(null=True)
    sandbox_deleted_at = models.DateTimeField(null=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("replay result"), _("replay results")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Replay of run {self.run_id}"


def _short(text: str, limit: int = 60) -> str:
    """The first `limit` characters of `text` on one line: a row's name in the admin."""
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"
