"""The timeline: Conversation → Activity → Frame, and the append-only Event log.

Frames carry what a business user may see (summary, status, timing); what only
developers may see (prompts, arguments, receipts) lives apart in FramePayload.
Columns follow OpenTelemetry's gen_ai.* names where one exists."""
from django.conf import settings
from django.db import models
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from config.ids import BusinessIdField
from config.words import words_render

from .shown import activity_title_shown


class Conversation(models.Model):
    id = BusinessIdField()
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="conversations")
    started_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    title = models.CharField(max_length=200, blank=True)
    last_seq = models.BigIntegerField(default=0, help_text="sequence of the newest event; events are gapless")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("conversation"), _("conversations")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.title or gettext("Conversation %(id)s") % {"id": self.id}


class Activity(models.Model):
    """One turn of the conversation, or one step group of a run (a node's work)."""

    class Kind(models.TextChoices):
        MESSAGE = "message", _("message")
        RUN = "run", _("run")
        NODE = "node", _("step")

    id = BusinessIdField()
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="activities",
                                     verbose_name=_("conversation"))
    kind = models.CharField(_("kind"), max_length=20, choices=Kind.choices)
    title = models.CharField(_("title"), max_length=200)
    summary = models.TextField(_("summary (English)"), blank=True,
                               help_text="safe for business users; English, for search and logs")
    summary_words = models.JSONField(_("summary as words"), null=True, blank=True,
                                     help_text="the summary as meaning (config.words), rendered for each reader")
    status = models.CharField(_("status"), max_length=30, default="in_progress")
    intent = models.CharField(_("intent"), max_length=20, blank=True)
    route = models.CharField(_("route"), max_length=40, blank=True)
    run = models.ForeignKey("workflows.Run", null=True, blank=True, on_delete=models.CASCADE, related_name="activities",
                            verbose_name=_("run"))
    node_key = models.CharField(_("step key"), max_length=60, blank=True)
    started_at = models.DateTimeField(_("started at"), auto_now_add=True)
    ended_at = models.DateTimeField(_("ended at"), null=True, blank=True)
    # Rollups kept by frame_record, so a page shows totals without reading every frame.
    frame_count = models.IntegerField(default=0)
    error_count = models.IntegerField(default=0)
    tokens_in = models.BigIntegerField(default=0)
    tokens_out = models.BigIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, default=0)
    latency_ms = models.FloatField(default=0, help_text="sum of the frames' latencies")
    frames_from = models.DateTimeField(null=True, blank=True, help_text="start of the earliest frame")
    frames_until = models.DateTimeField(null=True, blank=True, help_text="end of the latest frame")

    class Meta:
        ordering = ["started_at"]
        verbose_name, verbose_name_plural = _("activity"), _("activities")

    def __str__(self) -> str:
        return activity_title_shown(self)  # in the reader's language: a step by its blueprint's title

    @property
    def summary_shown(self) -> str:
        """The summary in the reader's (the active) language."""
        return words_render(self.summary_words or self.summary)

    @property
    def links(self) -> dict[str, list[str]]:
        """Business objects touched: {kind: [ids]} (tool calls, approvals, …), in link order."""
        out: dict[str, list[str]] = {}
        for kind, object_id in self.link_rows.order_by("id").values_list("kind", "object_id"):
            out.setdefault(kind, []).append(object_id)
        return out


class ActivityLink(models.Model):
    """One business object an Activity touched. A row per link, inserted or ignored:
    two workers linking at once can neither lose the other's link nor double it
    (a JSON list on the Activity would be read-modify-written)."""

    activity = models.ForeignKey(Activity, on_delete=models.CASCADE, related_name="link_rows")
    kind = models.CharField(max_length=40)
    object_id = models.CharField(max_length=64)

    class Meta:
        verbose_name, verbose_name_plural = _("activity link"), _("activity links")
        constraints = [models.UniqueConstraint(fields=["activity", "kind", "object_id"], name="activity_link_unique")]

    def __str__(self) -> str:
        return f"{self.kind} {self.object_id}"


