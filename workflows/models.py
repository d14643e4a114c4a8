"""Runs, plan versions, task nodes and every state transition they went through.

A status is changed only by workflows.transitions (one function per state
machine): never assign `status` directly."""
from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from config.ids import BusinessIdField
from config.words import Stored, value_text, words_render


class RunStatus(models.TextChoices):
    # The labels are the console's status words (console/status.py), read in the admin's lists and filters.
    RUNNING = "running", _("Running")
    AWAITING_APPROVAL = "awaiting_approval", _("Awaiting Approval")
    AWAITING_INPUT = "awaiting_input", _("Awaiting Input")
    COMPLETED = "completed", _("Completed")
    FAILED = "failed", _("Failed")
    BLOCKED = "blocked", _("Blocked")
    ROLLED_BACK = "rolled_back", _("Rolled Back")
    STOPPED = "stopped", _("Stopped")
    CANCELLED = "cancelled", _("Cancelled")


RUN_TERMINAL = {RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.BLOCKED, RunStatus.ROLLED_BACK, RunStatus.STOPPED,
                RunStatus.CANCELLED}
# Terminal for good: no retry or cancel takes the run up again, so whatever the run
# held (a reserved group name, claimed employees) is given back. A failed or blocked
# run keeps its holds: a retry may still need them, and a cancel releases them.
RUN_FINAL = {RunStatus.COMPLETED, RunStatus.ROLLED_BACK, RunStatus.STOPPED, RunStatus.CANCELLED}


class Control(models.TextChoices):
    """Who holds control of the run now (the checkpoint's, DESIGN.md §2)."""

    ORCHESTRATOR = "orchestrator", _("orchestrator")
    EXECUTOR = "executor", _("executor")
    APPROVAL = "approval", _("approval")
    USER = "user", _("user")


class NodeStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    READY = "ready", _("Ready")
    IN_PROGRESS = "in_progress", _("In Progress")
    AWAITING_APPROVAL = "awaiting_approval", _("Awaiting Approval")
    AWAITING_INPUT = "awaiting_input", _("Awaiting Input")
    COMPLETED = "completed", _("Completed")
    FAILED = "failed", _("Failed")
    BLOCKED = "blocked", _("Blocked")


class Run(models.Model):
    id = BusinessIdField()
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="runs",
                               verbose_name=_("tenant"))
    conversation = models.ForeignKey("timeline.Conversation", on_delete=models.CASCADE, related_name="runs",
                                     verbose_name=_("conversation"))
    activity = models.ForeignKey("timeline.Activity", null=True, on_delete=models.SET_NULL, related_name="+",
                                 verbose_name=_("activity"))
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+",
                                   verbose_name=_("created by"))
    blueprint = models.CharField(_("blueprint"), max_length=60)
    params = models.JSONField(_("parameters"), default=dict)
    status = models.CharField(_("status"), max_length=20, choices=RunStatus.choices, default=RunStatus.RUNNING)
    status_reason = models.TextField(_("status reason"), blank=True)
    control = models.CharField(_("control"), max_length=20, choices=Control.choices, default=Control.ORCHESTRATOR)
    plan_version = models.IntegerField(_("plan version"), default=1)
    transition_count = models.IntegerField(_("transition count"), default=0)
    transition_cap = models.IntegerField(_("transition cap"), default=200)
    model_calls = models.IntegerField(_("model calls"), default=0)
    model_call_cap = models.IntegerField(_("model call cap"), default=20)
    # Set once by run_cancel ({by, reason, at}): the run compensates, then ends cancelled.
    cancel_requested = models.JSONField(_("cancel requested"), null=True, blank=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)

    class Meta:
        verbose_name, verbose_name_plural = _("run"), _("runs")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.blueprint} run {self.id}"


