"""Reads that cross apps for the console's pages: the chat history, the run panel
(DAG, progress, what waits on whom), waits and the provenance trail. The record's
own reads stay in timeline.selectors; this module may read every layer below it."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.db.models import Sum
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from agents.models import Message
from agents.replies import capabilities
from approvals.models import ApprovalRequest
from approvals.services import approval_recipients
from config.words import Stored, value_text, words_render
from tenants.models import Membership
from timeline.models import Activity, Conversation, Event
from workflows.blueprints import step_title
from workflows.conversation import attachment_kinds, conversation_domains
from workflows.models import RUN_TERMINAL, Node, Plan, Run, StateCoordinate, ToolCall, Transition
from workflows.selectors import run_act_allowed, run_control_allowed
from workflows.tools import question_words

from .dag import Dag, dag_layout


@dataclass
class ChatLine:
    role: str  # "user" | "assistant"
    text: str
    intent: str = ""
    attachment_name: str = ""
    attachment_rows: int = 0
    author: str = ""  # who typed it (a conversation is shared within the tenant)
    options: list = field(default_factory=list)  # answers offered as buttons
    link: dict = field(default_factory=dict)
    unread: bool = False  # Keel's news that came after the reader's last visit
    reply_of: str = ""  # the message's activity, for Keel's reply to it: the page shows each reply once


def messages_for(conversation: Conversation, unread_since: datetime | None = None) -> list[ChatLine]:
    """The chat history: the conversation front's Message rows, its one source. Keel's
    messages after `unread_since` (the reader's last visit) are marked unread."""
    messages = list(Message.objects.filter(conversation=conversation).select_related("author")
                    .order_by(*Message.READ_ORDER))
    # Buttons only on the latest question: an answered one is history, not a control.
    last_asking = max((i for i, m in enumerate(messages) if m.options), default=None)
    answered = last_asking is not None and any(m.role == "user" for m in messages[last_asking + 1:])
    return [ChatLine(role=m.role, text=m.text_shown, intent=m.understood or m.intent, attachment_name=m.attachment_name,
                     attachment_rows=m.attachment_rows,
                     author=(m.author.get_full_name() or m.author.username) if m.author else "",
                     options=options_shown(m.options) if i == last_asking and not answered else [],
                     link=m.link_shown,
                     unread=unread_since is not None and m.role != "user" and m.created_at > unread_since,
                     reply_of=str(m.activity_id) if m.role != "user" and m.activity_id else "")
            for i, m in enumerate(messages)]


def options_shown(options: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Offered answers with their label in the reader's language (an option that names a
    thing in both, {label_en, label_zh}, shows the reader's; any other as it was stored)."""
    zh = (get_language() or "").lower().startswith("zh")
    shown = []
    for option in options or []:
        label = (option.get("label_zh") if zh else option.get("label_en")) or option.get("label") or ""
        shown.append({**option, "label": label})
    return shown


def frame_tools_for(conversation: Conversation) -> list[str]:
    """The tool names used in the conversation (for the filter menu), from the Activity links."""
    return sorted(set(ToolCall.objects.filter(run__conversation=conversation).values_list("tool", flat=True)))


# --- runs: the panel, the DAG, waits, provenance -----------------------------------------------

def latest_run_for(conversation: Conversation):
    return Run.objects.filter(conversation=conversation).order_by("-created_at", "-id").first()


@dataclass
class Wait:
    """An approval or input wait: its own segment on the timeline, with its duration."""

    kind: str  # "approval" | "input"
    node: str
    started_at: datetime
    ended_at: datetime | None
    outcome: str
    step: Stored = ""  # the step's name as words (its blueprint's title), for the reader
    withdrawn_by: Stored = ""  # a withdrawn wait: why the plan version that replaced its step was made

    @property
    def seconds(self) -> float:
        return ((self.ended_at or timezone.now()) - self.started_at).total_seconds()

    percent: float = 100.0  # of the longest wait shown beside it

    @property
    def label(self) -> str:
        return _("Approval wait") if self.kind == "approval" else _("Waiting for an answer")

    @property
    def outcome_label(self) -> str:
        if self.ended_at is None:
            return _("still waiting")
        if self.outcome == "withdrawn":
            if self.withdrawn_by:
                return _("withdrawn: %(why)s") % {"why": words_render(self.withdrawn_by)}
            return _("withdrawn by a new plan")
        if self.outcome == "ready":
            return _("approved") if self.kind == "approval" else _("answered")
        return {"blocked": _("refused or expired")}.get(self.outcome, self.outcome.replace("_", " "))


def node_statuses_for_runs(run_ids: list[int]) -> dict[tuple[int, str], str]:
    """(run id, step key) → the step's status now: its current node (a replan retires the old one)."""
    rows = Node.objects.filter(run_id__in=run_ids).values_list("run_id", "key", "status", "retired_in",
                                                                "plan_version", "id")
    out: dict[tuple[int, str], str] = {}
    for run_id, key, status, *_rest in sorted(rows, key=lambda r: (r[3] is None, r[4], r[5])):
        out[(run_id, key)] = status  # the last row per key wins: the newest, unretired node
    return out


def _withdrawn_close(open_: dict[tuple[int, str], Wait]) -> None:
    """A wait whose step a new plan version replaced (a rename while the card waited, an
    answer that changed the plan) is over: its node stays in its waiting state, retired, and
    no transition ends it, so it would read "still waiting" for ever. It ended when that
    version was made, withdrawn, for the version's reason."""
    retired = dict(Node.objects.filter(id__in={node_id for node_id, _status in open_}, retired_in__isnull=False)
                   .values_list("id", "retired_in"))
    if not retired:
        return
    nodes = dict(Node.objects.filter(id__in=retired).values_list("id", "run_id"))
    plans = {(p.run_id, p.version): p for p in Plan.objects.filter(
        run_id__in=set(nodes.values()), version__in=set(retired.values()))}
    for (node_id, _status), wait in open_.items():
        if node_id not in retired:
            continue
        plan = plans.get((nodes[node_id], retired[node_id]))
        wait.ended_at, wait.outcome = (plan.created_at if plan else timezone.now()), "withdrawn"
        why = (plan.diff or {}).get("why") if plan and isinstance(plan.diff, dict) else None
        wait.withdrawn_by = why or (plan.reason if plan else "")


def waits_for_runs(run_ids: list[int]) -> list[Wait]:
    """Pair each node's entry into awaiting_approval/awaiting_input with its exit."""
    waits: list[Wait] = []
    open_: dict[tuple[int, str], Wait] = {}
    for t in (Transition.objects.filter(run_id__in=run_ids, node__isnull=False).select_related("node__run")
              .order_by("at", "id")):
        slot = (t.node_id, t.from_status)
        if t.from_status in ("awaiting_approval", "awaiting_input") and slot in open_:
            wait = open_.pop(slot)
            wait.ended_at, wait.outcome = t.at, t.to_status
        if t.to_status in ("awaiting_approval", "awaiting_input"):
            wait = Wait(kind="approval" if t.to_status == "awaiting_approval" else "input", node=t.node.key,
                        started_at=t.at, ended_at=None, outcome="waiting",
                        step=step_title(t.node.run.blueprint, t.node.key))
            open_[(t.node_id, t.to_status)] = wait
            waits.append(wait)
    _withdrawn_close(open_)
    longest = max((w.seconds for w in waits), default=0) or 1
    for wait in waits:
        wait.percent = round(max(wait.seconds / longest * 100, 1), 2)
    return waits


@dataclass
class RunStory:
    """What happened to a run that its status alone does not say: who cancelled it and when
    (with their reason), who retried it last and when; `over` once it has ended (a retried run
    has not, though it once finished)."""

    over: bool
    cancelled_by: str = ""
    cancelled_at: datetime | None = None
    cancel_reason: str = ""
    retried_by: str = ""
    retried_at: datetime | None = None


def _person(username: str) -> str:
    user = User.objects.filter(username=username).first() if username else None
    return (user.get_full_name() or user.username) if user else username


def run_story(run: Run) -> RunStory:
    story = RunStory(over=run.status in RUN_TERMINAL)
    cancel = run.cancel_requested or {}
    if cancel.get("by"):
        story.cancelled_by, story.cancel_reason = _person(cancel["by"]), cancel.get("reason") or ""
        story.cancelled_at = parse_datetime(cancel["at"]) if cancel.get("at") else None
    retried = (Event.objects.filter(run_id=run.id, type="run.retried").order_by("-seq")
               .values_list("data", "created_at").first())
    if retried is not None:
        story.retried_by, story.retried_at = _person((retried[0] or {}).get("by") or ""), retried[1]
    return story


@dataclass
class RunPanel:
    run: Any
    dag: Dag
    steps_done: int
    steps_total: int
    waiting_on: str
    waiting_since: datetime | None
    question: dict[str, Any] | None
    approval: Any
    plans: list[Any]
    cost: Decimal = Decimal(0)
    can_cancel: bool = False  # this person may cancel the run, and it can still be cancelled
    can_retry: bool = False
    can_answer: bool = False  # this person may answer the run's question (its starter)
    story: RunStory | None = None

    @property
    def percent(self) -> int:
        return int(self.steps_done * 100 / self.steps_total) if self.steps_total else 0


def nodes_in_plan_order(nodes, plans) -> list[Any]:
    """Nodes in the order their plan lists them (ids are random, so never by id)."""
    order: dict[tuple[int, str], int] = {}
    for plan in plans:
        for i, spec in enumerate(plan.graph):
            order[(plan.version, spec["key"])] = i
    return sorted(nodes, key=lambda n: (n.plan_version, order.get((n.plan_version, n.key), 99), n.key))


CANCELLABLE = {"running", "awaiting_approval", "awaiting_input", "failed", "blocked"}
RETRYABLE = {"failed", "blocked"}


def run_panel(membership: Membership, run) -> RunPanel:
    """What the run panel shows: the DAG, progress, what is waiting on whom, and the
    controls this person may use (cancel, retry: the services check again)."""
    allowed = run_control_allowed(membership, run)
    plans = list(run.plans.all())
    nodes = nodes_in_plan_order(Node.objects.filter(run=run, retired_in__isnull=True), plans)
    steps = [n for n in nodes if n.run_when == "completed"]
    waiting_on, since, question, approval = "", None, None, None
    awaiting_input = next((n for n in nodes if n.status == "awaiting_input"), None)
    if awaiting_input is not None:
        waiting_on = _("your answer") if run.created_by_id == membership.user_id else _("the requester's answer")
        # The question in the reader's language (its words; a row from before words: its text),
        # its options' labels too.
        asked = awaiting_input.question or {"text": awaiting_input.status_reason}
        question = {**asked, "text": words_render(question_words(asked)), "options": options_shown(asked.get("options"))}
        since = awaiting_input.transitions.filter(to_status="awaiting_input").order_by("-at").values_list(
            "at", flat=True).first()
    approval = ApprovalRequest.objects.filter(run=run, status="pending").order_by("created_at").first()
    if approval is not None:
        # Only those who may decide it: the matrix's roles, never the person who asked for it.
        names = ", ".join(m.user.username for m in approval_recipients(approval))
        waiting_on = _("an approver (%(names)s)") % {"names": names} if names else _("an approver")
        since = approval.created_at
    return RunPanel(run=run, dag=dag_layout(nodes, blueprint=run.blueprint, run_status=run.status), steps_done=sum(1 for n in steps if n.status == "completed"),
                    steps_total=len(steps), waiting_on=waiting_on, waiting_since=since, question=question,
                    approval=approval, plans=plans,
                    cost=Activity.objects.filter(run=run).aggregate(c=Sum("cost"))["c"] or Decimal(0),
                    can_cancel=allowed and not run.cancel_requested and run.status in CANCELLABLE,
                    can_retry=allowed and run.status in RETRYABLE, story=run_story(run),
                    can_answer=question is not None and run_act_allowed(membership, run, "answer"))


@dataclass
class CoordinateTrail:
    key: str
    value: Any
    producer: str
    call_id: str
    node: str
    receipt_ref: str
    plan_version: int
    consumers: list[dict[str, str]]

    @property
    def value_text(self) -> str:
        return value_text(self.value)


def provenance_for_runs(run_ids: list[int]) -> list[CoordinateTrail]:
    """Each coordinate with the call that produced it and the calls that consumed it."""
    coordinates = (StateCoordinate.objects.filter(run_id__in=run_ids).select_related("call__node")
                   .prefetch_related("consumptions__call__node").order_by("created_at", "id"))
    return [CoordinateTrail(key=c.key, value=c.value, producer=c.producer, call_id=str(c.call_id),
                            node=c.call.node.key, receipt_ref=c.receipt_ref, plan_version=c.plan_version,
                            consumers=[{"call_id": str(x.call_id), "tool": x.call.tool, "node": x.call.node.key}
                                       for x in c.consumptions.all()])
            for c in coordinates]


@dataclass
class ChatHelp:
    """What the chat says Keel can do, from the registered domains (workflows.conversation):
    their capabilities as one phrase, a request each might be asked, the files they take."""

    capabilities: str
    examples: list[str]
    files: str  # "a CSV or XLSX employee list (…); an invoice for … (…)"
    accept: str  # the file input's `accept`: every kind's suffixes


def chat_help() -> ChatHelp:
    zh = (get_language() or "").startswith("zh")
    domains = conversation_domains()
    kinds = attachment_kinds()
    return ChatHelp(capabilities=capabilities(zh), examples=[e for e in (d.example(zh) for d in domains) if e],
                    files=("；" if zh else "; ").join(_(kind.described) for kind in kinds),
                    accept=",".join(suffix for kind in kinds for suffix in kind.suffixes))
