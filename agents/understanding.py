"""Understanding a message on a backend with structured output: the
intent as a JSON-schema answer, validated, repaired once, else the rules' reading, recorded
(llm.structured). The conversation (agents.orchestrator) and the evaluation
(agents.evaluation) both read a message's intent through here, so what is measured is what
runs. What a request asks of a domain is that domain's own understanding (e.g.
payroll.conversation.understanding.requirements_understood)."""
from __future__ import annotations

from typing import Any, Callable

from llm.structured import Structured, structured_call

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
