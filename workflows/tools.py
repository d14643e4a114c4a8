"""The tool registry (DESIGN.md §5): every tool declares its contract.

A tool registers its name, a description for the model, JSON Schemas for its
input and output, the state keys it produces and consumes, whether it has side
effects, its compensation tool and whether it needs approval — and everything the
generic apps need to know about it, so that the engine, the approval gate, the
metrics and memory never name a tool: the approval card's preview, the
preconditions re-checked at decision time, the default approval rule, what a
rejection changes in the plan, the ledger's words per status, what experience it
leaves in memory, and how to count the records it created. Domain apps register
their tools when Django starts. The run pipeline (workflows/pipeline.py) is the
only caller of `Tool.fn`."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import jsonschema
from django.utils.translation import gettext

from config.words import Stored, words_english

_validators: dict[int, tuple[dict, Any]] = {}


def _validator(schema: dict[str, Any]):
    """A validator per schema, built (and the schema checked) once: `jsonschema.validate`
    checks the schema against its meta-schema on every call, the largest CPU cost
    of a no-op hop."""
    cached = _validators.get(id(schema))
    if cached is None or cached[0] is not schema:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        cached = _validators[id(schema)] = (schema, cls(schema))
    return cached[1]


class ToolError(Exception):
    """The tool ran and the business system refused or failed: the node fails."""


class ToolBlocked(ToolError):
    """The tool refused to act because acting would be wrong now (a compensation that
    finds its records changed by someone else): the node stops blocked, with the reason."""


class ToolTransient(ToolError):
    """A passing failure (a timeout, a lost connection): the engine tries again with backoff,
    up to a cap, each attempt counted. `TimeoutError` and `ConnectionError` count as this too."""


TRANSIENT_ERRORS = (ToolTransient, TimeoutError, ConnectionError)


class ToolBusy(ToolError):
    """The system of record is still working on this very request (its idempotency key is
    held by an earlier attempt whose worker died mid-call): try again shortly, never fail."""


class NeedsInput(Exception):
    """The tool cannot choose without the user: the node waits for input. The question is
    words (config.words, CONVENTIONS 12), rendered in each reader's language where it is shown
    or asked again; a plain string is shown as it is."""

    def __init__(self, question: Stored, options: list[dict[str, Any]] | None = None,
                 link: dict[str, Any] | None = None, keep: dict[str, Any] | None = None):
        super().__init__(words_english(question))
        self.question = question
        self.options = options or []
        self.link = link or {}  # {href, label (words)}: where the person can look before answering
        # Arguments the step runs with again once answered (what earlier answers gave, so that a
        # partial answer is not asked for a second time): merged into the node's arguments.
        self.keep = keep or {}

    @property
    def text(self) -> str:
        """The question in English: for API clients, search, the step's status reason."""
        return words_english(self.question)

    def stored(self) -> dict[str, Any]:
        """`Node.question`: the words, their English as `text` (the API's field), the options."""
        return {"text": self.text, "words": self.question, "options": self.options,
                **({"link": self.link} if self.link else {})}


def question_words(question: dict[str, Any] | None) -> Stored:
    """What a stored question (`Node.question`) says, to render for its reader: its words, or
    the text of a question stored before questions were words."""
    question = question or {}
    return question.get("words") or question.get("text") or ""


@dataclass(frozen=True)
class ToolContext:
    tenant_id: int
    run_id: int
    node_id: int
    node_key: str
    user_id: int
    call_id: int
    idempotency_key: str
    approval_id: int | None
    params: dict[str, Any]


@dataclass(frozen=True)
class Acceptance:
    criterion: str
    ok: bool
    # What the check found ("12 of 12 items"): words (config.words), rendered for each reader
    # on the run page; plain prose is shown as it is. The failure reason keeps its English.
    detail: Stored = ""


@dataclass(frozen=True)
class Preview:
    """What an approver reads before deciding: a business sentence, the exact change
    (a diff, when the tool can compute one) and the size of what it touches (the
    approval matrix compares `measures` with the limits of the tool's declared `Measure`s)."""

    summary: str
    diff: dict[str, Any] | None = None
    measures: dict[str, Any] = field(default_factory=dict)


MONEY = "money"  # a Measure's unit for an amount of money: shown and compared with its currency


