"""The orchestrator: one user message in, one reply out (seed 000 §4).

    message received → intent → control signal → one explicit branch → reply

The MessageHandler part (`message_post`) owns the message boundary: it validates the
text and the attachment before anything is written, opens the turn's Activity, routes,
streams the reply as events and closes the turn. `_route` is the orchestrator proper: it
reads the control signal and the conversation's state (a run waiting for input, an
exploration waiting for a value) and picks exactly one branch:

- chat     → a reply from the model, with the conversation's narrative context;
- analyze  → a read-only answer: policy questions through the exact-graph policy
             workflow, configuration questions through the read-only tools;
- resolve  → a fixed `payroll_group_setup` plan at once when the request is complete,
             else ReAct exploration first (agents.react);
- unknown  → a clarifying question.

The intent and the route, each with its reason, are frames; every model call made in the
turn is a model-call frame of the turn's Activity (timeline.model_frames). Control information
(signals, routes, run status) drives branches; narrative (Anchor, Ledger, Collection)
only informs the model and never carries a business id.

Streaming contract for the console: the reply is pushed on the conversation's group as
timeline events — "message.received" {activity, text, attachment}, zero or more
"message.delta" {activity, index, text} (append in index order), then exactly one
"message.reply" {activity, text, intent, route, run}, whose text is the whole reply and
replaces the deltas. The POST answers once the turn is done with the same reply.

A run the turn starts costs the request only its first records (the run and its Activity),
committed with the reply; a worker plans it after the commit (workflows.tasks.plan_run),
and the sweeper plans one whose message was lost. A turn that fails before its commit
leaves no run.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone
from django.utils.translation import gettext as _

from config.api import Conflict, DomainError
from llm import ModelError, backend_structured, model_call
from llm.structured import Structured, tool_calls_first
from memory.services import memory_link
from payroll.matching import decision_question, option_choose, template_decide
from payroll.models import PayrollTemplate
from payroll.previews import requirements_words, template_memories
from payroll.requirements import requirements_extract
from payroll.selectors import template_catalog
from policy.services import policy_answer
from tenants.models import Membership
from timeline.model_frames import model_frames_into
from timeline.models import Activity, Conversation
from timeline.selectors import conversation_get_for
from timeline.services import (
    activity_close,
    activity_open,
    event_append,
    events_batched,
    frame_record,
)
from workflows.blueprints import Door, params_validate
from workflows.models import Run, RunStatus
from workflows.services import (
    active_nodes,
    node_input_answer,
    run_create,
    run_plan_on_commit,
)
from workflows.tools import ToolContext, tool_get

from .answers import analyze_kind, rate_answer, run_answer
from .attachments import EmployeeList, employee_list_parse
from .expense_front import expense_turn  # issue 15
from .intent import intent_classify, intent_messages, signal_parse
from .memory import (
    anchor_set,
    history_messages,
    ledger_append,
    ledger_sync,
    narrative_context,
)
from .models import Exploration, Message
from .react import (
    READ_ONLY,
    ExplorationState,
    dependencies_known,
    observation_words,
    react_explore,
)
from .understanding import intent_structured, requirements_understood

MAX_TEXT = 4000
TURN_MODEL_CALL_CAP = 8
CONTINUE_WORDS = {"continue", "go on", "go ahead", "proceed", "carry on", "resume", "ok", "okay", "yes",
                  "继续", "好的", "可以", "继续吧", "好"}
POLICY_WORDS_EN = r"\b(travel|trip|lodging|hotel|accommodation|per diem|policy|policies|business trip)\b"
POLICY_WORDS_ZH = ("差旅", "出差", "住宿", "酒店", "宾馆", "政策", "制度", "报销")
PERSONA = ("You are Keel, an assistant that sets up payroll groups for the user's company, imports employees "
           "and answers questions about the payroll configuration and the travel policy. Answer briefly. "
           "You cannot approve anything and you never invent identifiers.")


class TurnBudgetExhausted(DomainError):
    code = "model_budget_exhausted"


@dataclass
class Outcome:
    route: str
    reply: str
    run_id: int | None = None
    status: str = "completed"
    options: list[dict[str, Any]] = field(default_factory=list)
    # The run this turn starts: its first records commit with the reply, and a worker
    # plans it once they have (`_plan_start`). Returns the run's id.
    start_run: Callable[[], int] | None = None


@dataclass
class Turn:
    membership: Membership
    conversation: Conversation
    activity_id: int
    message_id: int
    text: str
    employees: EmployeeList | None
    signal: str = "unknown"
    branch: str = ""
    calls: int = 0
    deltas: list[str] = field(default_factory=list)
    streamed: int = 0
    understood: dict[str, dict[str, Any]] = field(default_factory=dict)  # text -> requirements
    new_employees: list[dict[str, str]] = field(default_factory=list)  # from an attached HR export

    @property
    def zh(self) -> bool:
        return bool(re.search(r"[\u4e00-\u9fff]", self.text))

    def model(self, messages: list[dict], *, purpose: str, choices: list[str] | None = None,
              reply: bool = False, tools: list[dict] | None = None, response_format: dict | None = None,
              max_tokens: int = 512):
        """One model call within the turn's budget; a reply streams (token by token on a
        streaming backend) as message.delta events while it is generated."""
        if self.calls >= TURN_MODEL_CALL_CAP:
            raise TurnBudgetExhausted(f"This turn used its {TURN_MODEL_CALL_CAP} model calls.")
        self.calls += 1
        result = model_call(messages, purpose=purpose, choices=choices, on_delta=self._delta if reply else None,
                            stream=True if reply else None, tools=tools, response_format=response_format,
                            max_tokens=max_tokens)
        if reply:
            self._flush()
        return result

    def _delta(self, piece: str) -> None:
        self.deltas.append(piece)
        if sum(len(p) for p in self.deltas) >= 24 or piece.endswith("\n"):
            self._flush()

    def _flush(self) -> None:
        if not self.deltas:
            return
        text, self.deltas = "".join(self.deltas), []
        with transaction.atomic():  # each delta commits on its own so that it is pushed now
            event_append(conversation_id=self.conversation.id, type="message.delta",
                         data={"activity": str(self.activity_id), "index": self.streamed, "text": text})
        self.streamed += 1


# --- The message boundary ---------------------------------------------------------------

def message_validate(text: str | None) -> str:
    text = (text or "").strip()
    if not text:
        raise DomainError(_("Type a message first: the text is empty."), code="text_empty")
    if len(text) > MAX_TEXT:
        raise DomainError(_("The message is %(len)s characters long; the limit is %(MAX_TEXT)s.")
                          % {"len": len(text), "MAX_TEXT": MAX_TEXT},
                          code="text_too_long")
    return text


def message_post(*, membership: Membership, conversation_id: int, text: str | None,
                 attachment: tuple[str, bytes] | None = None,
                 conversation: Conversation | None = None) -> dict[str, Any]:
    """Handle one user message: → {activity_id, intent, reply, run_id} (ids as strings).

    Everything is checked before anything is written: an unknown conversation is 404, an
    empty or oversized text and a bad attachment are 400 and change nothing. `conversation`:
    the caller already read it with conversation_get_for (no second lookup)."""
    if conversation is None or conversation.id != conversation_id or conversation.tenant_id != membership.tenant_id:
        conversation = conversation_get_for(membership, conversation_id)
    text = message_validate(text)
    employees = None
    if attachment is not None:
        employees = employee_list_parse(tenant_id=membership.tenant_id, filename=attachment[0], raw=attachment[1],
                                        lang="zh" if re.search(r"[\u4e00-\u9fff]", text) else "en")
    with transaction.atomic():
        if not conversation.title and (
                Conversation.objects.filter(id=conversation.id)
                .exclude(Exists(Message.objects.filter(conversation=OuterRef("id"), role=Message.Role.USER)))
                .update(title=_title_of(text))):
            # A conversation is called by what it was started for, not "Conversation 123".
            conversation.title = _title_of(text)
        activity = activity_open(conversation_id=conversation.id, kind=Activity.Kind.MESSAGE, title=text[:200],
                                 summary=f"{membership.user.username} wrote a message.")
        message = Message.objects.create(conversation=conversation, activity=activity, role=Message.Role.USER,
                                         text=text, author=membership.user, attachment_name=employees.filename if employees else "",
                                         attachment_rows=employees.rows if employees else 0)
        event_append(conversation_id=conversation.id, type="message.received",
                     data={"activity": str(activity.id), "text": text, "user": membership.user.username,
                           "author": membership.user.get_full_name() or membership.user.username,
                           "attachment": ({"name": employees.filename, "rows": employees.rows}
                                          if employees else None)})
        if employees:
            frame_record(activity_id=activity.id, kind="validation", name="attachment",
                         summary=f"An employee list of {employees.rows} people was attached and checked.",
                         payload={"file": employees.filename, "rows": employees.rows})
    turn = Turn(membership=membership, conversation=conversation, activity_id=activity.id, message_id=message.id,
                text=text, employees=employees, new_employees=list(employees.new_employees) if employees else [])
    with model_frames_into(activity.id):
        try:
            outcome = _route(turn)
        except (ModelError, DomainError) as err:
            reason = err.message if isinstance(err, DomainError) else str(err)
            frame_record(activity_id=activity.id, kind="error", name="turn stopped", status="error",
                         level="error", summary="The turn stopped before it was done; nothing was changed.",
                         payload={"error": reason, "type": type(err).__name__})
            outcome = Outcome(route="stopped", status="failed",
                              reply=("模型没有及时回答，本轮已停止，没有做任何更改。请再试一次。" if turn.zh else
                                     "I couldn't finish this turn (the model did not answer in time or a check "
                                     "refused). Nothing was changed; please try again.")
                              if isinstance(err, ModelError) else reason)
    turn._flush()
    route = outcome.route if outcome.route == "stopped" or not turn.branch else turn.branch
    outcome.route = route
    with events_batched():  # the reply, and the run it starts, in one commit
        if outcome.start_run is not None:
            outcome.run_id = outcome.start_run()
        Message.objects.create(conversation=conversation, activity_id=activity.id, role=Message.Role.ASSISTANT,
                               text=outcome.reply, intent=turn.signal, run_id=outcome.run_id,
                               options=outcome.options)
        # intent and route are labels of the turn, not statuses: set once, here. The run a
        # turn started is on the Message and the reply event; the run has its own Activity.
        activity_close(activity_id=activity.id, status=outcome.status, summary=outcome.reply[:500],
                       intent=turn.signal, route=outcome.route)
        event_append(conversation_id=conversation.id, run_id=outcome.run_id, type="message.reply",
                     data={"activity": str(activity.id), "text": outcome.reply, "intent": turn.signal,
                           "route": outcome.route, "run": str(outcome.run_id) if outcome.run_id else None,
                           "options": outcome.options})
    return {"activity_id": str(activity.id), "intent": turn.signal, "reply": outcome.reply,
            "run_id": str(outcome.run_id) if outcome.run_id else None, "options": outcome.options}


def _title_of(text: str) -> str:
    line = text.strip().splitlines()[0]
    return line if len(line) <= 80 else line[:79].rstrip() + "…"


# --- The orchestrator proper -----------------------------------------------------------------

def _frame(turn: Turn, kind: str, name: str, summary: str, payload: dict[str, Any], **extra: Any) -> None:
    frame_record(activity_id=turn.activity_id, kind=kind, name=name, summary=summary, payload=payload, **extra)


def _is_continue(text: str) -> bool:
    return text.strip().strip(".!。！").lower() in CONTINUE_WORDS


def _route(turn: Turn) -> Outcome:
    ledger_sync(conversation_id=turn.conversation.id)  # the reasoning boundary reads fresh progress
    signal, reason = _classify(turn)
    turn.signal = signal
    # issue 15: an expense claim (or the answer to its question) goes to the expense front
    expense = expense_turn(membership=turn.membership, conversation_id=turn.conversation.id,
                           activity_id=turn.activity_id, text=turn.text, signal=signal)
    if expense is not None:
        turn.branch = expense.route
        return Outcome(route=expense.route, reply=expense.reply, run_id=expense.run_id)
    waiting_run = _run_awaiting_input(turn)
    exploration = Exploration.objects.filter(conversation=turn.conversation).first()
    if waiting_run is not None and signal not in ("chat", "analyze"):
        branch, why = "resume_run", "a run is waiting for the user's answer; this message answers it"
    elif exploration is not None and signal not in ("chat", "analyze"):
        branch, why = "resume_exploration", "an exploration is waiting for a missing value; this message adds to it"
    elif signal == "chat":
        branch, why = "chat", "small talk: answer it"
    elif signal == "analyze":
        branch, why = "analyze", "a read-only question: answer it from the configuration or the policy"
    elif signal == "resolve":
        requirements = _requirements(turn, turn.text)
        known, missing = dependencies_known(requirements, None)
        if known:
            branch, why = "plan", (f"the request is complete ({requirements_words(requirements)}; group "
                                   f"“{requirements['group_name']}”): a fixed plan runs at once")
        else:
            branch, why = "explore", "the request lacks " + ", ".join(m.replace("_", " ") for m in missing) + \
                                     ": explore before planning"
    else:
        branch, why = "clarify", "the intent is unknown: ask a clarifying question"
    turn.branch = branch
    _frame(turn, "route", f"route → {branch}", f"Route: {branch} — {why}.",
           {"signal": signal, "branch": branch, "reason": why})
    if branch == "resume_run":
        return _resume_run(turn, waiting_run)
    if branch == "resume_exploration":
        return _resume_exploration(turn, exploration)
    if branch == "chat":
        return _chat(turn)
    if branch == "analyze":
        return _analyze(turn)
    if branch == "plan":  # no exploration waits here (it would have been resumed): none to end
        anchor_set(conversation_id=turn.conversation.id, goal=turn.text)
        return _plan_start(turn, request=turn.text, requirements=_requirements(turn, turn.text),
                           template_name=None, employees=_employees_of(turn, None))
    if branch == "explore":
        anchor_set(conversation_id=turn.conversation.id, goal=turn.text)
        state = ExplorationState(request=turn.text, requirements=_requirements(turn, turn.text))
        return _explore(turn, state, employees=_employees_of(turn, None))
    return _clarify(turn)


def _classify(turn: Turn) -> tuple[str, str]:
    """The same classifier everywhere: the configured model answers `intent`; with the
    builtin backend that is agents.intent.intent_classify. Anything outside the four
    signals, or no answer at all, is `unknown`."""
    messages = intent_messages(turn.text)
    messages.insert(1, {"role": "system", "content": narrative_context(conversation_id=turn.conversation.id)})
    if backend_structured():
        return _classify_structured(turn, messages)
    try:
        result = turn.model(messages, purpose="intent")
    except ModelError as err:
        signal, reason, said = "unknown", f"the classifier did not answer ({type(err).__name__})", None
    else:
        said = result.text
        signal = signal_parse(said)
        if result.provider == "builtin":
            reason = intent_classify(turn.text).reason
        elif signal == "unknown" and (said or "").strip().lower() != "unknown":
            reason = f"the model's answer “{(said or '')[:60]}” is not one of the four signals"
        else:
            reason = f"the model answered {signal}"
    _frame(turn, "intent", f"intent {signal}", f"Intent: {signal} — {reason}.",
           {"signal": signal, "reason": reason, "model_text": said})
    return signal, reason


def _structured_frame(turn: Turn, what: str, outcome: Structured) -> None:
    """A repaired answer or a fallback to the rules is recorded where a developer looks."""
    if outcome.source == "rules":
        _frame(turn, "validation", f"{what}: fallback to rules",
               f"The model's {what} could not be used ({outcome.fallback}); the builtin rules decided.",
               outcome.as_payload(), status="error", level="warning")
    elif outcome.repaired:
        _frame(turn, "validation", f"{what}: repaired",
               f"The model's first {what} did not match its schema ({outcome.errors[0]}); its repair did.",
               outcome.as_payload(), level="warning")


def _classify_structured(turn: Turn, messages: list[dict]) -> tuple[str, str]:
    """Intent as JSON-schema structured output; the rules (agents.intent) when it fails twice."""
    outcome = intent_structured(turn.model, messages, turn.text)
    _structured_frame(turn, "intent", outcome)
    signal, reason = outcome.data["signal"], outcome.data["reason"] or f"the model answered {outcome.data['signal']}"
    if outcome.source == "rules":
        reason = f"{reason} (rules: {outcome.fallback})"
    _frame(turn, "intent", f"intent {signal}", f"Intent: {signal} — {reason}.",
           {"signal": signal, "reason": reason, "source": outcome.source, "model_text":
            outcome.results[-1].text if outcome.results else None})
    return signal, reason


def _requirements(turn: Turn, text: str) -> dict[str, Any]:
    """The request's requirements, once per text and turn: the model's structured output on a
    backend that has it (validated, repaired once, else the rules, recorded), the rules otherwise.
    Every decision after this (dependencies_known, template_decide) reads this one dict."""
    if text in turn.understood:
        return turn.understood[text]
    requirements, outcome = requirements_understood(turn.model, text)
    if outcome is not None:
        _structured_frame(turn, "requirements", outcome)
    turn.understood[text] = requirements
    return requirements


def _run_awaiting_input(turn: Turn):

    return (Run.objects.filter(conversation=turn.conversation, tenant_id=turn.membership.tenant_id,
                               status=RunStatus.AWAITING_INPUT).order_by("-created_at").first())


def _employees_of(turn: Turn, exploration: Exploration | None) -> list[str] | None:
    if turn.employees:
        return turn.employees.employee_ids
    if exploration is not None:
        return exploration.requirements.get("_employee_ids") or None
    return None


# --- Branches ----------------------------------------------------------------------------------

def _chat(turn: Turn) -> Outcome:
    messages = [{"role": "system", "content": PERSONA},
                {"role": "system", "content": narrative_context(conversation_id=turn.conversation.id)},
                *history_messages(conversation_id=turn.conversation.id, exclude_id=turn.message_id),
                {"role": "user", "content": turn.text}]
    result = turn.model(messages, purpose="chat", reply=True)
    return Outcome(route="chat", reply=result.text.strip() or "…")


def _clarify(turn: Turn) -> Outcome:
    messages = [{"role": "system", "content": PERSONA + " The user's message was unclear: ask one short "
                                                        "clarifying question."},
                {"role": "system", "content": narrative_context(conversation_id=turn.conversation.id)},
                {"role": "user", "content": turn.text}]
    result = turn.model(messages, purpose="clarify", reply=True)
    return Outcome(route="clarify", reply=result.text.strip() or "Could you say a little more about what you need?")


def _policy_topic(text: str) -> str | None:
    if re.search(POLICY_WORDS_EN, text.lower()) or any(w in text for w in POLICY_WORDS_ZH):
        return "travel"
    return None


def _date_in(text: str) -> date:
    today = timezone.localdate()
    full = re.search(r"(20\d\d)-(\d\d)-(\d\d)", text)
    if full:
        try:
            return date(int(full.group(1)), int(full.group(2)), int(full.group(3)))
        except ValueError:
            pass
    year = re.search(r"(?<!\d)(20\d\d)(?!\d)", text)
    if year and int(year.group(1)) != today.year:
        return date(int(year.group(1)), 7, 1)  # a year alone: its middle, well inside any yearly version
    return today


def _analyze(turn: Turn) -> Outcome:
    """One kind of answer per kind of question (agents.answers.analyze_kind), from the records."""
    kind = analyze_kind(turn.text)
    if kind == "policy":
        return _policy(turn, _policy_topic(turn.text) or "travel")
    if kind == "run":
        reply, run_id = run_answer(membership=turn.membership, conversation_id=turn.conversation.id, zh=turn.zh)
        _frame(turn, "observation", "observation: run status", reply, {"kind": kind, "run": str(run_id or "")})
        return Outcome(route="analyze", reply=reply, run_id=run_id)
    if kind == "rate":
        reply = rate_answer(turn.text, zh=turn.zh)
        if reply:
            _frame(turn, "observation", "observation: template items", reply, {"kind": kind})
            return Outcome(route="analyze", reply=reply)
    return _configuration(turn)


def _policy(turn: Turn, topic: str) -> Outcome:

    on_date = _date_in(turn.text)
    turn.calls += 1  # the policy workflow's one bounded decision counts against the turn
    result = policy_answer(tenant=turn.membership.tenant, question=turn.text[:500], on_date=on_date,
                           topic=topic, lang="zh" if turn.zh else "en")
    result = json.loads(json.dumps(result, default=str))
    _frame(turn, "tool_call", "policy workflow",
           f"Policy workflow: {' → '.join(result['path'])} — {result['state']} "
           f"({result['model_calls']} model call{'s' if result['model_calls'] != 1 else ''}).",
           {"question": turn.text, "date": on_date.isoformat(), "topic": topic, **result},
           operation="execute_tool", tool_name="policy_answer")
    answer = result.get("answer") or {}
    if result["state"] == "ANSWERED":
        quote = " ".join(f"[{c['source']} line {c['line']}] {c['text']}" for c in answer.get("citation", []))
        reply = (f"{answer['amount']} {answer['unit']}（{on_date.isoformat()} 适用）。依据：{quote}" if turn.zh else
                 f"{answer['amount']} {answer['unit']} (the policy in force on {on_date.isoformat()}). "
                 f"Source: {quote}")
    elif result["state"] == "ABSTAINED":
        reply = ("政策中没有足够的依据回答这个问题。" if turn.zh else
                 f"I can't answer that from the policy ({result['reason'].replace('_', ' ')}).")
    else:
        reply = ("我停止了这个问题的处理：" + result["reason"] if turn.zh else
                 f"I stopped before answering ({result['reason'].replace('_', ' ')}).")
    return Outcome(route="analyze", reply=reply)


def _configuration(turn: Turn) -> Outcome:
    """A configuration question: on a tool-calling backend the model picks a read-only tool
    (function calling) and phrases the answer from its observation, streamed; otherwise, or
    when its call is not a valid read-only one, the rules pick (recorded)."""
    if backend_structured():
        return _configuration_by_tool_call(turn)
    action, arguments = _configuration_by_rules(turn)
    words = _read_only_observe(turn, action, arguments, chosen_by="rules")
    return Outcome(route="analyze", reply=words)


def _read_only_observe(turn: Turn, action: str, arguments: dict[str, Any], *, chosen_by: str) -> str:
    tool = tool_get(action)
    output = tool.fn(ToolContext(tenant_id=turn.membership.tenant_id, run_id=0, node_id=0, node_key="analyze",
                                 user_id=turn.membership.user_id, call_id=0, idempotency_key="",
                                 approval_id=None, params={}), arguments)
    words = observation_words(action, output)
    _frame(turn, "action", f"action: {action}", f"Read the configuration: {action.replace('_', ' ')}.",
           {"action": action, "input": arguments, "chosen_by": chosen_by})
    _frame(turn, "observation", f"observation: {action}", words, {"action": action, "output": output})
    return words


def _configuration_by_tool_call(turn: Turn) -> Outcome:
    tools = [tool_get(name).as_model_tool() for name in READ_ONLY]
    messages = [{"role": "system", "content": PERSONA + " Answer the user's question about the company's payroll "
                                                        "configuration: call one of the read-only tools first, then "
                                                        "answer from what it returns, in the user's language."},
                {"role": "user", "content": turn.text}]
    result = turn.model(messages, purpose="react", tools=tools)
    call = tool_calls_first(result, set(READ_ONLY))
    chosen_by, why = "model", ""
    if call is not None:
        tool = tool_get(call["name"])
        arguments = {k: v for k, v in call["arguments"].items() if k in tool.input_schema.get("properties", {})}
        try:
            tool.input_validate(arguments)
        except Exception as err:  # a bad call is refused; the rules choose instead
            call, why = None, str(err)
    else:
        why = "the model called no read-only tool"
    if call is None:
        action, arguments = _configuration_by_rules(turn)
        chosen_by = "rules"
        _frame(turn, "validation", "tool call: fallback to rules",
               f"The model's tool call could not be used ({why}); the rules chose {action.replace('_', ' ')}.",
               {"reason": why, "action": action, "model_text": result.text, "tool_calls": result.tool_calls},
               status="error", level="warning")
        words = _read_only_observe(turn, action, arguments, chosen_by=chosen_by)
        return Outcome(route="analyze", reply=words)
    action = call["name"]
    words = _read_only_observe(turn, action, arguments, chosen_by=chosen_by)
    # The observation goes back as the tool's result; the model's answer streams into the chat.
    answer_messages = [*messages,
                       {"role": "assistant", "content": result.text or None, "tool_calls": [
                           {"id": call["id"] or "call_0", "type": "function",
                            "function": {"name": action, "arguments": json.dumps(arguments, ensure_ascii=False)}}]},
                       {"role": "tool", "tool_call_id": call["id"] or "call_0", "content": words}]
    answer = turn.model(answer_messages, purpose="answer", reply=True)
    return Outcome(route="analyze", reply=answer.text.strip() or words)


def _configuration_by_rules(turn: Turn) -> tuple[str, dict[str, Any]]:
    lowered = turn.text.lower()
    if re.search(r"\b(employees?|staff|people|headcount|workers?)\b", lowered) or any(
            w in turn.text for w in ("员工", "人数", "多少人")):
        by = "department" if re.search(r"\b(department|team)s?\b", lowered) or "部门" in turn.text else "location"
        action, arguments = "count_employees", {"by": by}
    elif re.search(r"\btemplates?\b|\bcatalog", lowered) or "模板" in turn.text:
        req = requirements_extract(turn.text)
        action, arguments = "list_templates", {k: req[k] for k in ("region", "pay_frequency", "population")}
        arguments["items_named"] = req["items_named"]
    else:
        action, arguments = "list_groups", {}
    return action, arguments


def _plan_start(turn: Turn, *, request: str, requirements: dict[str, Any], template_name: str | None,
                employees: list[str] | None) -> Outcome:
    """The planning boundary: recall experience as context, then start the fixed plan. The
    run's first records commit with the reply (message_post); a worker plans it after."""

    items = template_memories(tenant_id=turn.membership.tenant_id, requirements=requirements)
    group_name = (requirements.get("group_name") or ("新薪资组" if turn.zh else "New payroll group"))[:120]
    params: dict[str, Any] = {"request": request[:4000], "group_name": group_name}
    if template_name:
        # The program resolves the name the exploration observed; the model never types a code.
        code = (PayrollTemplate.objects.filter(name=template_name).order_by("-version")
                .values_list("code", flat=True).first())
        if code:
            params["template_code"] = code
    if employees:
        params["employee_ids"] = list(employees)
    if turn.new_employees:
        # Not in the system of record yet: the approval card proposes them; created on approval.
        params["new_employees"] = list(turn.new_employees)
    if backend_structured():
        # The run decides on exactly what the conversation understood (no second reading).
        params["requirements"] = requirements
    params = params_validate("payroll_group_setup", params)  # refused here, within the turn
    reply = _plan_reply(turn, requirements, group_name, employees)

    def run_started() -> int:  # inside the reply's transaction
        if items:
            frame_record(activity_id=turn.activity_id, kind="memory", name="memory: planning",
                         summary=f"Recalled {len(items)} earlier experience(s) as context; they rank candidates "
                                 "but authorise nothing.",
                         payload={"boundary": "planning", "items": [memory_link(i) for i in items]})
        run = run_create(membership=turn.membership, blueprint="payroll_group_setup", params=params,
                         conversation_id=turn.conversation.id, door=Door.CONVERSATION)
        run_plan_on_commit(run)
        ledger_append(conversation_id=turn.conversation.id, run_id=run.id, milestone="run:started",
                      text=f"the setup of the group “{group_name}” was started")
        if employees or turn.new_employees:
            count = len(employees or []) + len(turn.new_employees)
            ledger_append(conversation_id=turn.conversation.id, run_id=run.id, milestone="run:employees",
                          text=f"an employee list of {count} people will be assigned after the import")
        return run.id

    return Outcome(route="plan", reply=reply, start_run=run_started)


