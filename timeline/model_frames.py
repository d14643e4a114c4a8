"""Model calls as timeline frames: the business summary says what was asked
for; the prompt and output are payload, for developers only.

Two ways in: the engine records a tool's call (`model_frame_record`, with the node's
activity), and the conversation front wraps a turn in `model_frames_into(activity)`,
so that every `model_call` made inside — the intent, a reply, a ReAct step, the
policy workflow's one decision — lands on that turn's activity through the
`llm.on_model_call` hook."""
from __future__ import annotations

import contextvars
from contextlib import contextmanager
from datetime import timedelta
from typing import Any, Iterator

from django.utils import timezone
from django.utils.translation import gettext_noop

from config.words import words
from llm import on_model_call

from .services import frame_record

# What a business user reads for each kind of model call.
PURPOSE_WORDS = {
    "intent": gettext_noop("understand what the message asks for"),
    "requirements": gettext_noop("read the requirements from the request"),
    "decide": gettext_noop("choose among the listed options"),
    "react": gettext_noop("decide the next exploration step"),
    "clarify": gettext_noop("phrase a clarifying question"),
    "reply": gettext_noop("write the reply"),
    "chat": gettext_noop("write the reply"),
}

_activity: contextvars.ContextVar[int | None] = contextvars.ContextVar("keel_model_frames_activity", default=None)


def _frame_for(activity_id: int, purpose: str, result) -> None:
    ended = timezone.now()
    started = ended - timedelta(milliseconds=result.latency_ms or 0)
    first = started + timedelta(milliseconds=result.first_token_ms) if result.first_token_ms else None
    frame_record(activity_id=activity_id, kind="model_call", name=f"model: {purpose}", started_at=started,
                 ended_at=ended, first_token_at=first, status="error" if result.error else "ok",
                 level="error" if result.error else "info",
                 summary=words(gettext_noop("Asked the model to %(what)s. It did not answer.") if result.error
                               else gettext_noop("Asked the model to %(what)s."),
                               what=words(PURPOSE_WORDS[purpose]) if purpose in PURPOSE_WORDS
                               else purpose.replace("_", " ")), operation="chat",
                 provider=result.provider, model=result.model, input_tokens=result.input_tokens,
                 output_tokens=result.output_tokens, cost=result.cost, payload=result.as_frame())


def model_frame_record(activity_id: int, purpose: str, result) -> None:
    """Record one model call as a frame of `activity_id` (a tool's call, via the engine)."""
    _frame_for(activity_id, purpose, result)


def _hook(purpose: str, messages: list[dict[str, Any]], result) -> None:
    activity_id = _activity.get()
    if activity_id is not None:
        _frame_for(activity_id, purpose, result)


@contextmanager
def model_frames_into(activity_id: int) -> Iterator[None]:
    """Record every model call made inside the block as a frame of `activity_id`."""
    token = _activity.set(activity_id)
    try:
        yield
    finally:
        _activity.reset(token)


def model_frames_hook_install() -> None:
    """Called by TimelineConfig.ready(): every model call made inside `model_frames_into` is recorded."""
    if _hook not in on_model_call:
        on_model_call.append(_hook)