@dataclass(frozen=True)
class Measure:
    """A size a tool's previews report (`Preview.measures[name]`) that the approval matrix
    may hold to a limit. The domain declares it in its own words, so the matrix (which
    never names a domain) shows and compares only what each tool measures."""

    name: str         # the key in Preview.measures
    label: str        # the domain's words for it, an English msgid marked with gettext_noop
    unit: str = ""    # MONEY, or what a count counts (a msgid marked with gettext_noop: "people")
    # MONEY only: the currency a limit is in. A value measured in another currency (the
    # preview's measures["currency"]) cannot be compared with it, so it counts as above the limit.
    currency: str = ""


@dataclass(frozen=True)
class Replacement:
    """What a domain decides after a failed step's undo has committed: the params of the
    plan that tries again (None: nothing else to try, the run stays rolled back) and why,
    in words the run page shows."""

    params_update: dict[str, Any] | None
    why: str


@dataclass(frozen=True)
class Experience:
    """What an approved, completed call teaches memory: a fact (L2) and the preference
    distilled from it (L3), both in words, keyed by a signature of the request."""

    signature: dict[str, Any]
    data: dict[str, Any]
    fact: str
    preference: str
    kind: str = "choice_approved"


@dataclass
class Tool:
    name: str
    description: str  # for the model
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    fn: Callable[[ToolContext, dict[str, Any]], dict[str, Any]]
    # Its short name for a person (the approval matrix): an English msgid marked with
    # gettext_noop, read in the reader's language (`tool_title`). Blank: the name, spaced.
    title: str = ""
    produces: list[str] = field(default_factory=list)
    consumes: list[str] = field(default_factory=list)
    # Consumed when a step of the run produced it (a blueprint without that step still runs):
    # injected and linked like `consumes`, and held to the same provenance check.
    consumes_optional: list[str] = field(default_factory=list)
    side_effects: bool = False
    compensation: str | None = None
    # Instead of a compensation, why there can be none (an effect that commits in one
    # transaction and ends its run; undoing it is another approved operation). Shown to
    # developers; the registry check accepts an approved effect with one or the other.
    irreversible: str = ""
    needs_approval: bool = False
    # (tenant_id, resolved arguments) -> does THIS call need approval? None: every call
    # does. A declared predicate on exact values (an over-limit verdict, a count above a
    # threshold), never the model's say-so: the engine asks it after provenance is checked.
    approval_when: Callable[[int, dict[str, Any]], bool] | None = None
    read_only: bool = True
    # Claim, call and completion in ONE transaction: only for tools with no side
    # effects and no model call. A crash rolls the whole step back to ready, and
    # the sweeper runs it again; a hop then costs one commit.
    inline: bool = False
    accept: Callable[[ToolContext, dict[str, Any], dict[str, Any]], list[Acceptance]] | None = None
    # business-safe, never an id: words (config.words) read in each reader's language, or prose
    summary: Callable[[dict[str, Any]], Stored] | None = None
    # --- for the approval gate (approvals never names a tool) ---
    # (tenant_id, resolved arguments, run params) -> what the approver reads
    preview: Callable[[int, dict[str, Any], dict[str, Any]], Preview] | None = None
    # (tenant_id, run_id, resolved arguments) -> why the approved change would now be wrong, or ""
    preconditions_check: Callable[[int, int, dict[str, Any]], str] | None = None
    # (tenant_id, argument name, value) -> (label, text) for the approval card
    argument_describe: Callable[[int, str, Any], tuple[str, str]] | None = None
    # (tenant_id, resolved arguments, the stored diff) -> the card's one-line summary in the
    # reader's language (the stored one is in the language of whoever asked); None: the stored one
    summary_describe: Callable[[int, dict[str, Any], dict[str, Any] | None], str] | None = None
    # The approval matrix's default row for this tool (roles, deadline, "limits" per measure).
    approval_rule: dict[str, Any] = field(default_factory=dict)
    # What its previews measure that the matrix may hold to a limit (`Measure`).
    measures: list[Measure] = field(default_factory=list)
    # (run params, rejected arguments) -> params for the replan a "reject and replan" starts
    rejection_replan: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] | None = None
    # (tenant_id, run_id, rejected arguments, decider's user id, why) -> what the domain's own
    # records do when this step's approval is rejected and the run ends (a record waiting for
    # the decision goes back to a state that says so), in the decision's transaction
    on_reject: Callable[[int, int, dict[str, Any], int, str], None] | None = None
    # (run params, resolved arguments, output or None, why it failed) -> params for a local
    # replan of the failed step and its not-yet-run descendants, or None: the step stays
    # failed. Called when the step fails for good (a permanent error, a criterion not met).
    failure_replan: Callable[[dict[str, Any], dict[str, Any], dict[str, Any] | None, str],
                             dict[str, Any] | None] | None = None
    # (tenant_id, run_id, run params, output or None, criteria not met) -> what to try after
    # the undo of this step's run has committed, or None. Asked when the run would end
    # rolled back; the blueprint's `replan_after_undo` names the steps it replaces.
    undo_replan: Callable[[int, int, dict[str, Any], dict[str, Any] | None, list[str]],
                          Replacement | None] | None = None
    # --- for memory and the ledger ---
    milestones: dict[str, str] = field(default_factory=dict)  # node status reached -> words
    # (tenant_id, run_id, approved arguments, approver's name) -> what to remember, or None
    experience: Callable[[int, int, dict[str, Any], str], Experience | None] | None = None
    # --- for the metrics ---
    # (tenant_id, idempotency keys) -> how many records this tool created under each key
    effects_count: Callable[[int, list[str]], dict[str, int]] | None = None
    # --- for the engine ---
    # (tenant_id, run_id) -> give back what the run holds (reserved names...), called in
    # the transaction that ends the run for good
    release: Callable[[int, int], None] | None = None

    def plain_for(self, node) -> bool:
        """Side-effect-free with nothing to resolve or accept for this node (one with its
        `acceptance` criteria): the engine may run it before it claims the node, and record
        the call in the statement that completes it."""
        return bool(self.inline and not self.consumes and not self.consumes_optional and not self.produces
                    and not node.acceptance and self.accept is None)

    def approval_required(self, tenant_id: int, arguments: dict[str, Any]) -> bool:
        if not self.needs_approval:
            return False
        return self.approval_when is None or bool(self.approval_when(tenant_id, arguments))

    def input_validate(self, arguments: dict[str, Any]) -> None:
        try:
            _validator(self.input_schema).validate(arguments)
        except jsonschema.ValidationError as err:
            raise ToolError(f"{self.name}: invalid arguments: {err.message}") from err

    def output_validate(self, output: dict[str, Any]) -> None:
        try:
            _validator(self.output_schema).validate(output)
        except jsonschema.ValidationError as err:
            raise ToolError(f"{self.name}: the result broke its contract: {err.message}") from err

    def as_model_tool(self) -> dict[str, Any]:
        """The OpenAI tool-calling form. Consumed keys are left out: the model never supplies them."""
        props = {k: v for k, v in self.input_schema.get("properties", {}).items()
                 if k not in self.consumes and k not in self.consumes_optional}
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": {"type": "object", "properties": props}}}