class Frame(models.Model):
    class Kind(models.TextChoices):
        INTENT = "intent", _("intent")
        ROUTE = "route", _("route")
        MODEL_CALL = "model_call", _("model call")
        THOUGHT = "thought", _("thought")
        ACTION = "action", _("action")
        OBSERVATION = "observation", _("observation")
        TOOL_CALL = "tool_call", _("tool call")
        STATE_CHANGE = "state_change", _("state change")
        APPROVAL = "approval", _("approval")
        PROVENANCE = "provenance", _("provenance")
        VALIDATION = "validation", _("validation")
        PLAN = "plan", _("plan")
        ERROR = "error", _("error")
        MEMORY = "memory", _("memory")

    class Status(models.TextChoices):
        OK = "ok", _("ok")
        ERROR = "error", _("error")
        WAITING = "waiting", _("waiting")

    class Level(models.TextChoices):
        INFO = "info", _("info")
        WARNING = "warning", _("warning")
        ERROR = "error", _("error")

    id = BusinessIdField()
    activity = models.ForeignKey(Activity, on_delete=models.CASCADE, related_name="frames", verbose_name=_("activity"))
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="children",
                               verbose_name=_("parent frame"))
    kind = models.CharField(_("kind"), max_length=20, choices=Kind.choices)
    name = models.CharField(_("name"), max_length=120)
    status = models.CharField(_("status"), max_length=20, choices=Status.choices, default="ok")
    level = models.CharField(_("level"), max_length=10, choices=Level.choices, default="info")
    summary = models.TextField(_("summary (English)"), blank=True,
                               help_text="safe for business users; English, for search and logs")
    summary_words = models.JSONField(_("summary as words"), null=True, blank=True,
                                     help_text="the summary as meaning (config.words), rendered for each reader")
    started_at = models.DateTimeField(_("started at"))
    first_token_at = models.DateTimeField(_("first token at"), null=True, blank=True)
    ended_at = models.DateTimeField(_("ended at"), null=True, blank=True)
    latency_ms = models.FloatField(_("latency (ms)"), default=0)
    # OpenTelemetry gen_ai.* semantic conventions
    gen_ai_operation_name = models.CharField(_("operation"), max_length=40, blank=True)
    gen_ai_provider_name = models.CharField(_("model provider"), max_length=40, blank=True)
    gen_ai_request_model = models.CharField(_("model"), max_length=120, blank=True)
    gen_ai_usage_input_tokens = models.IntegerField(_("input tokens"), default=0)
    gen_ai_usage_output_tokens = models.IntegerField(_("output tokens"), default=0)
    gen_ai_tool_name = models.CharField(_("tool name"), max_length=80, blank=True)
    gen_ai_tool_call_id = models.CharField(_("tool call id"), max_length=40, blank=True)
    cost = models.DecimalField(_("cost"), max_digits=12, decimal_places=6, default=0)

    @property
    def summary_shown(self) -> str:
        """The summary in the reader's (the active) language."""
        return words_render(self.summary_words or self.summary)

    class Meta:
        verbose_name, verbose_name_plural = _("frame"), _("frames")
        ordering = ["started_at", "id"]
        # Serves the keyset page (WHERE activity … ORDER BY started_at, id LIMIT n) without a sort.
        indexes = [models.Index(fields=["activity", "started_at", "id"], name="frame_activity_page")]

    def __str__(self) -> str:
        return self.name


class FramePayload(models.Model):
    """Prompts, model output, tool arguments and receipts: developers only."""

    frame = models.OneToOneField(Frame, on_delete=models.CASCADE, primary_key=True, related_name="payload")
    data = models.JSONField(default=dict)

    class Meta:
        verbose_name, verbose_name_plural = _("frame payload"), _("frame payloads")

    def __str__(self) -> str:
        return f"payload of frame {self.frame_id}"


class Event(models.Model):
    """Append-only; seq is gapless per conversation. Browsers resume by seq."""

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="events",
                                     verbose_name=_("conversation"))
    seq = models.BigIntegerField(_("sequence"))
    type = models.CharField(_("type"), max_length=60)
    run = models.ForeignKey("workflows.Run", null=True, blank=True, on_delete=models.CASCADE, related_name="events",
                            verbose_name=_("run"))
    data = models.JSONField(_("data"), default=dict)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("event"), _("events")
        ordering = ["conversation", "seq"]
        constraints = [models.UniqueConstraint(fields=["conversation", "seq"], name="event_seq_unique")]

    def __str__(self) -> str:
        return f"#{self.seq} {self.type}"


class WiringCheck(models.Model):
    """A round trip through every moving part: request → commit → broker →
    worker → database → channel layer → websocket. The home page offers it so
    anyone can see, in the browser, that the deployment is whole."""

    id = BusinessIdField()
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="wiring_checks")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=200, blank=True, help_text="hostname of the worker that ran it")

    class Meta:
        verbose_name, verbose_name_plural = _("wiring check"), _("wiring checks")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"wiring check {self.id} · " + (f"done by {self.worker}" if self.completed_at else "waiting")


class ExportedSpan(models.Model):
    """A record (a run's or a step's Activity, a model or tool call's Frame) already handed to the
    OpenTelemetry exporter (timeline/otel.py): spans go out as their records end, each once, even
    when two workers export the same run at the same time."""

    id = models.BigIntegerField(primary_key=True, help_text="the Activity's or Frame's id")
    run_id = models.BigIntegerField(db_index=True)

    class Meta:
        verbose_name, verbose_name_plural = _("exported span"), _("exported spans")

    def __str__(self) -> str:
        return f"span {self.id} (run {self.run_id})"
