"""The scripted backend: replays `{"responses": [...]}` from the file named by
KEEL_LLM_SCRIPT, one response per call, in order. Tests and the replay of a recorded run
use it. A response is a string, or `{"text": ..., "tool_calls": [...]}` to replay tool
calls too. When the script runs out the call fails as a timeout would: a replay that
needs more calls than were recorded has diverged, and says so the same way a slow model
would stop the run.

The position is kept per process and per file; rewriting the file (a new mtime) starts
it again from the top, and `scripted_reset()` rewinds explicitly.
"""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from .base import (
    ModelError,
    ModelResult,
    ModelTimeout,
    messages_tokens_estimate,
    tokens_estimate,
)

_lock = threading.Lock()
_positions: dict[str, tuple[int, int]] = {}  # realpath -> (mtime_ns, next index)


def scripted_reset(path: str | None = None) -> None:
    """Rewind one script (or all of them) to its first response."""
    with _lock:
        if path is None:
            _positions.clear()
        else:
            _positions.pop(os.path.realpath(path), None)


def _script_next(path: str) -> tuple[Any, int]:
    real = os.path.realpath(path)
    try:
        stat = os.stat(real)
        data = json.loads(Path(real).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelError(f"KEEL_LLM_SCRIPT names {path}, which does not exist.")
    except (OSError, ValueError) as exc:
        raise ModelError(f"KEEL_LLM_SCRIPT {path} is not a readable JSON file: {exc}")
    responses = data.get("responses") if isinstance(data, dict) else None
    if not isinstance(responses, list):
        raise ModelError(f"KEEL_LLM_SCRIPT {path} has no \"responses\" list.")
    with _lock:
        mtime, index = _positions.get(real, (stat.st_mtime_ns, 0))
        if mtime != stat.st_mtime_ns:
            index = 0
        _positions[real] = (stat.st_mtime_ns, index + 1)
    if index >= len(responses):
        raise ModelTimeout(f"script exhausted: {path} has {len(responses)} responses and call {index + 1} asked for another")
    return responses[index], index


class ScriptedBackend:
    name = "scripted"

    def complete(self, messages: list[dict], *, purpose: str, tools: list[dict] | None,
                 choices: list[str] | None, max_tokens: int, stream: bool, on_delta, response_format: dict | None = None) -> ModelResult:
        path = os.environ.get("KEEL_LLM_SCRIPT", "")
        if not path:
            raise ModelError("KEEL_LLM=scripted needs KEEL_LLM_SCRIPT to name a JSON file.")
        started = time.monotonic()
        response, index = _script_next(path)
        if isinstance(response, str):
            text, tool_calls = response, []
        elif isinstance(response, dict):
            text = str(response.get("text") or "")
            tool_calls = list(response.get("tool_calls") or [])
        else:
            raise ModelError(f"script response {index + 1} is neither a string nor an object")
        if on_delta and text:
            on_delta(text)
        latency = int((time.monotonic() - started) * 1000)
        return ModelResult(
            text=text, tool_calls=tool_calls, provider=self.name, model=f"scripted:{Path(path).name}",
            input_tokens=messages_tokens_estimate(messages), output_tokens=tokens_estimate(text),
            tokens_estimated=True, latency_ms=latency, first_token_ms=latency,
            prompt=messages, output_raw=json.dumps(response, ensure_ascii=False),
            finish_reason="tool_calls" if tool_calls else "stop",
        )
