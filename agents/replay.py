"""Replay as a developer tool (DESIGN.md §7, `runs/{id}/replay/`): re-run a recorded run, in a
sandbox, against its own recorded model answers, and say whether it went the same way.

    replay_run(membership=…, run_id=…) -> {replay_id, identical, differences, recorded, replayed}

- The sandbox is a new tenant holding a copy of the records the run touched: the employees
  it was to assign, any group that already had the run's group name, and the user's earlier
  messages in the conversation. Its people mirror the run's starter and deciders, with
  their roles. Nothing of the original tenant is read after the copy, nothing is written
  to it, and no other tenant is touched.
- The conversation turns that shaped the run are posted again in the sandbox's conversation:
  the user's messages up to the one whose turn started the run (its employee list rebuilt
  from what the run took from it: the file is not kept), and the later ones that answered
  its questions in the chat. The run that turn starts there is the one replayed. A run no
  turn started (an API call, an event) starts from its recorded params (the first plan's,
  each replan's change undone).
- The model answers are the recorded ones (the turns' and the steps' model-call frames),
  handed back by a backend scoped to this replay only (`llm.backend_scoped`), each call
  taking the next answer recorded for its purpose: no restart, no KEEL_LLM change, no
  position shared with any other replay or process.
- The run is driven here, in process (`workflows.dispatch.dispatch_held`: nothing of it
  reaches the workers), with the recorded decisions: each approval's verdict (and
  whether it asked for a replan), each answer the user gave a question.
- What is compared: each turn's intent, route, reply and decisions (understanding, ReAct
  steps, memory used); each step's status transitions per plan version, its tool calls
  (tool, status, business summary), the run's own transitions (its route: running →
  awaiting approval → …) and the plan versions with their triggers. Ids and times are not.

The sandbox also holds a copy of the tenant's L2/L3 memory as it stood when the run started
(without links to the original approvals), of a whole-tenant snapshot a restore reads, of the
tenant's policies when a step reads them, and of the hiring request (with the CV bank) a
candidate matching reads. Once compared, the sandbox is deleted and the
comparison kept (`ReplayResult`); sandboxes left behind are deleted by a periodic cleanup."""
from __future__ import annotations

import os
import re
import secrets
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from approvals.models import ApprovalRequest, ApprovalStatus
from approvals.services import approval_decide
from config.api import Conflict, Forbidden
from config.words import words_english
from llm import backend_scoped
from llm.replay import ReplayBackend
from memory.models import MemoryItem
from tenants.models import Membership, Role, Tenant
from timeline.models import Activity, Conversation, Event, Frame
from timeline.services import conversation_create, event_append
from workflows.blueprints import Door
from workflows.dispatch import dispatch_held
from workflows.executor import steps_execute
from workflows.models import (
    RUN_TERMINAL,
    Node,
    NodeStatus,
    Plan,
    Run,
    RunStatus,
    StateCoordinate,
    ToolCall,
    Transition,
)
from workflows.selectors import run_get_for
from workflows.sandbox import SandboxCopy, sandbox_attachment, sandbox_clean, sandbox_copy
from workflows.services import node_input_answer, run_start
from workflows.tools import TOOLS
from workflows.transitions import run_transition

from .models import Message, ReplayResult
from .orchestrator import message_post

N = NodeStatus
REPLAY_ROLES = {Role.DEVELOPER, Role.ADMIN}
MAX_STEPS = 200


def replay_allowed(membership: Membership) -> bool:
    return membership.role in REPLAY_ROLES


def recorded_responses(run: Run, turn_activity_ids: list[int] = ()) -> tuple[list[Any], list[str], list[str]]:
    """The model answers the run's steps and the conversation turns that shaped it received, in
    the order they were made (failed calls left out), with the purpose and provider of each."""
    frames = (Frame.objects.filter(Q(activity__run_id=run.id, activity__node_key__gt="")
                                   | Q(activity_id__in=list(turn_activity_ids)), kind="model_call")
              .select_related("payload").order_by("started_at", "ended_at", "id"))
    responses, purposes, providers = [], [], []
    for frame in frames:
        data = frame.payload.data if hasattr(frame, "payload") else {}
        if data.get("error"):
            continue
        responses.append({"text": data.get("text", ""), "tool_calls": data["tool_calls"]}
                         if data.get("tool_calls") else data.get("text", ""))
        purposes.append(data.get("purpose") or None)
        providers.append(data.get("provider") or "")
    return responses, purposes, providers


# --- The conversation turns that shaped a run ---------------------------------------------------