class Plan(models.Model):
    """One version of a run's task graph. Every version stays on record."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="plans", verbose_name=_("run"))
    version = models.IntegerField(_("version"))
    reason = models.TextField(_("reason"), blank=True)
    graph = models.JSONField(_("graph"), default=list, help_text="the nodes of this version: key, tool, depends_on")
    diff = models.JSONField(_("diff"), null=True, blank=True,
                            help_text="against the previous version: {kept, removed, added, why, trigger}")
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("plan"), _("plans")
        ordering = ["run", "version"]
        constraints = [models.UniqueConstraint(fields=["run", "version"], name="plan_version_unique")]

    def __str__(self) -> str:
        return f"run {self.run_id} · v{self.version}"


class Node(models.Model):
    id = BusinessIdField()
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="nodes", verbose_name=_("run"))
    plan_version = models.IntegerField(_("plan version"), help_text="the plan version that introduced this node")
    retired_in = models.IntegerField(_("retired in"), null=True, blank=True,
                                     help_text="the plan version that replaced it")
    key = models.CharField(_("step key"), max_length=60)
    position = models.IntegerField(_("position"), default=0,
                                   help_text="place in the blueprint: the order steps are shown and promoted")
    goal = models.CharField(_("goal"), max_length=200)
    goal_words = models.JSONField(_("goal as words"), null=True, blank=True,
                                  help_text="the goal as words (config.words), rendered for each reader; "
                                            "null: the goal reads as written")
    tool = models.CharField(_("tool"), max_length=60)
    depends_on = models.JSONField(_("depends on"), default=list)
    run_when = models.CharField(_("run when"), max_length=20, default="completed",
                                help_text="'completed': all dependencies completed; "
                                          "'failed': any dependency failed (compensation)")
    arguments = models.JSONField(_("arguments"), default=dict,
                                 help_text="proposed arguments; consumed keys come from coordinates")
    acceptance = models.JSONField(_("acceptance"), default=list,
                                  help_text="the blueprint's acceptance criteria for this step")
    acceptance_results = models.JSONField(_("acceptance results"), default=list,
                                          help_text="each check against the receipt: [{criterion, met, detail}]")
    status = models.CharField(_("status"), max_length=20, choices=NodeStatus.choices, default=NodeStatus.PENDING)
    status_reason = models.TextField(_("status reason"), blank=True)
    attempts = models.IntegerField(_("attempts"), default=0, help_text="how many times a worker claimed it")
    # The logical attempt: part of the idempotency key. A redelivery keeps it (the system
    # of record replays the receipt); a retry by a person raises it (a new request).
    attempt = models.IntegerField(_("attempt"), default=1)
    retries = models.IntegerField(_("retries"), default=0,
                                  help_text="transient failures retried with backoff in this attempt")
    result_ref = models.CharField(_("accepted on call"), max_length=40, blank=True,
                                  help_text="id of the tool call whose receipt completed it")
    question = models.JSONField(_("question"), null=True, blank=True,
                                help_text="what the user is asked while awaiting input")
    lease_owner = models.CharField(_("lease owner"), max_length=120, blank=True)
    lease_expires_at = models.DateTimeField(_("lease expires at"), null=True, blank=True)
    dispatched_at = models.DateTimeField(_("dispatched at"), null=True, blank=True)
    started_at = models.DateTimeField(_("started at"), null=True, blank=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)
    activity = models.ForeignKey("timeline.Activity", null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="+", verbose_name=_("activity"))

    class Meta:
        verbose_name, verbose_name_plural = _("node"), _("nodes")
        ordering = ["run", "position", "plan_version"]
        constraints = [models.UniqueConstraint(fields=["run", "key", "plan_version"], name="node_key_unique")]
        # A run's nodes by status: the hot path's promotion and "anything still active?"
        # read only the run's own rows, however many other runs are parked.
        indexes = [models.Index(fields=["status", "lease_expires_at"]),
                   models.Index(fields=["run", "status"], name="workflows_node_run_status")]

    def __str__(self) -> str:
        return f"{self.key} ({self.status})"

    @property
    def goal_meaning(self) -> Stored:
        """The goal as a summary stores it: words, or the goal as written (a node planned before words)."""
        return self.goal_words or self.goal

    @property
    def goal_shown(self) -> str:
        """The goal in the reader's (the active) language."""
        return words_render(self.goal_meaning)


