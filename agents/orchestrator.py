"""The orchestrator: one user message in, one reply out (control signal, DESIGN.md §2).

    message received → intent → control signal → one explicit branch → reply

The MessageHandler part (`message_post`) owns the message boundary: it validates the
text and the attachment before anything is written, opens the turn's Activity, routes,
streams the reply as events and closes the turn. `_route` is the orchestrator proper: it
reads the control signal and the conversation's state and picks exactly one branch. It
names no domain: each registers its part (workflows.conversation) and is handed the turn
(`Turn`, the contract's TurnContext):

- a domain that asked a question in this conversation and is answered holds the turn;
- a run waiting for the user's answer takes it (unless a domain is sure it is its own);
- the domain whose own understanding claims the message most surely answers it (e.g. a
  request to set up something, or to file something; a file only it takes);
- chat     → a reply from the model, with the conversation's narrative context;
- analyze  → a read-only answer from the domain whose reading claims the question, or
             the front's own answer about the conversation's runs;
- unknown  → a clarifying question.

The intent and the route, each with its reason, are frames; every model call made in the
turn is a model-call frame of the turn's Activity (timeline.model_frames). Control information
(signals, routes, run status) drives branches; narrative (Anchor, Ledger, Collection)
only informs the model and never carries a business id.

Streaming contract for the console: the reply is pushed on the conversation's group as
timeline events — "message.received" {activity, text, attachment}, zero or more
"message.delta" {activity, index, text} (append in index order), then exactly one
"message.reply" {activity, text, words, intent, route, run}, whose text is the whole reply (in
the request's language) and replaces the deltas; `words` is the reply as meaning (config.words;
null for a model's free text), which a reader's page renders in the reader's language (the
console re-reads the chat, Message.text_shown). The POST answers once the turn is done with
the same text.

A run the turn starts costs the request only its first records (the run and its Activity),
committed with the reply; a worker plans it after the commit (workflows.tasks.plan_run),
and the sweeper plans one whose message was lost. A turn that fails before its commit
leaves no run.
"""
from __future__ import annotations

import re
from typing import Any

from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from config.api import Conflict, DomainError, Forbidden
from config.words import Stored, is_words, localised, words, words_english, words_render
from llm import ModelError, backend_structured
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
from workflows.conversation import (
    AttachmentKind,
    Claim,
    ConversationDomain,
    TurnReply,
    attachment_kind_for,
    attachment_kinds,
    conversation_domains,
    domain_of_blueprint,
    option_choose,
    structured_frame,
)
from workflows.models import RUN_TERMINAL, Run, RunStatus
from workflows.selectors import run_act_allowed
from workflows.services import REVISABLE, active_nodes, node_input_answer, run_cancel, run_revise
from workflows.tools import question_words

from .answers import question_claims, run_answer
from .intent import intent_classify, intent_messages, signal_parse
from .memory import history_messages, ledger_append, ledger_sync, narrative_context
from .models import Message
from .turn_context import Turn
from .understanding import intent_structured

MAX_TEXT = 4000
SURE = 0.9  # a domain's claim this sure takes a message even while a run waits for an answer
CONTINUE_WORDS = {"continue", "go on", "go ahead", "proceed", "carry on", "resume", "ok", "okay", "yes",
                  "继续", "好的", "可以", "继续吧", "好"}
PERSONA_OPENING = "You are Keel, an assistant that acts in the company's systems of record."
PERSONA_CLOSING = "Answer briefly. You cannot approve anything and you never invent identifiers."


def persona() -> str:
    """Who Keel is for the chat model: each registered domain says what Keel does in it."""
    return " ".join([PERSONA_OPENING, *(d.persona for d in conversation_domains() if d.persona), PERSONA_CLOSING])


Outcome = TurnReply  # what a turn answers (workflows.conversation): the front's branches and the domains'


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


class AttachmentRefused(DomainError):
    code = "attachment_type"


def attachment_kind(filename: str) -> AttachmentKind:
    """The registered kind that takes this file, by its name; refused when none does."""
    kind = attachment_kind_for(filename)
    if kind is None:
        kinds = [_(k.described) for k in attachment_kinds()]  # marked with gettext_noop by each domain
        raise AttachmentRefused(_("This file cannot be attached here. Attach one of: %(kinds)s.")
                                % {"kinds": "; ".join(kinds) or "—"})
    return kind


def attachment_max_bytes() -> int:
    """The largest file any registered kind takes (the chat's request cap is raised to it)."""
    return max([k.max_bytes for k in attachment_kinds()] or [0])


