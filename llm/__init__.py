"""One interface to the model, whichever backend serves it.

    from llm import model_call
    result = model_call([{"role": "user", "content": "hi"}], purpose="intent")

KEEL_LLM (read at every call) picks the backend: builtin (default), openai, scripted.
Every call, failed or not, is handed to the callables in `on_model_call` as
(purpose, messages, result) so that the timeline can record a model-call frame; a failed
call's result has `error` set and the caller then gets ModelTimeout or ModelError.
"""
from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Iterator, Protocol

from .base import (
    ModelError,
    ModelResult,
    ModelTimeout,
    message_text,
    messages_tokens_estimate,
    tokens_estimate,
)
from .builtin import BuiltinBackend
from .openai_compat import OpenAIBackend
from .scripted import ScriptedBackend, scripted_reset

__all__ = ["backend_structured", "ModelError", "ModelResult", "ModelTimeout", "Backend", "backend_get", "model_call",
           "on_model_call", "scripted_reset", "tokens_estimate", "messages_tokens_estimate", "message_text"]

logger = logging.getLogger(__name__)

ModelCallHook = Callable[[str, list[dict], ModelResult], None]
# The timeline appends its recorder here; each hook runs after every call, in order.
on_model_call: list[ModelCallHook] = []


class Backend(Protocol):
    name: str

    def complete(self, messages: list[dict], *, purpose: str, tools: list[dict] | None,
                 choices: list[str] | None, max_tokens: int, stream: bool,
                 on_delta: Callable[[str], None] | None,
                 response_format: dict | None = None) -> ModelResult: ...


_BACKENDS: dict[str, Callable[[], Backend]] = {
    "builtin": BuiltinBackend, "openai": OpenAIBackend, "scripted": ScriptedBackend,
}


# A backend for the current context only (a replay's own script): no other request, thread
# or tenant sees it, and nothing needs restarting.
_scoped_backend: ContextVar[Backend | None] = ContextVar("keel_scoped_backend", default=None)


@contextmanager
def backend_scoped(backend: Backend) -> Iterator[Backend]:
    """Use `backend` for every model call made in this context (this thread), then stop."""
    token = _scoped_backend.set(backend)
    try:
        yield backend
    finally:
        _scoped_backend.reset(token)


def backend_get() -> Backend:
    """The backend KEEL_LLM names right now (tests monkeypatch the environment), unless
    this context has its own (`backend_scoped`)."""
    scoped = _scoped_backend.get()
    if scoped is not None:
        return scoped
    name = os.environ.get("KEEL_LLM", "builtin").strip().lower() or "builtin"
    try:
        return _BACKENDS[name]()
    except KeyError:
        raise ModelError(f"KEEL_LLM={name!r} is not a backend; use builtin, openai or scripted.")


def backend_structured() -> bool:
    """Whether the configured backend honours JSON-schema output and tool calling (openai).
    The builtin backend is the rules themselves; a scripted one replays what was recorded."""
    try:
        return bool(getattr(backend_get(), "structured", False))
    except ModelError:
        return False


def _notify(purpose: str, messages: list[dict], result: ModelResult) -> None:
    for hook in list(on_model_call):
        try:
            hook(purpose, messages, result)
        except Exception:  # a broken recorder must not turn a good answer into a failure
            logger.exception("on_model_call hook %r failed", hook)


def model_call(messages: list[dict], *, purpose: str, tools: list[dict] | None = None,
               choices: list[str] | None = None, max_tokens: int = 512, stream: bool | None = None,
               on_delta: Callable[[str], None] | None = None,
               response_format: dict | None = None) -> ModelResult:
    """Call the configured model once. `choices` lists the only acceptable answers for a
    bounded decision (the caller still checks the answer: a model may say anything);
    `stream` (default: env KEEL_LLM_STREAM) streams, calling `on_delta` with each piece;
    `response_format` asks a backend that supports it (`structured`) for structured output
    (OpenAI's {"type": "json_schema", ...}); the others ignore it (see llm.structured).
    Raises ModelTimeout or ModelError."""
    if stream is None:
        stream = os.environ.get("KEEL_LLM_STREAM", "").strip().lower() in {"1", "true", "yes", "on"}
    backend = backend_get()
    try:
        result = backend.complete(messages, purpose=purpose, tools=tools, choices=choices,
                                  max_tokens=max_tokens, stream=stream, on_delta=on_delta,
                                  response_format=response_format)
    except ModelError as exc:
        failed = ModelResult(text="", provider=backend.name, model=os.environ.get("KEEL_LLM_MODEL", ""),
                             purpose=purpose, prompt=messages, input_tokens=messages_tokens_estimate(messages),
                             tokens_estimated=True, error=f"{type(exc).__name__}: {exc}")
        _notify(purpose, messages, failed)
        raise
    result.purpose = purpose
    _notify(purpose, messages, result)
    return result