def _plan_reply(turn: Turn, requirements: dict[str, Any], group_name: str, employees: list[str] | None) -> str:
    """What the user is told as the run starts: the template it will use, or why it will ask."""
    decision = template_decide(requirements, template_catalog())
    zh = turn.zh
    if decision.kind == "clear":
        template = (decision.chosen.name_zh or decision.chosen.name) if zh else decision.chosen.name
        reply = (f"好的，我开始创建薪资组“{group_name}”，使用模板“{template}”：先做快照，导入前会请审批人确认。" if zh else
                 f"I've started setting up “{group_name}” with the template “{template}” "
                 f"({requirements_words(requirements)}): I'll take a snapshot first, and import it once an "
                 "approver agrees.")
    else:
        reply = (f"我开始创建薪资组“{group_name}”。" if zh else f"I've started setting up “{group_name}”. ") + \
            decision_question(decision, requirements).split("。" if zh else " Which")[0].split(" The nearest")[0] + \
            ("请在下面选择模板。" if zh else " Pick a template below.")
    if employees:
        reply += (f"导入后会把名单中的 {len(employees)} 名员工分配到该组。" if zh else
                  f" Then I'll assign the {len(employees)} employees on your list.")
    if turn.new_employees:
        count = len(turn.new_employees)
        reply += (f"名单中有 {count} 名员工还不在系统中：审批人批准后会新建并分配到该组。" if zh else
                  f" {count} employee{'s' if count != 1 else ''} on your list {'are' if count != 1 else 'is'} not in "
                  "the payroll system yet: the approver will see them as new, and they are created on approval.")
    return reply