def attachment_read(upload) -> tuple[str, bytes]:
    """A multipart upload's name and bytes; a file past its kind's limit is refused unread."""
    kind = attachment_kind(upload.name)
    if upload.size > kind.max_bytes:
        raise kind.too_large(upload.size)
    return upload.name, upload.read(kind.max_bytes + 1)


def message_post(*, membership: Membership, conversation_id: int, text: str | None,
                 attachment: tuple[str, bytes] | None = None,
                 conversation: Conversation | None = None) -> dict[str, Any]:
    """Handle one user message: → {activity_id, intent, reply, run_id} (ids as strings).

    Everything is checked before anything is written: an unknown conversation is 404, an
    empty or oversized text and a bad attachment are 400 and change nothing (the domain
    that takes the file's kind checks it). `conversation`: the caller already read it with
    conversation_get_for (no second lookup)."""
    if conversation is None or conversation.id != conversation_id or conversation.tenant_id != membership.tenant_id:
        conversation = conversation_get_for(membership, conversation_id)
    text = message_validate(text)
    attached, kind = None, None
    if attachment is not None:
        kind = attachment_kind(attachment[0])
        attached = kind.parse(membership, conversation.id, text, attachment[0], attachment[1],
                              "zh" if re.search(r"[\u4e00-\u9fff]", text) else "en")
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
                                         text=text, author=membership.user,
                                         attachment_name=attached.filename if attached else "",
                                         attachment_rows=attached.rows if attached else 0)
        event_append(conversation_id=conversation.id, type="message.received",
                     data={"activity": str(activity.id), "text": text, "user": membership.user.username,
                           "author": membership.user.get_full_name() or membership.user.username,
                           "attachment": ({"name": attached.filename, "rows": attached.rows}
                                          if attached else None)})
        if attached:
            frame_record(activity_id=activity.id, kind="validation", name="attachment", summary=attached.summary,
                         payload=attached.payload)
    turn = Turn(membership=membership, conversation=conversation, activity_id=activity.id, message_id=message.id,
                text=text, attachment=attached.data if attached else None, attachment_kind=kind.name if kind else "")
    with model_frames_into(activity.id):
        try:
            outcome = _route(turn)
        except (ModelError, DomainError) as err:
            reason = err.message if isinstance(err, DomainError) else str(err)
            frame_record(activity_id=activity.id, kind="error", name="turn stopped", status="error",
                         level="error", summary="The turn stopped before it was done; nothing was changed.",
                         payload={"error": reason, "type": type(err).__name__})
            outcome = Outcome(route="stopped", status="failed",
                              reply=words(gettext_noop("I couldn't finish this turn (the model did not answer in "
                                                       "time or a check refused). Nothing was changed; please try "
                                                       "again."))
                              if isinstance(err, ModelError) else reason)
    turn._flush()
    route = outcome.route if outcome.route == "stopped" or not turn.branch else turn.branch
    outcome.route = route
    understood = understood_as(turn.signal, route, outcome.understood)
    # The reply is words (config.words), stored as meaning and rendered for each reader; a
    # plain string (a model's free text, a person's words) is shown as it is. `text` is its
    # rendering in the request's language: what the POST answers and API clients read.
    meaning = outcome.reply if is_words(outcome.reply) else None
    text = words_render(outcome.reply, turn.reader_lang) if meaning is not None else str(outcome.reply or "")
    with events_batched():  # the reply, and the run it starts, in one commit
        if outcome.start_run is not None:
            outcome.run_id = outcome.start_run()
        Message.objects.create(conversation=conversation, activity_id=activity.id, role=Message.Role.ASSISTANT,
                               text=text, words=meaning, intent=turn.signal, understood=understood,
                               run_id=outcome.run_id, options=outcome.options)
        # intent and route are labels of the turn, not statuses: set once, here. The run a
        # turn started is on the Message and the reply event; the run has its own Activity.
        activity_close(activity_id=activity.id, status=outcome.status,
                       summary=meaning if meaning is not None else text[:500], intent=turn.signal,
                       route=outcome.route)
        event_append(conversation_id=conversation.id, run_id=outcome.run_id, type="message.reply",
                     data={"activity": str(activity.id), "text": text, "words": meaning, "intent": turn.signal,
                           "route": outcome.route, "run": str(outcome.run_id) if outcome.run_id else None,
                           "options": outcome.options})
    return {**outcome.extra, "activity_id": str(activity.id), "intent": turn.signal, "understood": understood,
            "reply": text,
            "run_id": str(outcome.run_id) if outcome.run_id else None, "options": outcome.options}