class Transition(models.Model):
    """Every status change of a run or a node, written with its timeline event."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="transitions", verbose_name=_("run"))
    node = models.ForeignKey(Node, null=True, blank=True, on_delete=models.CASCADE, related_name="transitions",
                             verbose_name=_("node"))
    from_status = models.CharField(_("from status"), max_length=20)
    to_status = models.CharField(_("to status"), max_length=20)
    reason = models.TextField(_("reason"), blank=True)
    worker = models.CharField(_("worker"), max_length=120, blank=True)
    at = models.DateTimeField(_("time"), auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("transition"), _("transitions")
        ordering = ["at", "id"]

    def __str__(self) -> str:
        # The step's key when the admin has it at hand (TransitionAdmin select_related's the node).
        if self.node_id is None:
            who = "run"
        elif Transition.node.field.is_cached(self):
            who = self.node.key
        else:
            who = f"node {self.node_id}"
        return f"{who}: {self.from_status or '—'} → {self.to_status}"


# --- The tool runtime: calls and state coordinates with provenance (DESIGN.md §5) ---

class ToolCall(models.Model):
    class Status(models.TextChoices):
        STARTED = "started", _("Started")
        SUCCEEDED = "succeeded", _("Succeeded")
        FAILED = "failed", _("Failed")

    id = BusinessIdField()
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="+", verbose_name=_("tenant"))
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="tool_calls", verbose_name=_("run"))
    node = models.ForeignKey(Node, on_delete=models.CASCADE, related_name="tool_calls", verbose_name=_("node"))
    tool = models.CharField(_("tool"), max_length=60)
    arguments = models.JSONField(_("arguments"), default=dict, help_text="fully resolved arguments")
    result = models.JSONField(_("result"), null=True, blank=True)
    status = models.CharField(_("status"), max_length=20, choices=Status.choices, default=Status.STARTED)
    error = models.TextField(_("error"), blank=True)
    idempotency_key = models.CharField(_("idempotency key"), max_length=120)
    approval_id = models.BigIntegerField(_("approval id"), null=True, blank=True)
    started_at = models.DateTimeField(_("started at"), auto_now_add=True)
    ended_at = models.DateTimeField(_("ended at"), null=True, blank=True)
    latency_ms = models.FloatField(_("latency (ms)"), default=0)

    class Meta:
        verbose_name, verbose_name_plural = _("tool call"), _("tool calls")
        ordering = ["started_at"]
        constraints = [models.UniqueConstraint(fields=["node", "idempotency_key"], name="tool_call_key_unique")]

    def __str__(self) -> str:
        return f"{self.tool} · {self.status}"


class StateCoordinate(models.Model):
    """{scope, key, value, producer, call_id, receipt_ref}: scope is tenant + run."""

    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="+", verbose_name=_("tenant"))
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="coordinates", verbose_name=_("run"))
    key = models.CharField(_("state key"), max_length=60)
    value = models.JSONField(_("value"))
    producer = models.CharField(_("producer"), max_length=60)
    call = models.ForeignKey(ToolCall, on_delete=models.PROTECT, related_name="produced", verbose_name=_("call"))
    receipt_ref = models.CharField(_("receipt"), max_length=200)
    plan_version = models.IntegerField(_("plan version"), default=1)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("state coordinate"), _("state coordinates")
        ordering = ["created_at"]
        constraints = [models.UniqueConstraint(fields=["run", "key", "plan_version"], name="coordinate_unique")]

    def __str__(self) -> str:
        return f"{self.key} = {value_text(self.value, limit=60)} ({self.producer}, v{self.plan_version})"


class CoordinateConsumption(models.Model):
    coordinate = models.ForeignKey(StateCoordinate, on_delete=models.CASCADE, related_name="consumptions",
                                   verbose_name=_("coordinate"))
    call = models.ForeignKey(ToolCall, on_delete=models.CASCADE, related_name="consumed", verbose_name=_("call"))
    at = models.DateTimeField(_("time"), auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("coordinate consumption"), _("coordinate consumptions")
        constraints = [models.UniqueConstraint(fields=["coordinate", "call"], name="consumption_unique")]

    def __str__(self) -> str:
        return f"coordinate {self.coordinate_id} → call {self.call_id}"


class ProvenanceBlock(models.Model):
    """A supplied value that differed from its coordinate: refused and counted."""

    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="+", verbose_name=_("tenant"))
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="provenance_blocks", verbose_name=_("run"))
    node = models.ForeignKey(Node, on_delete=models.CASCADE, related_name="+", verbose_name=_("node"))
    key = models.CharField(_("state key"), max_length=60)
    supplied = models.TextField(_("supplied"))
    expected = models.TextField(_("expected"))
    reason = models.TextField(_("reason"))
    at = models.DateTimeField(_("time"), auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("provenance block"), _("provenance blocks")

    def __str__(self) -> str:
        return f"{self.key}: {value_text(self.supplied, limit=40)} ≠ {value_text(self.expected, limit=40)}"
