"""A replay's own scripted backend: the recorded responses of one run, handed back in order,
one per call, to this replay only (see `llm.backend_scoped`). Unlike the process-wide
scripted backend (KEEL_LLM=scripted) it needs no restart, changes nothing for any tenant,
and keeps its position in the object, so two replays never share one."""
from __future__ import annotations

import threading
from typing import Any, Callable

from .base import ModelResult, ModelTimeout, messages_tokens_estimate, tokens_estimate


class ReplayBackend:
    name = "replay"

    def __init__(self, responses: list[Any]):
        self.responses = list(responses)
        self.position = 0
        self.purposes: list[str] = []
        self._lock = threading.Lock()

    def complete(self, messages: list[dict], *, purpose: str, tools: list[dict] | None,
                 choices: list[str] | None, max_tokens: int, stream: bool,
                 on_delta: Callable[[str], None] | None, response_format: dict | None = None) -> ModelResult:
        with self._lock:
            index = self.position
            self.position += 1
            self.purposes.append(purpose)
        if index >= len(self.responses):
            # More calls than were recorded: the replay has diverged, and stops as a slow model would.
            raise ModelTimeout(f"the replay's script is exhausted: {len(self.responses)} responses were recorded "
                               f"and call {index + 1} ({purpose}) asked for another")
        response = self.responses[index]
        if isinstance(response, dict):
            text, tool_calls = str(response.get("text") or ""), list(response.get("tool_calls") or [])
        else:
            text, tool_calls = str(response), []
        if on_delta and text:
            on_delta(text)
        return ModelResult(text=text, provider=self.name, model="replay", tool_calls=tool_calls,
                           input_tokens=messages_tokens_estimate(messages), output_tokens=tokens_estimate(text),
                           tokens_estimated=True, prompt=messages, output_raw=text, finish_reason="stop")
