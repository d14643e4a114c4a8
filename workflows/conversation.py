"""How a domain takes part in a conversation (CONVENTIONS 11).

The conversation front (agents) reads a user's message, decides among a few generic
branches (chat, clarify, answer a run's question, say how the conversation's runs are
doing) and hands every other turn to a domain. It never knows which domains exist: each
registers a `ConversationDomain` from its AppConfig.ready() (`conversation_register`), as
apps register with the admin. A domain says

- the words that make a message about it or ask it to act (`vocabulary`), so that the
  front's intent rules read every domain's subject without naming one;
- whether a turn is for it (`claims`, with a score and the reason; the highest wins), and
  whether it holds the turn (`holds`: it asked a question in this conversation and waits
  for the answer — a holding domain goes first);
- its answer (`answer`: the reply, options, a run to start with the reply's commit);
- the read-only questions it answers (`question` scores one, `analyze` answers it);
- the attachments it accepts (`attachments`: suffixes, a size limit, a parser that checks
  everything before anything is written);
- its persona line for the chat model, and what its runs are called in a sentence.

The front hands the domain a `TurnContext` (implemented by agents): who asks, where, the
text and its language, the parsed attachment, a budgeted model call, frames, the
conversation's narrative (anchor, ledger) and a per-conversation pending state keyed by the
domain's name. Everything here is generic: it names no domain."""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from rapidfuzz import fuzz

SIGNALS = ("chat", "analyze", "resolve", "unknown")


# --- What the front hands a domain -------------------------------------------------------------

class PendingState(Protocol):
    """A domain's open question in this conversation: a JSON object kept between turns (run
    state, not a business record), deleted when the domain is done with it."""

    def get(self) -> dict[str, Any] | None: ...

    def set(self, state: dict[str, Any]) -> None: ...

    def clear(self) -> None: ...


class TurnContext(Protocol):
    membership: Any  # tenants.models.Membership
    conversation_id: int
    activity_id: int
    message_id: int
    text: str
    signal: str  # the turn's intent: one of SIGNALS
    attachment: Any  # what the accepting domain's parser returned (Attached.data), or None
    attachment_kind: str  # the AttachmentKind.name of that parser, or ""
    memo: dict[str, Any]  # a domain's scratch for this turn only (e.g. what it understood of a text)

    @property
    def zh(self) -> bool: ...

    @property
    def lang(self) -> str: ...  # "zh" or "en"

    def model(self, messages: list[dict], *, purpose: str, choices: list[str] | None = None,
              reply: bool = False, tools: list[dict] | None = None, response_format: dict | None = None,
              max_tokens: int = 512) -> Any:
        """One model call within the turn's budget (a reply streams into the chat)."""

    def budget_spend(self, calls: int = 1) -> None:
        """Count a bounded decision made outside `model` (e.g. a workflow's own model call)."""

    def frame(self, kind: str, name: str, summary: Any, payload: dict[str, Any], **extra: Any) -> Any: ...

    def anchor_set(self, goal: str) -> None: ...

    def ledger_append(self, *, milestone: str, text: str, run_id: int | None = None) -> None: ...

    def narrative(self, collection: list[str] | None = None) -> str: ...

    def pending(self, domain: str) -> PendingState: ...

    def last_route(self) -> str:
        """The route of this conversation's previous turn ("" when there is none)."""


@dataclass
class TurnReply:
    """What a turn answers. `reply` is words (config.words: a message key and its parameters),
    stored as meaning and rendered in each reader's language; a plain string only for text no
    catalog holds (the person's own words, a model's free text), shown as it is. `start_run`
    starts the turn's run inside the reply's commit and returns its id; `extra` is merged into
    the message's answer (e.g. an attachment's id)."""

    route: str
    reply: Any
    run_id: int | None = None
    status: str = "completed"
    options: list[dict[str, Any]] = field(default_factory=list)
    start_run: Callable[[], int] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # What the message was understood as, when the route alone does not say (the chat's chip:
    # "answer", "change", "cancel", or a signal: "resolve", "analyze", "chat", "unknown").
    understood: str = ""


@dataclass
class Change:
    """A change a message says to one of the domain's runs ("call it X", "use the Beijing
    template", "add a 13th-month bonus"): the params it updates, the steps that decide again
    (and every step after them), why (words) and what to tell the person (words, rendered in
    each reader's language). `follow_up` is a request that would start a new run with the
    change, offered when the run has ended already."""

    params_update: dict[str, Any]
    replace: list[str]
    reason: Any
    reply: Any
    follow_up: str = ""


@dataclass(frozen=True)
class Claim:
    """A domain's bid for a turn or a question: the highest score wins; the reason is recorded."""

    score: float
    reason: str
    kind: str = ""


