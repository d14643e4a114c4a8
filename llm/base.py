"""What every model backend returns, the errors it may raise, and the token estimate
used where a backend cannot count tokens itself (builtin, scripted)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any


class ModelError(Exception):
    """The model call failed: bad configuration, an HTTP error, an unreadable answer."""


class ModelTimeout(ModelError):
    """The model did not answer in time (an exhausted script counts as this too)."""


@dataclass
class ModelResult:
    """One model call, as a developer needs to see it later.

    Column names follow OpenTelemetry gen_ai.*: provider, model, input/output tokens.
    `prompt` is the list of messages as sent; `request` the whole request body as sent
    (empty for builtin); `output_raw` the answer as received (the HTTP body, or the
    concatenated SSE data lines when streamed). `error` is set only on the result handed
    to `on_model_call` hooks for a failed call; the caller sees the exception instead.
    """

    text: str
    provider: str
    model: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: int = 0
    first_token_ms: int | None = None
    cost: Decimal = Decimal("0")
    purpose: str = ""
    prompt: list[dict[str, Any]] = field(default_factory=list)
    request: dict[str, Any] = field(default_factory=dict)
    output_raw: str = ""
    finish_reason: str = ""
    tokens_estimated: bool = False
    error: str = ""

    def as_frame(self) -> dict[str, Any]:
        """A JSON-safe dict for a timeline frame (cost as a string: it is money)."""
        return {
            "provider": self.provider, "model": self.model, "purpose": self.purpose,
            "text": self.text, "tool_calls": self.tool_calls,
            "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
            "tokens_estimated": self.tokens_estimated,
            "latency_ms": self.latency_ms, "first_token_ms": self.first_token_ms,
            "cost": str(self.cost), "finish_reason": self.finish_reason, "error": self.error,
            "prompt": self.prompt, "request": self.request, "output_raw": self.output_raw,
        }


# CJK ideographs, kana and hangul: roughly one token each in common BPE vocabularies.
_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|[^\s{_CJK}\W]+|[^\s\w]", re.UNICODE)
MESSAGE_OVERHEAD_TOKENS = 3  # role and separators, as OpenAI's cookbook counts them


def tokens_estimate(text: str) -> int:
    """An honest, documented estimate, not a tokenizer: one token per CJK character,
    per run of letters/digits and per punctuation mark. English text comes out a little
    under a BPE count (long words split into several tokens there); Chinese close to it."""
    return len(_TOKEN.findall(text or ""))


def message_text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):  # OpenAI content parts
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def messages_tokens_estimate(messages: list[dict[str, Any]]) -> int:
    return sum(tokens_estimate(message_text(m)) + MESSAGE_OVERHEAD_TOKENS for m in messages)


def last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return message_text(message)
    return ""
