"""Structured output with one repair attempt and a recorded fallback to the rules.

    outcome = structured_call(call, messages, purpose="intent", schema=SCHEMA, rules=lambda: {...})

`call` is how the caller reaches the model (`llm.model_call`, or a wrapper that counts a
budget); it is called with `response_format` = OpenAI's json_schema form, named after the
purpose. The answer is parsed and validated against `schema` (jsonschema). An invalid
answer is sent back once, with the validation error, for a repair; a second invalid answer,
or a model error, falls back to `rules()` and the outcome says so (`source == "rules"`,
`fallback` = why): the caller records that as a frame. Either way the caller gets one
structured result of the same shape, so ONE decision function downstream consumes it and
the model and the rules can never take different paths for the same data.

Generic: it knows nothing of what the schema describes.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

import jsonschema

from .base import ModelError, ModelResult

REPAIR_ATTEMPTS = 1


@dataclass
class Structured:
    data: dict[str, Any]
    source: str                       # "model" or "rules"
    repaired: bool = False            # the model's first answer was invalid, the repair was not
    fallback: str = ""                # why the rules were used ("" when the model's answer stands)
    errors: list[str] = field(default_factory=list)
    results: list[ModelResult] = field(default_factory=list)

    def as_payload(self) -> dict[str, Any]:
        return {"source": self.source, "repaired": self.repaired, "fallback": self.fallback,
                "errors": self.errors, "data": self.data}


def response_format_for(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's structured-output request: a strict JSON schema with a name."""
    safe = "".join(c if c.isalnum() or c in "_-" else "_" for c in name)[:64] or "answer"
    return {"type": "json_schema", "json_schema": {"name": safe, "schema": schema, "strict": True}}


def structured_parse(text: str, schema: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """(data, "") when `text` is one JSON object valid against `schema`, else (None, why)."""
    candidate = (text or "").strip()
    if candidate.startswith("```"):  # a fenced block is still the answer
        candidate = candidate.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(candidate)
    except ValueError as exc:
        return None, f"not JSON ({exc.msg} at position {exc.pos})"
    if not isinstance(data, dict):
        return None, "not a JSON object"
    try:
        jsonschema.validate(data, schema)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(top level)"
        return None, f"{where}: {exc.message}"
    return data, ""


def structured_call(call: Callable[..., ModelResult], messages: list[dict[str, Any]], *, purpose: str,
                    schema: dict[str, Any], rules: Callable[[], dict[str, Any]],
                    max_tokens: int = 512) -> Structured:
    """The model's answer validated against `schema`, repaired once, else the rules'."""
    response_format = response_format_for(purpose, schema)
    outcome = Structured(data={}, source="model")
    attempt_messages = list(messages)
    for attempt in range(1 + REPAIR_ATTEMPTS):
        try:
            result = call(attempt_messages, purpose=purpose, response_format=response_format,
                          max_tokens=max_tokens)
        except ModelError as exc:
            outcome.errors.append(f"{type(exc).__name__}: {exc}")
            break
        outcome.results.append(result)
        data, why = structured_parse(result.text, schema)
        if data is not None:
            outcome.data, outcome.repaired = data, attempt > 0
            return outcome
        outcome.errors.append(why)
        attempt_messages = [*messages, {"role": "assistant", "content": result.text or ""},
                            {"role": "user", "content": (
                                f"That answer does not match the required JSON schema: {why}. Answer again "
                                "with only one JSON object that matches the schema.")}]
    outcome.source, outcome.data = "rules", rules()
    attempts = len(outcome.results)
    outcome.fallback = ("the model did not answer" if not attempts else
                        f"the model's answer was invalid {attempts} time{'s' if attempts != 1 else ''}"
                        f" ({outcome.errors[-1]})") + "; the rules were used"
    return outcome


def tool_calls_first(result: ModelResult, allowed: set[str]) -> dict[str, Any] | None:
    """The first tool call naming an allowed function: {id, name, arguments}, or None."""
    for call in result.tool_calls or []:
        if call.get("name") in allowed:
            arguments = call.get("arguments")
            return {"id": call.get("id") or "", "name": call["name"],
                    "arguments": arguments if isinstance(arguments, dict) else {}}
    return None