def _explore(turn: Turn, state: ExplorationState, *, employees: list[str] | None) -> Outcome:
    outcome = react_explore(state=state, tenant_id=turn.membership.tenant_id, user_id=turn.membership.user_id,
                            conversation_id=turn.conversation.id, activity_id=turn.activity_id, model=turn.model,
                            zh=turn.zh)
    if outcome.kind == "plan":
        Exploration.objects.filter(conversation=turn.conversation).delete()  # run state ends with the exploration
        _frame(turn, "route", "route → plan", f"Route: plan — the exploration settled it ({outcome.reason}).",
               {"branch": "plan", "reason": outcome.reason, "iterations": outcome.iterations})
        return _plan_start(turn, request=state.request, requirements=outcome.requirements,
                           template_name=outcome.template_name, employees=employees)
    previous = Exploration.objects.filter(conversation=turn.conversation).values_list("question", flat=True).first()
    if previous and outcome.question == previous:
        # Never the same question twice in a row: say what was not understood, and how to answer.
        outcome.question = ("我没能从您的回答中识别出城市或地区。请直接写城市名（例如“杭州”“上海”），或回复“全国”。" if turn.zh else
                            "I couldn't find a city or region in that. Please name the city (for example "
                            "“Hangzhou” or “Shanghai”), or say “nationwide”.")
    stored = {**outcome.requirements, "_template_name": state.template_name, "_employee_ids": employees or [],
              "_new_employees": turn.new_employees}
    Exploration.objects.update_or_create(conversation=turn.conversation, defaults={
        "request": state.request, "requirements": stored, "scratchpad": outcome.scratchpad,
        "iterations": outcome.iterations, "question": outcome.question})
    return Outcome(route="explore", reply=outcome.question)


