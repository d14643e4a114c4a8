"""The builtin backend: a deterministic interpreter with honest rules, no network.

It answers by `purpose`. The apps that know what a purpose means register its
answerer here (`answerer_register`): the conversation front registers "intent",
"clarify" and the plain replies, the payroll domain registers "requirements". The
backend itself knows only the generic one:
- "decide" with `choices`: the listed candidate whose words best match the user
  messages once the candidate list itself is removed from them (English words, plus
  Chinese glosses); a candidate named "abstain" wins only when no other scores above
  zero, and ties go to the first listed;
A purpose nobody registered falls back to the answerer registered as "*", else
"Understood.". It never emits tool calls. Token counts are `tokens_estimate` figures; cost is 0.
"""
from __future__ import annotations

import re
import time
from typing import Callable

from .base import (
    ModelResult,
    last_user_text,
    message_text,
    messages_tokens_estimate,
    tokens_estimate,
)

MODEL = "keel-builtin-1"

# Chinese words a candidate's English words may appear as in a Chinese prompt.
_GLOSSES = {
    "evidence": ["证据", "依据", "引文", "条款"],
    "use": ["使用", "采用"],
    "abstain": ["弃权", "不回答"],
    "answer": ["回答", "答复"],
}


def is_chinese(text: str) -> bool:
    return bool(re.search(r"[\u4e00-\u9fff]", text))


def decide(messages: list[dict], choices: list[str]) -> str:
    text = " ".join(message_text(m) for m in messages if m.get("role") == "user").lower()
    for choice in sorted(choices, key=len, reverse=True):  # the list itself is no evidence
        text = text.replace(choice.lower(), " ")
    words = set(re.findall(r"[a-z0-9]+", text))

    def score(choice: str) -> int:
        total = 0
        for part in re.split(r"[_\s\-]+", choice.lower()):
            if not part:
                continue
            if part in words or any(g in text for g in _GLOSSES.get(part, [])):
                total += 1
        return total

    scored = [(score(c), -i, c) for i, c in enumerate(choices)]
    best = max(scored)
    if best[2].lower() == "abstain" or best[0] == 0:
        others = [s for s in scored if s[2].lower() != "abstain" and s[0] > 0]
        if others:
            return max(others)[2]
        abstain = [c for c in choices if c.lower() == "abstain"]
        return abstain[0] if abstain else choices[0]
    return best[2]


Answerer = Callable[[str, str], str]  # (purpose, last user text) -> answer text
_ANSWERERS: dict[str, Answerer] = {}


def answerer_register(purpose: str, answerer: Answerer) -> None:
    """Let the builtin backend answer `purpose` ("*": every purpose nobody else answers)."""
    _ANSWERERS[purpose] = answerer


def _answer(purpose: str, text: str) -> str:
    answerer = _ANSWERERS.get(purpose) or _ANSWERERS.get("*")
    return answerer(purpose, text) if answerer else "Understood."


class BuiltinBackend:
    name = "builtin"

    def complete(self, messages: list[dict], *, purpose: str, tools, choices, max_tokens: int,
                 stream: bool, on_delta, response_format: dict | None = None) -> ModelResult:
        started = time.monotonic()
        text = last_user_text(messages)
        if purpose == "decide" and choices:
            answer = decide(messages, choices)
        else:
            answer = _answer(purpose, text)
        if on_delta:
            on_delta(answer)
        latency = int((time.monotonic() - started) * 1000)
        return ModelResult(
            text=answer, provider=self.name, model=MODEL,
            input_tokens=messages_tokens_estimate(messages), output_tokens=tokens_estimate(answer),
            tokens_estimated=True, latency_ms=latency, first_token_ms=latency,
            prompt=messages, output_raw=answer, finish_reason="stop",
        )
