"""The tool registry (seed 000 §5): every tool declares its contract.

A tool registers its name, a description for the model, JSON Schemas for its
input and output, the state keys it produces and consumes, whether it has side
effects, its compensation tool and whether it needs approval. The run pipeline
(agents/pipeline.py) is the only caller of `Tool.fn`."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import jsonschema


class ToolError(Exception):
    """The tool ran and the business system refused or failed: the node fails."""


class NeedsInput(Exception):
    """The tool cannot choose without the user: the node waits for input."""

    def __init__(self, question: str, options: list[dict[str, Any]] | None = None):
        super().__init__(question)
        self.question = question
        self.options = options or []


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
    detail: str = ""


@dataclass
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    fn: Callable[[ToolContext, dict[str, Any]], dict[str, Any]]
    produces: list[str] = field(default_factory=list)
    consumes: list[str] = field(default_factory=list)
    side_effects: bool = False
    compensation: str | None = None
    needs_approval: bool = False
    read_only: bool = True
    # Claim, call and completion in ONE transaction: only for tools with no side
    # effects and no model call. A crash rolls the whole step back to ready, and
    # the sweeper runs it again; a hop then costs one commit.
    inline: bool = False
    accept: Callable[[ToolContext, dict[str, Any], dict[str, Any]], list[Acceptance]] | None = None
    summary: Callable[[dict[str, Any]], str] | None = None  # business-safe, never an id

    def input_validate(self, arguments: dict[str, Any]) -> None:
        try:
            jsonschema.validate(arguments, self.input_schema)
        except jsonschema.ValidationError as err:
            raise ToolError(f"{self.name}: invalid arguments: {err.message}") from err

    def output_validate(self, output: dict[str, Any]) -> None:
        try:
            jsonschema.validate(output, self.output_schema)
        except jsonschema.ValidationError as err:
            raise ToolError(f"{self.name}: the result broke its contract: {err.message}") from err

    def as_model_tool(self) -> dict[str, Any]:
        """The OpenAI tool-calling form. Consumed keys are left out: the model never supplies them."""
        props = {k: v for k, v in self.input_schema.get("properties", {}).items() if k not in self.consumes}
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


def producers_of(key: str) -> set[str]:
    return {t.name for t in TOOLS.values() if key in t.produces}


def registry_problems() -> list[str]:
    """What the system check reports: a consumed key nobody produces, a missing compensation."""
    problems = []
    for tool in TOOLS.values():
        for key in tool.consumes:
            if not producers_of(key):
                problems.append(f"tool {tool.name} consumes {key!r}, which no registered tool produces")
        if tool.compensation and tool.compensation not in TOOLS:
            problems.append(f"tool {tool.name} names compensation {tool.compensation!r}, which is not registered")
        if tool.inline and (tool.side_effects or tool.needs_approval):
            problems.append(f"tool {tool.name} is inline but has side effects or needs approval")
        if tool.side_effects and not tool.read_only and tool.needs_approval and not tool.compensation:
            problems.append(f"tool {tool.name} has approved side effects but no compensation tool")
    return problems