# --- Attachments -------------------------------------------------------------------------------

@dataclass
class Attached:
    """An attachment a domain checked: `data` goes to the turn; the rest is the message's record."""

    filename: str
    data: Any = None
    rows: int = 0
    summary: Any = ""  # the validation frame's words
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AttachmentKind:
    """One kind of file a domain takes in the chat. `parse(membership, conversation_id, text,
    filename, raw, lang)` checks it and raises a DomainError with the reason; it writes nothing."""

    name: str
    suffixes: tuple[str, ...]
    max_bytes: int
    described: str  # e.g. "a CSV or XLSX employee list (.csv, .xlsx)", in English (gettext at read)
    parse: Callable[..., Attached]
    too_large: Callable[[int], Exception]


# --- Words that make a message about a domain ---------------------------------------------------

@dataclass(frozen=True)
class Signs:
    """What the front's rules found in a text, handed to each domain's `read`."""

    text: str
    lowered: str  # normalised and corrected
    words: tuple[str, ...]  # the subject words found (every domain's and the front's own)
    question: bool
    request: bool  # a polite or imperative request marker ("please", "帮我")


@dataclass(frozen=True)
class Reading:
    """What a domain reads in a text beyond its words: the things it names (a subject of
    themselves), those that make a question about it, and — when the text describes a
    request to it without an action word — the reason."""

    named: tuple[str, ...] = ()
    topical: tuple[str, ...] = ()
    described: str = ""


@dataclass(frozen=True)
class Vocabulary:
    subject_en: tuple[str, ...] = ()  # regular expressions, matched as whole words
    subject_zh: tuple[str, ...] = ()
    act_en: tuple[str, ...] = ()  # a request to act that is the domain's own ("file a claim")
    act_zh: tuple[str, ...] = ()
    act_zh_re: tuple[str, ...] = ()
    exemplars: dict[str, tuple[str, ...]] = field(default_factory=dict)  # signal → examples
    read: Callable[[Signs], Reading] | None = None
    correct: Callable[[str], str] | None = None  # misspellings of its own words, on normalised text


def text_normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text or "").lower()


# --- Measuring the first step ----------------------------------------------------------------

@dataclass(frozen=True)
class Evaluation:
    """A domain's labelled requests and what it measures of the first turn (`manage.py
    eval_requests`). Each row has "t" (the text), "i" (the signal), optionally "k" (the kind
    of answer a question gets) and "s" (the split), plus the domain's own labels. `prepare()`
    reads what the steps share (once); `step(text, prepared, call)` is what the first turn
    decides for a request to act (call: llm.model_call); `score(add, row, got)` adds the
    domain's measures with add(measure, ok, row, got, want)."""

    labelled: Callable[[], list[dict[str, Any]]]
    measures: tuple[str, ...]
    prepare: Callable[[], Any]
    step: Callable[[str, Any, Callable[..., Any]], dict[str, Any]]
    score: Callable[..., None]


@dataclass(frozen=True)
class Dialogues:
    """A domain's labelled multi-turn dialogues (`manage.py eval_dialogues`), driven through the
    real conversation front in a test database. Each row has "id", "s" (the split), "turns"
    (what the person types), plus the domain's own labels. `prepare()` seeds what the dialogues
    need and returns who speaks (a membership); `observe(conversation_id, result, pending)` is
    what the domain sees after a turn (its runs driven as workers would; `pending`: its own
    open question's state, if any), with "asks" (a question is open) and "question" (which one); `score(add, row, observed)` adds the domain's measures."""

    labelled: Callable[[], list[dict[str, Any]]]
    measures: tuple[str, ...]
    prepare: Callable[[], Any]
    observe: Callable[[int, dict[str, Any], dict[str, Any] | None], dict[str, Any]]
    score: Callable[..., None]


# --- The domain ------------------------------------------------------------------------------