# What a message was understood as, by the branch that took it: the classifier reads the words
# alone, and "the first one" or "Shenzhen" read alone are not understood — yet said to Keel's
# question they are an answer, and the chip says so. A route not named here (a domain's own) is
# understood as the domain said (TurnReply.understood), else as the classifier read it.
ROUTE_UNDERSTOOD = {"resume_run": "answer", "change": "change", "change_follow_up": "change", "cancel": "cancel",
                    "clarify": "unknown", "chat": "chat", "analyze": "analyze"}


def understood_as(signal: str, route: str, said: str = "") -> str:
    return said or ROUTE_UNDERSTOOD.get(route) or signal


def _title_of(text: str) -> str:
    line = text.strip().splitlines()[0]
    return line if len(line) <= 80 else line[:79].rstrip() + "…"


# --- The orchestrator proper -----------------------------------------------------------------

def _frame(turn: Turn, kind: str, name: str, summary: Stored, payload: dict[str, Any], **extra: Any) -> None:
    frame_record(activity_id=turn.activity_id, kind=kind, name=name, summary=summary, payload=payload, **extra)


# The intent and the route frames are words (config.words): the signal and the branch are codes,
# shown to a reader by their word ("resolve" / "办理"); a reason is a fixed sentence in words, or,
# where it is built from parts (the rules' and the model's own reasons), its English as it was
# with a generic sentence for a reader of another language (`reason_built`). The frame's payload
# keeps the codes and the English reason.
SIGNAL_WORDS = {"resolve": gettext_noop("resolve"), "chat": gettext_noop("chat"),
                "analyze": gettext_noop("analyze"), "unknown": gettext_noop("unknown")}
BRANCH_WORDS = {"resume_run": gettext_noop("resume_run"), "chat": gettext_noop("chat"),
                "analyze": gettext_noop("analyze"), "clarify": gettext_noop("clarify"),
                "cancel": gettext_noop("cancel"), "change": gettext_noop("change")}


def signal_words(signal: str) -> Stored:
    return words(SIGNAL_WORDS[signal]) if signal in SIGNAL_WORDS else signal


def reason_built(english: str, generic: str, **params: Any) -> dict[str, str]:
    """A reason built from parts in English: the English as it is, and `generic` (a msgid
    marked with gettext_noop) for the Chinese reader, rendered from the catalog now."""
    return localised(english, words_render(words(generic, **params), "zh-hans"))


def intent_summary(signal: str, reason: Stored) -> dict[str, Any]:
    return words(gettext_noop("Intent: %(signal)s — %(reason)s."), signal=signal_words(signal), reason=reason)


def route_summary(branch: Stored, why: Stored) -> dict[str, Any]:
    return words(gettext_noop("Route: %(branch)s — %(why)s."), branch=branch, why=why)


def _reason_text(reason: Stored) -> str:
    """A reason's English, for the payload and for the callers that read it."""
    if isinstance(reason, dict) and not is_words(reason):
        return str(reason.get("en", ""))
    return words_english(reason)


def _is_continue(text: str) -> bool:
    return text.strip().strip(".!。！").lower() in CONTINUE_WORDS


def _best(bids: list[tuple[ConversationDomain, Claim | None]]) -> tuple[ConversationDomain, Claim] | None:
    """The domain with the highest claim (the first registered on a tie), or None."""
    placed = [(d, c) for d, c in bids if c is not None and c.score > 0]
    return max(placed, key=lambda pair: pair[1].score) if placed else None