TOOLS: dict[str, Tool] = {}


def tool_register(tool: Tool) -> Tool:
    if tool.name in TOOLS:
        raise ValueError(f"tool {tool.name} registered twice")
    TOOLS[tool.name] = tool
    return tool


def tool_get(name: str) -> Tool:
    try:
        return TOOLS[name]
    except KeyError:
        raise ToolError(f"no tool named {name!r} is registered") from None


def tool_title(name: str) -> str:
    """A tool's short name in the active language: its declared `title` (translated), else its
    name with spaces ("send_reminder" → "Send reminder")."""
    tool = TOOLS.get(name)
    if tool is not None and tool.title:
        return gettext(tool.title)
    return (name or "").replace("_", " ").capitalize()


def compensation_tools() -> set[str]:
    return {t.compensation for t in TOOLS.values() if t.compensation}


def is_compensation(tool_name: str) -> bool:
    return tool_name in compensation_tools()


def producers_of(key: str) -> set[str]:
    return {t.name for t in TOOLS.values() if key in t.produces}


def registry_problems() -> list[str]:
    """What the system check reports: a consumed key nobody produces, a missing compensation."""
    problems = []
    for tool in TOOLS.values():
        for key in [*tool.consumes, *tool.consumes_optional]:
            if not producers_of(key):
                problems.append(f"tool {tool.name} consumes {key!r}, which no registered tool produces")
        if tool.compensation and tool.compensation not in TOOLS:
            problems.append(f"tool {tool.name} names compensation {tool.compensation!r}, which is not registered")
        if tool.inline and (tool.side_effects or tool.needs_approval):
            problems.append(f"tool {tool.name} is inline but has side effects or needs approval")
        if (tool.side_effects and not tool.read_only and tool.needs_approval and not tool.compensation
                and not tool.irreversible):
            problems.append(f"tool {tool.name} has approved side effects but no compensation tool "
                            f"(nor a reason in `irreversible`)")
    return problems