@dataclass
class Turns:
    """The user's messages that shaped a run: those up to and including the one whose turn
    started it (`origin`), and the later ones that answered its questions in the chat."""

    before: list[Message] = field(default_factory=list)
    origin: Message | None = None
    answers: list[Message] = field(default_factory=list)

    @property
    def all(self) -> list[Message]:
        return [*self.before, *([self.origin] if self.origin else []), *self.answers]


def turns_of(run: Run) -> Turns:
    """No turns for a run that no turn started (an API call, an event)."""
    replies = Message.objects.filter(conversation_id=run.conversation_id, role=Message.Role.ASSISTANT, run=run)
    started = replies.filter(news_of="").order_by("created_at").first()
    users = Message.objects.filter(conversation_id=run.conversation_id, role=Message.Role.USER)
    origin = users.filter(activity_id=started.activity_id).first() if started else None
    if origin is None:
        return Turns()
    answered = set(Activity.objects.filter(route="resume_run", id__in=replies.filter(
        created_at__gt=origin.created_at).values_list("activity_id", flat=True)).values_list("id", flat=True))
    return Turns(before=list(users.filter(created_at__lt=origin.created_at).order_by("created_at")), origin=origin,
                 answers=[m for m in users.filter(created_at__gt=origin.created_at).order_by("created_at")
                          if m.activity_id in answered])


_LONG_ID = re.compile(r"\d{12,}")


def _no_ids(text: str) -> str:
    return _LONG_ID.sub("#", text or "")


def turn_trace(messages: list[Message]) -> list[dict[str, Any]]:
    """What a turn is compared on: its intent, route, reply and decisions (understanding, ReAct
    steps, memory used) — every frame but the model calls themselves — with no ids."""
    traced = []
    for message in messages:
        activity = Activity.objects.filter(id=message.activity_id).first()
        reply = Message.objects.filter(activity_id=message.activity_id, role=Message.Role.ASSISTANT).first()
        frames = Frame.objects.filter(activity_id=message.activity_id).exclude(kind="model_call").order_by(
            "started_at", "id")
        traced.append({"text": message.text, "intent": activity.intent if activity else "",
                       "route": activity.route if activity else "", "reply": _no_ids(reply.text if reply else ""),
                       "decisions": [f"{f.kind} {f.name}: {_no_ids(f.summary)}" for f in frames]})
    return traced