def _route(turn: Turn) -> Outcome:
    """One branch per turn. A domain that asked a question in this conversation and is
    answered holds the turn; then a run waiting for the user's answer; then the domain whose
    own understanding claims the message most surely; then chat, a read-only answer, or a
    clarifying question. No domain is tried by name."""
    ledger_sync(conversation_id=turn.conversation.id)  # the reasoning boundary reads fresh progress
    signal, reason = _classify(turn)
    turn.signal = signal
    domains = conversation_domains()
    holding = _best([(d, d.holds(turn)) for d in domains])
    if holding is not None:
        # A conversation is the tenant's, but a run's question is its starter's to answer: a
        # domain that asked here would take another member's reply as the answer.
        foreign = _run_awaiting_input(turn)
        if foreign is not None and not run_act_allowed(turn.membership, foreign, "answer"):
            # "cancel" is a cancel here, not an answer: allowed to an approver, else refused as a cancel.
            cancelled = _change(turn, None) if CANCEL.match(turn.text) else None
            return cancelled or _not_theirs(turn, foreign)
        return _domain_turn(turn, holding[0], understood="answer")  # it asked here: this answers it
    claimed = _best([(d, d.claims(turn)) for d in domains])
    changed = _change(turn, claimed) if signal != "analyze" else None
    if changed is not None:
        return changed
    waiting_run = _run_awaiting_input(turn)
    if signal in ("chat", "analyze"):
        waiting_run = None
    # A run waiting for an answer takes the message, unless a domain is sure it is its own.
    if claimed is not None and (waiting_run is None or claimed[1].score >= SURE):
        return _domain_turn(turn, claimed[0], understood=signal if signal in ("resolve", "analyze") else "resolve")
    if waiting_run is not None:
        branch, why = "resume_run", gettext_noop("a run is waiting for the user's answer; this message answers it")
    elif signal == "chat":
        branch, why = "chat", gettext_noop("small talk: answer it")
    elif signal == "analyze":
        branch, why = "analyze", gettext_noop("a read-only question: answer it from the records or the policy")
    else:
        branch, why = "clarify", (gettext_noop("the intent is unknown: ask a clarifying question")
                                  if signal == "unknown" else
                                  gettext_noop("no domain takes this request: ask a clarifying question"))
    turn.branch = branch
    _frame(turn, "route", f"route → {branch}", route_summary(words(BRANCH_WORDS[branch]), words(why)),
           {"signal": signal, "branch": branch, "reason": why})
    if branch == "resume_run":
        if not run_act_allowed(turn.membership, waiting_run, "answer"):
            return _not_theirs(turn, waiting_run)
        return _resume_run(turn, waiting_run)
    if branch == "chat":
        return _chat(turn)
    if branch == "analyze":
        return _analyze(turn)
    return _clarify(turn)


# "cancel", "stop it", "取消", "算了": said while a run waits, it cancels that run.
CANCEL = re.compile(r"(?i)^\s*(?:please\s+)?(?:cancel|stop|abort)(?:\s+(?:it|this|that|the run|the setup|everything))?"
                    r"(?:,?\s*please)?[\s.!]*$|^\s*(?:取消|算了|不要了|停止|别做了)(?:吧|了)?[。！!\s]*$")
# Words that make a message a change of mind even when it also reads as a new request.
CHANGE_OF_MIND = re.compile(r"(?i)\b(actually|instead|rather|rename|scratch that)\b|改成|改为|改叫|改用|换成|还是")


def _change(turn: Turn, claimed: tuple[ConversationDomain, Claim] | None) -> Outcome | None:
    """A change said to the conversation's latest run: "cancel" cancels a run that
    waits; a change its domain reads ("call it X", "use the Beijing template") replans the run
    while it waits (workflows.services.run_revise: the pending card is withdrawn, only what the
    change needs is asked again), and is offered as a new run once the run has ended. A message
    a domain surely takes as a new request, with no word of a change of mind, is that request."""
    run = (Run.objects.filter(conversation=turn.conversation, tenant_id=turn.membership.tenant_id)
           .order_by("-created_at").first())
    if run is None:
        return None
    waits = run.status in REVISABLE and not run.cancel_requested
    if waits and CANCEL.match(turn.text):
        try:
            run_cancel(membership=turn.membership, run_id=run.id, reason=turn.text[:500])
        except (Conflict, DomainError) as err:  # err.words: a refusal in words is said in the reader's language
            return Outcome(route="cancel", run_id=run.id, status="failed", reply=err.words)
        _frame(turn, "route", "route → cancel", route_summary(words(BRANCH_WORDS["cancel"]), words(
            gettext_noop("the person cancelled the waiting run"))), {"run": str(run.id)})
        return Outcome(route="cancel", run_id=run.id, reply=words(
            gettext_noop("Done: I cancelled the run; anything it changed is being undone.")))
    if run.status == RunStatus.AWAITING_INPUT and not CHANGE_OF_MIND.search(turn.text):
        return None  # the run's open question takes what the message says
    owner = domain_of_blueprint(run.blueprint)
    change = owner.change(turn, run) if owner is not None else None
    if change is None:
        return None
    if claimed is not None and (not waits or claimed[1].score >= SURE) and not CHANGE_OF_MIND.search(turn.text):
        return None  # a new request that happens to name things: the domain starts it
    _frame(turn, "route", "route → change", route_summary(words(BRANCH_WORDS["change"]), words(
        gettext_noop("the message changes the conversation's latest run"))),
           {"run": str(run.id), "status": run.status, "params": sorted(change.params_update)})
    if waits:
        try:
            run_revise(membership=turn.membership, run_id=run.id, params_update=change.params_update,
                       replace=change.replace, reason=change.reason)
        except (Conflict, DomainError) as err:
            return Outcome(route="change", run_id=run.id, status="failed", reply=err.words)
        return Outcome(route="change", run_id=run.id, reply=change.reply)
    if run.status in RUN_TERMINAL or run.cancel_requested:
        offer = [{"label": change.follow_up[:200], "answer": change.follow_up[:200]}] if change.follow_up else []
        return Outcome(route="change_follow_up", run_id=run.id, options=offer, reply=words(gettext_noop(
            "That setup has finished, so I left it as it is. To apply the change, I can start a new one: click the "
            "suggestion below or tell me what to set up.")))
    return Outcome(route="change", run_id=run.id, status="failed", reply=words(gettext_noop(
        "The run is working on a step right now; say the change again once it waits.")))


