"""The openai backend: any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM,
Ollama, llama.cpp server...), over urllib so that it needs no extra dependency.

OPENAI_BASE_URL (default https://api.openai.com/v1), OPENAI_API_KEY (optional for local
servers), KEEL_LLM_MODEL (default gpt-4o-mini), KEEL_LLM_TIMEOUT seconds (default 60),
KEEL_LLM_STREAM=1 to stream by default. Structured output (`response_format`
json_schema) and tool calling (`tools`) are passed through as the protocol defines them;
a streamed answer calls `on_delta` with each content piece as it arrives.
"""
from __future__ import annotations

import json
import os
import socket
import time
import urllib.error
import urllib.request
from typing import Any, Callable

from .base import (
    ModelError,
    ModelResult,
    ModelTimeout,
    messages_tokens_estimate,
    tokens_estimate,
)
from .prices import cost_for


def _tool_call_normal(call: dict[str, Any]) -> dict[str, Any]:
    """{id, name, arguments (parsed, {} if unparsable), arguments_json (exactly as received)}."""
    function = call.get("function") or {}
    raw = function.get("arguments") or ""
    try:
        arguments = json.loads(raw) if raw else {}
    except ValueError:
        arguments = {}
    return {"id": call.get("id") or "", "name": function.get("name") or "", "arguments": arguments,
            "arguments_json": raw}


class OpenAIBackend:
    name = "openai"
    structured = True  # JSON-schema response_format and tool calling (llm.structured)

    def complete(self, messages: list[dict], *, purpose: str, tools: list[dict] | None,
                 choices: list[str] | None, max_tokens: int, stream: bool,
                 on_delta: Callable[[str], None] | None,
                 response_format: dict | None = None) -> ModelResult:
        base = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1").rstrip("/")
        model = os.environ.get("KEEL_LLM_MODEL", "gpt-4o-mini")
        timeout = float(os.environ.get("KEEL_LLM_TIMEOUT", "60"))
        body: dict[str, Any] = {"model": model, "messages": messages, "max_tokens": max_tokens}
        if tools:
            body["tools"] = tools
            body["tool_choice"] = "auto"
        if response_format:
            body["response_format"] = response_format
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream" if stream else "application/json"}
        key = os.environ.get("OPENAI_API_KEY", "")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(f"{base}/chat/completions", data=json.dumps(body).encode(),
                                         headers=headers, method="POST")
        started = time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                if stream:
                    parsed = self._read_stream(response, started, on_delta)
                else:
                    parsed = self._read_whole(response, started)
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:500].decode(errors="replace")
            raise ModelError(f"{base} answered HTTP {exc.code}: {detail}")
        except (TimeoutError, socket.timeout):
            raise ModelTimeout(f"{base} did not answer within {timeout:g} s")
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, (TimeoutError, socket.timeout)):
                raise ModelTimeout(f"{base} did not answer within {timeout:g} s")
            raise ModelError(f"cannot reach {base}: {exc.reason}")
        latency = int((time.monotonic() - started) * 1000)
        text, tool_calls, usage, answered_model, finish, raw, first_ms = parsed
        estimated = not usage
        input_tokens = int(usage.get("prompt_tokens") or 0) if usage else messages_tokens_estimate(messages)
        output_tokens = int(usage.get("completion_tokens") or 0) if usage else tokens_estimate(text)
        answered_model = answered_model or model
        return ModelResult(
            text=text, tool_calls=tool_calls, provider=self.name, model=answered_model,
            input_tokens=input_tokens, output_tokens=output_tokens, tokens_estimated=estimated,
            latency_ms=latency, first_token_ms=first_ms if first_ms is not None else latency,
            cost=cost_for(answered_model, input_tokens, output_tokens),
            prompt=messages, request=body, output_raw=raw, finish_reason=finish or "",
        )

    @staticmethod
    def _read_whole(response, started: float):
        raw = response.read().decode("utf-8", errors="replace")
        try:
            data = json.loads(raw)
            choice = (data.get("choices") or [{}])[0]
        except (ValueError, AttributeError, IndexError) as exc:
            raise ModelError(f"unreadable chat-completions answer: {exc}: {raw[:200]}")
        message = choice.get("message") or {}
        tool_calls = [_tool_call_normal(c) for c in message.get("tool_calls") or []]
        first_ms = int((time.monotonic() - started) * 1000)
        return (message.get("content") or "", tool_calls, data.get("usage") or {}, data.get("model") or "",
                choice.get("finish_reason") or "", raw, first_ms)

    @staticmethod
    def _read_stream(response, started: float, on_delta):
        parts: list[str] = []
        raw_lines: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        usage: dict[str, Any] = {}
        model = finish = ""
        first_ms: int | None = None
        for line_bytes in response:
            line = line_bytes.decode("utf-8", errors="replace").strip()
            if not line.startswith("data:"):
                continue  # blank separators, comments, "event:" lines
            payload = line[5:].strip()
            raw_lines.append(payload)
            if payload == "[DONE]":
                break
            try:
                chunk = json.loads(payload)
            except ValueError as exc:
                raise ModelError(f"unreadable stream chunk: {exc}: {payload[:200]}")
            model = chunk.get("model") or model
            usage = chunk.get("usage") or usage
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta") or {}
                finish = choice.get("finish_reason") or finish
                content = delta.get("content")
                if content or delta.get("tool_calls"):
                    if first_ms is None:
                        first_ms = int((time.monotonic() - started) * 1000)
                if content:
                    parts.append(content)
                    if on_delta:
                        on_delta(content)
                # Tool calls arrive in pieces keyed by index: id and name first, arguments in fragments.
                for piece in delta.get("tool_calls") or []:
                    slot = calls.setdefault(int(piece.get("index", 0)),
                                            {"id": "", "function": {"name": "", "arguments": ""}})
                    if piece.get("id"):
                        slot["id"] = piece["id"]
                    function = piece.get("function") or {}
                    if function.get("name"):
                        slot["function"]["name"] += function["name"]
                    if function.get("arguments"):
                        slot["function"]["arguments"] += function["arguments"]
        tool_calls = [_tool_call_normal(calls[i]) for i in sorted(calls)]
        return "".join(parts), tool_calls, usage, model, finish, "\n".join(raw_lines), first_ms
