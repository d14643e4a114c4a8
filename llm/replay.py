"""A replay's own scripted backend: the recorded responses of one run, handed back in order,
one per call, to this replay only (see `llm.backend_scoped`). Unlike the process-wide
scripted backend (KEEL_LLM=scripted) it needs no restart, changes nothing for any tenant,
and keeps its position in the object, so two replays never share one."""
from __future__ import annotations

import threading
from typing import Any, Callable

from .base import ModelResult, ModelTimeout, messages_tokens_estimate, tokens_estimate
from .openai_compat import OpenAIBackend


class ReplayBackend:
    name = "replay"

    def __init__(self, responses: list[Any], purposes: list[str | None] | None = None,
                 providers: list[str] | None = None):
        self.responses = list(responses)
        # It stands in for the backend that answered: the same provider on each answer (code
        # that reads the rules' reasons for a builtin answer reads them again) and structured
        # output when that backend had it.
        self.providers = list(providers) if providers is not None else [self.name] * len(self.responses)
        self.structured = any(p == OpenAIBackend.name for p in self.providers)
        # The purpose each response was recorded for (intent, chat, decide…): a call takes the
        # first unused response of its own purpose, so a turn's calls and a step's calls that
        # interleaved differently on the workers still get their own answers. None: any call.
        self.recorded_purposes = list(purposes) if purposes is not None else [None] * len(self.responses)
        self._used = [False] * len(self.responses)
        self.position = 0  # calls made
        self.purposes: list[str] = []
        self._lock = threading.Lock()

    @property
    def answered(self) -> int:
        return sum(self._used)

    def complete(self, messages: list[dict], *, purpose: str, tools: list[dict] | None,
                 choices: list[str] | None, max_tokens: int, stream: bool,
                 on_delta: Callable[[str], None] | None, response_format: dict | None = None) -> ModelResult:
        with self._lock:
            self.position += 1
            self.purposes.append(purpose)
            index = next((i for i, used in enumerate(self._used)
                          if not used and self.recorded_purposes[i] in (None, purpose)), None)
            if index is not None:
                self._used[index] = True
        if index is None:
            # More calls than were recorded: the replay has diverged, and stops as a slow model would.
            raise ModelTimeout(f"the replay's script is exhausted: {len(self.responses)} responses were recorded "
                               f"and call {self.position} ({purpose}) asked for another")
        response = self.responses[index]
        if isinstance(response, dict):
            text, tool_calls = str(response.get("text") or ""), list(response.get("tool_calls") or [])
        else:
            text, tool_calls = str(response), []
        if on_delta and text:
            on_delta(text)
        return ModelResult(text=text, provider=self.providers[index] or self.name, model="replay",
                           tool_calls=tool_calls,
                           input_tokens=messages_tokens_estimate(messages), output_tokens=tokens_estimate(text),
                           tokens_estimated=True, prompt=messages, output_raw=text, finish_reason="stop")