def _domain_turn(turn: Turn, domain: ConversationDomain, *, understood: str) -> Outcome:
    """The domain answers and records its own route; the turn's route is the one it names.
    `understood`: what taking the message to this domain means it was, unless the domain says."""
    outcome = domain.answer(turn)
    turn.branch = outcome.route
    outcome.understood = outcome.understood or ROUTE_UNDERSTOOD.get(outcome.route) or understood
    return outcome


def _classify(turn: Turn) -> tuple[str, str]:
    """The same classifier everywhere: the configured model answers `intent`; with the
    builtin backend that is agents.intent.intent_classify. Anything outside the four
    signals, or no answer at all, is `unknown`."""
    messages = intent_messages(turn.text)
    messages.insert(1, {"role": "system", "content": narrative_context(conversation_id=turn.conversation.id)})
    if backend_structured():
        return _classify_structured(turn, messages)
    reason: Stored
    try:
        result = turn.model(messages, purpose="intent")
    except ModelError as err:
        signal, said = "unknown", None
        reason = words(gettext_noop("the classifier did not answer (%(error)s)"), error=type(err).__name__)
    else:
        said = result.text
        signal = signal_parse(said)
        if result.provider == "builtin":
            reason = reason_built(intent_classify(turn.text).reason,
                                  gettext_noop("read from the words of the message by the rules"))
        elif signal == "unknown" and (said or "").strip().lower() != "unknown":
            reason = words(gettext_noop("the model's answer “%(said)s” is not one of the four signals"),
                           said=(said or "")[:60])
        else:
            reason = words(gettext_noop("the model answered %(signal)s"), signal=signal_words(signal))
    english = _reason_text(reason)
    _frame(turn, "intent", f"intent {signal}", intent_summary(signal, reason),
           {"signal": signal, "reason": english, "model_text": said})
    return signal, english


def _classify_structured(turn: Turn, messages: list[dict]) -> tuple[str, str]:
    """Intent as JSON-schema structured output; the rules (agents.intent) when it fails twice."""
    outcome = intent_structured(turn.model, messages, turn.text)
    structured_frame(turn, "intent", outcome)
    signal, said = outcome.data["signal"], outcome.data["reason"]
    reason: Stored
    if outcome.source == "rules":
        reason = reason_built(f"{said or 'the model answered ' + signal} (rules: {outcome.fallback})",
                              gettext_noop("read from the words of the message by the rules (the model's answer "
                                           "could not be used)"))
    elif said:
        reason = reason_built(said, gettext_noop("the model's own reason, in its words"))
    else:
        reason = words(gettext_noop("the model answered %(signal)s"), signal=signal_words(signal))
    english = _reason_text(reason)
    _frame(turn, "intent", f"intent {signal}", intent_summary(signal, reason),
           {"signal": signal, "reason": english, "source": outcome.source, "model_text":
            outcome.results[-1].text if outcome.results else None})
    return signal, english


def _run_awaiting_input(turn: Turn):
    return (Run.objects.filter(conversation=turn.conversation, tenant_id=turn.membership.tenant_id,
                               status=RunStatus.AWAITING_INPUT).order_by("-created_at").first())


# --- Branches ----------------------------------------------------------------------------------

