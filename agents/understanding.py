"""Understanding a message on a backend with structured output (issue 11, item 5): the
intent and the requirements as JSON-schema answers, validated, repaired once, else the
rules' reading, recorded (llm.structured). The conversation (agents.orchestrator) and the
evaluation (agents.evaluation) both read requests through here, so what is measured is what
runs, and everything downstream (dependencies_known, template_decide) takes one dict
whoever produced it."""
from __future__ import annotations

from typing import Any, Callable

from llm import backend_structured
from llm.structured import Structured, structured_call
from payroll.requirements import (
    MODEL_SCHEMA,
    requirements_extract,
    requirements_from_model,
    requirements_messages,
)

from .intent import SIGNALS, intent_classify

INTENT_SCHEMA = {"type": "object", "additionalProperties": False, "required": ["signal", "reason"],
                 "properties": {"signal": {"enum": list(SIGNALS)},
                                "reason": {"type": "string", "maxLength": 300}}}


def intent_structured(call: Callable[..., Any], messages: list[dict[str, Any]], text: str) -> Structured:
    """The signal as {"signal", "reason"}; the builtin rules (agents.intent) when the model fails twice."""
    def rules() -> dict[str, str]:
        found = intent_classify(text)
        return {"signal": found.signal, "reason": found.reason}
    messages = [{"role": "system", "content": messages[0]["content"].replace(
        "Answer with exactly one word:", 'Answer with a JSON object {"signal", "reason"}; signal is one of')},
        *messages[1:]]
    return structured_call(call, messages, purpose="intent", schema=INTENT_SCHEMA, rules=rules)


def requirements_understood(call: Callable[..., Any], text: str) -> tuple[dict[str, Any], Structured | None]:
    """The requirements of `text` in requirements_extract's shape, and how they were obtained
    (None: no structured backend, the rules read them as they always do)."""
    if not backend_structured():
        return requirements_extract(text), None
    outcome = structured_call(call, requirements_messages(text), purpose="requirements", schema=MODEL_SCHEMA,
                              rules=lambda: requirements_extract(text))
    requirements = requirements_from_model(outcome.data, text) if outcome.source == "model" else outcome.data
    return requirements, outcome