def _turn_differences(recorded: list[dict[str, Any]], replayed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    differences = []
    for i in range(max(len(recorded), len(replayed))):
        a = recorded[i] if i < len(recorded) else {}
        b = replayed[i] if i < len(replayed) else {}
        for what in ("intent", "route", "reply", "decisions"):
            if a.get(what) != b.get(what):
                differences.append({"what": f"turn {what}", "step": f"turn {i + 1}: {(a or b).get('text', '')[:60]}",
                                    "recorded": a.get(what, ""), "replayed": b.get(what, "")})
    return differences


def _attachment_of(origin: Message, run: Run, params: dict[str, Any]) -> tuple[str, bytes] | None:
    """The file the first message carried, rebuilt by its domain from what the run took from
    it (workflows.sandbox): the file itself is not kept."""
    if not origin.attachment_name:
        return None
    return sandbox_attachment(run, origin.attachment_name, initial_params(run), params)


def _turns_drive(turns: Turns, sandbox: _Sandbox, original: Run, params: dict[str, Any]) -> Run | None:
    """Post the turns up to the one that started the run, in the sandbox's conversation; the
    run that turn starts there (or None: the turn went another way)."""
    started = None
    for message in [*turns.before, turns.origin]:
        author = sandbox.person(message.author) if message.author_id else sandbox.creator
        result = message_post(membership=author, conversation_id=sandbox.conversation.id, text=message.text,
                              attachment=_attachment_of(message, original, params) if message is turns.origin
                              else None)
        started = result["run_id"]
    return Run.objects.filter(id=int(started), tenant_id=sandbox.tenant.id).first() if started else None


def run_trace(run: Run) -> dict[str, Any]:
    """What a replay is compared on: no ids, no times."""
    steps: dict[str, list[str]] = defaultdict(list)
    route = []
    keys = dict(Node.objects.filter(run=run).values_list("id", "key"))
    versions = dict(Node.objects.filter(run=run).values_list("id", "plan_version"))
    for t in Transition.objects.filter(run=run).order_by("id"):
        if t.node_id:
            steps[keys[t.node_id]].append(f"v{versions[t.node_id]}: {t.from_status} → {t.to_status}")
        else:
            route.append(f"{t.from_status} → {t.to_status}")
    calls: dict[str, list[str]] = defaultdict(list)
    for tool, status, node_id, result in ToolCall.objects.filter(run=run).order_by("started_at", "id").values_list(
            "tool", "status", "node_id", "result"):
        # The tool's own business summary of what it did (never an id): a different choice shows.
        spec = TOOLS.get(tool)
        said = ""
        if spec is not None and spec.summary is not None and result is not None and status == "succeeded":
            try:
                said = f": {words_english(spec.summary(result))}"
            except Exception:  # a summary that cannot read an old result: compare without it
                said = ""
        calls[keys[node_id]].append(f"v{versions[node_id]}: {tool} {status}{said}")
    plans = [f"v{p.version}: {(p.diff or {}).get('trigger', {}).get('kind', 'initial')}"
             + (f" of {p.diff['trigger']['node']}" if p.diff and p.diff.get("trigger", {}).get("node") else "")
             for p in Plan.objects.filter(run=run).order_by("version")]
    return {"status": run.status, "route": route, "steps": dict(steps), "tool_calls": dict(calls), "plans": plans}


def _text(value: Any) -> str:
    return "; ".join(str(v) for v in value) if isinstance(value, list) else str(value)


def trace_differences(recorded: dict[str, Any], replayed: dict[str, Any]) -> list[dict[str, Any]]:
    differences = _differences(recorded, replayed)
    for d in differences:
        d["recorded_text"], d["replayed_text"] = _text(d["recorded"]) or "—", _text(d["replayed"]) or "—"
    return differences


def _differences(recorded: dict[str, Any], replayed: dict[str, Any]) -> list[dict[str, Any]]:
    differences = _turn_differences(recorded.get("turns", []), replayed.get("turns", []))
    for what in ("status", "route", "plans"):
        if recorded[what] != replayed[what]:
            differences.append({"what": what, "step": None, "recorded": recorded[what],
                                "replayed": replayed[what]})
    for what in ("steps", "tool_calls"):
        for key in sorted(set(recorded[what]) | set(replayed[what])):
            a, b = recorded[what].get(key, []), replayed[what].get(key, [])
            if a != b:
                differences.append({"what": "transitions" if what == "steps" else what, "step": key,
                                    "recorded": a, "replayed": b})
    return differences


class _Sandbox:
    def __init__(self, run: Run):
        self.tag = secrets.token_hex(4)
        self.tenant = Tenant.objects.create(slug=f"replay-{self.tag}", name=f"Replay of run {run.id}", sandbox=True)
        self.people: dict[int, Membership] = {}
        self.creator = self.person(run.created_by)
        self.conversation = conversation_create(tenant_id=self.tenant.id, user_id=self.creator.user_id,
                                                title=f"Replay of run {run.id}")

    def person(self, user: User) -> Membership:
        """The sandbox's stand-in for a person of the run, with the same role."""
        if user.id not in self.people:
            twin = User.objects.create(username=f"replay-{self.tag}-{user.username}"[:150],
                                       first_name=user.first_name, last_name=user.last_name)
            twin.set_unusable_password()
            twin.save(update_fields=["password"])
            self.people[user.id] = Membership.objects.create(user=twin, tenant=self.tenant,
                                                             role=user.membership.role)
        return self.people[user.id]


def initial_params(run: Run) -> dict[str, Any]:
    """The params the run began with: each replan's changes undone, newest first."""
    params = dict(run.params)
    for plan in Plan.objects.filter(run=run, version__gt=1).order_by("-version"):
        diff = plan.diff or {}
        before = diff.get("params_before", {})
        for key in diff.get("params_changed", []):
            if key in before:
                params[key] = before[key]
            else:
                params.pop(key, None)
    return params


def _copy_records(run: Run, sandbox: _Sandbox, *, messages: bool = True) -> dict[str, Any]:
    """The records the run touched, copied into the sandbox; the params, with their ids mapped."""
    params = initial_params(run)
    # Each domain copies what of it the run touched (workflows.sandbox), mapping the params' ids.
    params = sandbox_copy(SandboxCopy(run=run, from_tenant_id=run.tenant_id, to_tenant_id=sandbox.tenant.id,
                                      creator_user_id=sandbox.creator.user_id), params)
    # Memory as it stood when the run started (L2 facts, then the L3 experience kept with its
    # evidence), without the links to the original tenant's approvals and calls.
    twins: dict[int, MemoryItem] = {}
    # (Experience is distilled when first recalled, so an item may be younger than the run
    # while its approval, which is what counts, was decided before it.)
    known = Q(approval__decided_at__lt=run.created_at) | Q(approval__isnull=True, created_at__lt=run.created_at)
    for item in MemoryItem.objects.filter(known, tenant_id=run.tenant_id).order_by("layer", "created_at"):
        twins[item.id] = MemoryItem.objects.create(
            tenant=sandbox.tenant, layer=item.layer, kind=item.kind, text=item.text, signature=item.signature,
            data=item.data, evidence=twins.get(item.evidence_id))
    if not messages:  # the turns themselves are posted again
        return params
    started = Event.objects.filter(run_id=run.id, type="run.started").values_list("seq", flat=True).first()
    earlier = Event.objects.filter(conversation_id=run.conversation_id, type="message.received")
    if started is not None:
        earlier = earlier.filter(seq__lt=started)
    for event in earlier.order_by("seq"):
        event_append(conversation_id=sandbox.conversation.id, type="message.received", data=event.data)
    return params


def _drive(replay: Run, sandbox: _Sandbox, original: Run, answers_in_chat: list[Message] = ()) -> None:
    """Run the sandbox run to where the recorded one ended, deciding as people decided."""
    decisions = list(ApprovalRequest.objects.filter(run=original).exclude(status=ApprovalStatus.PENDING)
                     .select_related("node", "decided_by").order_by("decided_at", "id"))
    answers: dict[str, list[str]] = defaultdict(list)
    for node in Node.objects.filter(run=original).order_by("plan_version"):
        if node.arguments.get("answer") and Transition.objects.filter(node=node, to_status=N.AWAITING_INPUT).exists():
            answers[node.key].append(node.arguments["answer"])
    for _ in range(MAX_STEPS):
        ready = list(Node.objects.filter(run=replay, status=N.READY, retired_in__isnull=True)
                     .values_list("id", flat=True))
        for node_id in ready:
            steps_execute(node_id)
        if ready:
            continue
        replay.refresh_from_db()
        if replay.status == RunStatus.AWAITING_APPROVAL:
            pending = ApprovalRequest.objects.filter(run=replay, status=ApprovalStatus.PENDING).select_related(
                "node").first()
            decision = next((d for d in decisions if pending and d.node.key == pending.node.key), None)
            if pending is None or decision is None or decision.status not in (ApprovalStatus.APPROVED,
                                                                              ApprovalStatus.REJECTED):
                return
            decisions.remove(decision)
            decider = sandbox.person(decision.decided_by) if decision.decided_by else sandbox.creator
            approval_decide(membership=decider, approval_id=pending.id, comment=decision.comment or "",
                            verdict="approved" if decision.status == ApprovalStatus.APPROVED else "rejected",
                            replan=bool(getattr(decision, "replan", False)))
            continue
        if replay.status == RunStatus.AWAITING_INPUT and answers_in_chat:
            # The user answered in the chat: that turn is posted again.
            message = answers_in_chat.pop(0)
            message_post(membership=sandbox.person(message.author) if message.author_id else sandbox.creator,
                         conversation_id=sandbox.conversation.id, text=message.text)
            continue
        if replay.status == RunStatus.AWAITING_INPUT:
            waiting = Node.objects.filter(run=replay, status=N.AWAITING_INPUT, retired_in__isnull=True).first()
            if waiting is None or not answers.get(waiting.key):
                return
            node_input_answer(membership=sandbox.creator, run_id=replay.id, answer=answers[waiting.key].pop(0))
            continue
        return


def replay_run(*, membership: Membership, run_id: int, keep_sandbox: bool = False) -> dict[str, Any]:
    """Replay a recorded run of the caller's tenant in a sandbox; compare it with the record.
    The comparison is kept (`ReplayResult`); the sandbox is deleted once compared, unless
    `keep_sandbox` (a developer inspecting it: the periodic cleanup deletes it later)."""
    if not replay_allowed(membership):
        raise Forbidden("Only developers and tenant admins may replay a run.", code="not_allowed")
    original = run_get_for(membership, run_id)
    if original.status not in RUN_TERMINAL and original.status not in (RunStatus.AWAITING_APPROVAL,
                                                                       RunStatus.AWAITING_INPUT):
        raise Conflict("The run is still moving; replay it when it has stopped or is waiting.",
                       code="run_in_progress", extra={"status": original.status})
    recorded = run_trace(original)
    turns = turns_of(original)
    recorded["turns"] = turn_trace(turns.all)
    backend = ReplayBackend(*recorded_responses(original, [m.activity_id for m in turns.all]))
    with transaction.atomic():
        sandbox = _Sandbox(original)
        params = _copy_records(original, sandbox, messages=turns.origin is None)
        result = ReplayResult.objects.create(tenant_id=original.tenant_id, run=original,
                                             requested_by_id=membership.user_id, sandbox_slug=sandbox.tenant.slug,
                                             sandbox_tenant=sandbox.tenant, recorded=recorded)
    try:
        with backend_scoped(backend), dispatch_held():
            # The turns that started the run, posted again; a run no turn started (or one whose
            # turn went another way here) starts from its recorded params.
            replay = _turns_drive(turns, sandbox, original, params) if turns.origin else None
            if replay is None:
                replay = run_start(membership=sandbox.creator, blueprint=original.blueprint, params=params,
                                   conversation_id=sandbox.conversation.id, door=Door.REPLAY)
            _drive(replay, sandbox, original, list(turns.answers))
        replay.refresh_from_db()
        replayed = run_trace(replay)
        replayed["turns"] = turn_trace(list(Message.objects.filter(
            conversation=sandbox.conversation, role=Message.Role.USER).order_by("created_at"))) if turns.origin else []
        # Where the record stopped (a pending decision): the sandbox's runs end here, so no
        # sweeper ever takes them up with another backend.
        for unfinished in Run.objects.filter(tenant_id=sandbox.tenant.id).exclude(status__in=RUN_TERMINAL):
            with transaction.atomic():
                run_transition(unfinished, RunStatus.STOPPED, reason="the replay ended where the recorded run stopped")
    except BaseException:
        ReplayResult.objects.filter(id=result.id).update(status=ReplayResult.Status.ABANDONED)
        sandbox_delete(sandbox.tenant.id)
        raise
    differences = trace_differences(recorded, replayed)
    if backend.answered < len(backend.responses) or backend.position > backend.answered:
        differences.append({"what": "model_calls", "step": None, "recorded": len(backend.responses),
                            "replayed": backend.position, "recorded_text": f"{len(backend.responses)} calls",
                            "replayed_text": f"{backend.position} calls, {backend.answered} answered by the record"})
    ReplayResult.objects.filter(id=result.id).update(
        status=ReplayResult.Status.COMPARED, identical=not differences, differences=differences, replayed=replayed,
        sandbox_run_id=replay.id)
    if not keep_sandbox:
        sandbox_delete(sandbox.tenant.id)
    return {"replay_id": str(result.id), "run": str(original.id), "sandbox_tenant": sandbox.tenant.slug,
            "sandbox_run": str(replay.id), "sandbox_kept": keep_sandbox,
            "identical": not differences, "differences": differences, "recorded": recorded,
            "replayed": replayed}


def sandbox_delete(tenant_id: int) -> bool:
    """Delete a replay's sandbox tenant with everything in it and its stand-in people. The
    replay's result stays. Only ever a sandbox: a real tenant is refused by the filter."""
    with transaction.atomic():
        tenant = Tenant.objects.select_for_update().filter(id=tenant_id, sandbox=True).first()
        if tenant is None:
            return False
        # Its conversations locked first: an event being appended to one (it bumps the
        # conversation's counter) waits for this deletion and then finds nothing to append to,
        # instead of committing a row that points at a run being deleted.
        list(Conversation.objects.select_for_update().filter(tenant=tenant).values_list("id", flat=True))
        people = list(User.objects.filter(membership__tenant=tenant).values_list("id", flat=True))
        ReplayResult.objects.filter(sandbox_tenant=tenant).update(sandbox_deleted_at=timezone.now())
        # Rows that protect others inside the sandbox go first: a coordinate protects the call
        # that produced it, a policy version the one it replaces.
        StateCoordinate.objects.filter(tenant=tenant).delete()
        sandbox_clean(tenant)  # each domain's rows that would protect others (workflows.sandbox)
        tenant.delete()  # cascades to its runs, conversations, records and memberships
        User.objects.filter(id__in=people, membership__isnull=True).delete()
    return True


def sandboxes_clean(older_than_seconds: float | None = None) -> int:
    """The periodic cleanup: sandboxes left behind (a replay that crashed, or was kept to be
    looked at) are deleted once older than KEEL_REPLAY_SANDBOX_TTL_SECONDS (600)."""
    ttl = older_than_seconds if older_than_seconds is not None else float(
        os.environ.get("KEEL_REPLAY_SANDBOX_TTL_SECONDS", "600"))
    cutoff = timezone.now() - timedelta(seconds=ttl)
    deleted = 0
    for tenant_id in list(Tenant.objects.filter(sandbox=True, created_at__lt=cutoff).values_list("id", flat=True)):
        ReplayResult.objects.filter(sandbox_tenant_id=tenant_id, status=ReplayResult.Status.RUNNING).update(
            status=ReplayResult.Status.ABANDONED)
        deleted += sandbox_delete(tenant_id)
    return deleted