def _chat(turn: Turn) -> Outcome:
    messages = [{"role": "system", "content": persona()},
                {"role": "system", "content": narrative_context(conversation_id=turn.conversation.id)},
                *history_messages(conversation_id=turn.conversation.id, exclude_id=turn.message_id),
                {"role": "user", "content": turn.text}]
    result = turn.model(messages, purpose="chat", reply=True)
    return Outcome(route="chat", reply=result.text.strip() or "…")


def _clarify(turn: Turn) -> Outcome:
    messages = [{"role": "system", "content": persona() + " The user's message was unclear: ask one short "
                                                          "clarifying question."},
                {"role": "system", "content": narrative_context(conversation_id=turn.conversation.id)},
                {"role": "user", "content": turn.text}]
    result = turn.model(messages, purpose="clarify", reply=True)
    return Outcome(route="clarify", reply=result.text.strip() or words(
        gettext_noop("Could you say a little more about what you need?")))


def _analyze(turn: Turn) -> Outcome:
    """One kind of answer per kind of question: the domain whose own reading claims the
    question most surely answers it; a question about the conversation's runs is the front's."""
    owner, claim = question_claims(turn.text)
    if owner is None:
        reply, run_id = run_answer(membership=turn.membership, conversation_id=turn.conversation.id)
        _frame(turn, "observation", "observation: run status", reply, {"kind": claim.kind, "run": str(run_id or "")})
        return Outcome(route="analyze", reply=reply, run_id=run_id)
    answered = owner.analyze(turn, claim.kind)
    if answered is not None:
        return answered
    return Outcome(route="analyze", reply=words(gettext_noop("I can't answer that from the records.")))


def _resume_run(turn: Turn, run) -> Outcome:
    """The second form of human involvement: the answer, or "continue", in a later turn."""
    node = active_nodes(run.id).filter(status="awaiting_input").first()
    question = (node.question or {}) if node else {}
    options = question.get("options") or []
    if _is_continue(turn.text):
        if not options:
            return Outcome(route="resume_run", run_id=run.id, reply=question_words(question) or words(
                gettext_noop("The run is waiting for an answer; please give it.")))
        answer = options[0]["answer"]
        reply = words(gettext_noop("Continuing with the first suggestion, “%(answer)s”."),
                      answer=option_label(options[0]))
    else:
        # A click sends the option's label; "the first one", the label in the other language
        # or a close variant picks the same option (workflows.conversation.option_choose); the
        # run's domain may place what that reading did not ("the Shenzhen one").
        index = option_choose(turn.text, options)
        owner = domain_of_blueprint(run.blueprint)
        if index is None and options and owner is not None:
            index = owner.option_choose(turn.text, options)
        if options and index is None:  # read as an answer, but to none of the options: not understood
            return Outcome(route="resume_run", run_id=run.id, options=options, understood="unknown", reply=words(gettext_noop(
                "“%(said)s” is not one of the options. Click one of %(labels)s, or reply “the first one”."),
                said=turn.text[:60], labels=[words(gettext_noop("“%(label)s”"), label=option_label(o))
                                             for o in options]))
        answer = options[index]["answer"] if options else turn.text
        reply = words(gettext_noop("Thanks — continuing with “%(answer)s”."),
                      answer=option_label(options[index]) if options else answer)
    try:
        with transaction.atomic():
            node_input_answer(membership=turn.membership, run_id=run.id, answer=answer)
    except Conflict:
        return Outcome(route="resume_run", run_id=run.id,
                       reply=words(gettext_noop("That question was already answered.")))
    ledger_append(conversation_id=turn.conversation.id, run_id=run.id, milestone=f"input:{node.key}:{node.id}",
                  text="the user answered the run's question")
    return Outcome(route="resume_run", reply=reply, run_id=run.id)


def _not_theirs(turn: Turn, run: Run) -> Outcome:
    """Another member's run asked the question: said plainly, nothing answered."""
    starter = run.created_by.get_full_name() or run.created_by.username
    _frame(turn, "route", "route → resume_run refused", route_summary(words(BRANCH_WORDS["resume_run"]), words(
        gettext_noop("the run's question is its starter's to answer"))), {"run": str(run.id), "starter": starter})
    return Outcome(route="resume_run", run_id=run.id, status="failed", reply=words(gettext_noop(
        "This question is for %(starter)s, who started the run; only they can answer it. For something of your own, "
        "start a new request."), starter=starter))


def option_label(option: dict[str, Any]) -> Stored:
    """An offered option's label as a name in each reader's language (its answer, else its label)."""
    en = option.get("label_en") or option.get("answer") or option.get("label") or ""
    return localised(str(en), str(option.get("label_zh") or en))