def _resume_exploration(turn: Turn, exploration: Exploration) -> Outcome:
    request = exploration.request if _is_continue(turn.text) else f"{exploration.request}\n{turn.text}"
    requirements = _requirements(turn, request)
    template_name = exploration.requirements.get("_template_name")
    employees = _employees_of(turn, exploration)
    if not turn.employees:
        turn.new_employees = list(exploration.requirements.get("_new_employees") or [])
    state = ExplorationState(request=request, requirements=requirements, scratchpad=list(exploration.scratchpad),
                             iterations=exploration.iterations, template_name=template_name)
    if dependencies_known(requirements, template_name)[0]:
        exploration.delete()
        return _plan_start(turn, request=request, requirements=requirements, template_name=template_name,
                           employees=employees)
    return _explore(turn, state, employees=employees)


def _resume_run(turn: Turn, run) -> Outcome:
    """The second form of human involvement: the answer, or "continue", in a later turn."""

    node = active_nodes(run.id).filter(status="awaiting_input").first()
    question = (node.question or {}) if node else {}
    options = question.get("options") or []
    if _is_continue(turn.text):
        if not options:
            return Outcome(route="resume_run", run_id=run.id,
                           reply=question.get("text") or "The run is waiting for an answer; please give it.")
        answer = options[0]["answer"]
        shown = options[0].get("label_zh") or answer if turn.zh else answer
        reply = f"继续，采用推荐的“{shown}”。" if turn.zh else f"Continuing with the first suggestion, “{answer}”."
    else:
        # A click sends the option's label; "the first one", the label in the other language
        # or a close variant picks the same option (payroll.matching.option_choose).
        index = option_choose(turn.text, options)
        if options and index is None:
            labels = [o.get("label_zh") or o["label"] if turn.zh else o.get("label_en") or o["label"] for o in options]
            return Outcome(route="resume_run", run_id=run.id, options=options,
                           reply=(f"“{turn.text[:60]}”不是可选项之一。请点选：" + "、".join(labels) + "，或回复“第一个”。"
                                  if turn.zh else f"“{turn.text[:60]}” is not one of the options. Click one of "
                                  + ", ".join(f"“{label}”" for label in labels) + ", or reply “the first one”."))
        answer = options[index]["answer"] if options else turn.text
        shown = (options[index].get("label_zh") or answer) if options and turn.zh else answer
        reply = f"收到，继续处理：“{shown}”。" if turn.zh else f"Thanks — continuing with “{shown}”."
    try:
        with transaction.atomic():
            node_input_answer(membership=turn.membership, run_id=run.id, answer=answer)
    except Conflict:
        return Outcome(route="resume_run", run_id=run.id, reply="That question was already answered.")
    ledger_append(conversation_id=turn.conversation.id, run_id=run.id, milestone=f"input:{node.key}:{node.id}",
                  text="the user answered the run's question")
    return Outcome(route="resume_run", reply=reply, run_id=run.id)