class ConversationDomain:
    """A domain's part in the conversation. Subclass and override what the domain does."""

    name: str = ""
    persona: str = ""  # one sentence for the chat model: what Keel does in this domain
    blueprints: tuple[str, ...] = ()  # the blueprints whose runs are this domain's
    vocabulary: Vocabulary = Vocabulary()
    attachments: tuple[AttachmentKind, ...] = ()
    evaluation: Evaluation | None = None
    dialogues: Dialogues | None = None  # labelled multi-turn dialogues (eval_dialogues), optional

    def holds(self, turn: TurnContext) -> Claim | None:
        """It asked a question in this conversation and this message answers it."""
        return None

    def claims(self, turn: TurnContext) -> Claim | None:
        """This message asks the domain to act."""
        return None

    def answer(self, turn: TurnContext) -> TurnReply:
        raise NotImplementedError

    def question(self, text: str) -> Claim | None:
        """How surely a read-only question is the domain's (Claim.kind: which kind of answer)."""
        return None

    def analyze(self, turn: TurnContext, kind: str) -> TurnReply | None:
        return None

    def option_choose(self, text: str, options: list[dict[str, Any]]) -> int | None:
        """A reply to one of its runs' questions that the generic reading did not place."""
        return None

    def change(self, turn: TurnContext, run: Any) -> Change | None:
        """What this message changes of the domain's latest run in the conversation (None: it
        changes nothing). The front applies it while the run waits, and offers it as a new run
        once the run has ended."""
        return None

    def run_title(self, run: Any) -> Any:
        """Its run as the subject of a sentence ("the setup of “Shanghai Sales”"), as words."""
        return None

    def run_made(self, run: Any) -> Any:
        """What a completed run of its made, in one sentence, as words."""
        return None

    def clarify_hint(self, text: str, zh: bool) -> str:
        """What to tell the user so that an unclear request to it becomes clear."""
        return ""

    def capability(self, zh: bool) -> str:
        """What Keel can do in this domain, as a phrase of a greeting."""
        return ""

    def example(self, zh: bool) -> str:
        """A request a person might type to it, shown where the chat says what Keel can do."""
        return ""


_domains: dict[str, ConversationDomain] = {}


def conversation_register(domain: ConversationDomain) -> None:
    """Called from a domain's AppConfig.ready(); registering twice replaces."""
    _domains[domain.name] = domain


def conversation_domains() -> list[ConversationDomain]:
    return list(_domains.values())


def domain_of_blueprint(blueprint: str) -> ConversationDomain | None:
    return next((d for d in _domains.values() if blueprint in d.blueprints), None)


def attachment_kinds() -> list[AttachmentKind]:
    return [kind for d in _domains.values() for kind in d.attachments]


def attachment_kind_for(filename: str) -> AttachmentKind | None:
    lowered = (filename or "").strip().lower()
    return next((k for k in attachment_kinds() if lowered.endswith(k.suffixes)), None)


# --- Choosing an offered option ------------------------------------------------------------------

ORDINALS = [
    (0, r"\b(first|1st|one|number one|no\.? ?1|#1|option 1|top)\b|^1$|第一|第1|头一个|一号|1号"),
    (1, r"\b(second|2nd|two|number two|#2|option 2)\b|^2$|第二|第2|二号|2号"),
    (2, r"\b(third|3rd|three|number three|#3|option 3)\b|^3$|第三|第3|三号|3号"),
    (-1, r"\b(last|final)\b|最后"),
]


def option_choose(text: str, options: list[dict[str, Any]], *,
                  also: Callable[[str, list[list[str]]], int | None] | None = None) -> int | None:
    """Which offered option a reply picks: a click (the label), "the first one", the label in
    either language, or a close variant of it. None if unclear (a domain may then place it).
    `also` is a domain's last reading, given the text and each option's normalised labels,
    when none of these placed it."""
    if not options:
        return None
    said = text_normalize(text).strip().strip(".!。！?？\"'“”")
    labels = [[text_normalize(o.get(k) or "") for k in ("label", "label_en", "label_zh", "answer")] for o in options]
    for index, names in enumerate(labels):
        if said in [n for n in names if n]:
            return index
    for index, pattern in ORDINALS:
        if re.search(pattern, said) and len(said) <= 24:
            return index if index < len(options) else None
    # A variant: the option whose words it shares most, clearly ahead of the next one.
    scores = sorted(((max(fuzz.token_set_ratio(said, n) for n in names if n), i) for i, names in enumerate(labels)),
                    reverse=True)
    if scores[0][0] >= 80 and (len(scores) == 1 or scores[0][0] - scores[1][0] >= 8):
        return scores[0][1]
    return also(text, labels) if also is not None else None


def structured_frame(turn: TurnContext, what: str, outcome: Any) -> None:
    """A repaired structured answer (llm.structured.Structured) or a fallback to the rules is
    recorded where a developer looks."""
    if outcome.source == "rules":
        turn.frame("validation", f"{what}: fallback to rules",
                   f"The model's {what} could not be used ({outcome.fallback}); the builtin rules decided.",
                   outcome.as_payload(), status="error", level="warning")
    elif outcome.repaired:
        turn.frame("validation", f"{what}: repaired",
                   f"The model's first {what} did not match its schema ({outcome.errors[0]}); its repair did.",
                   outcome.as_payload(), level="warning")
