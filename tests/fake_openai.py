"""A loopback OpenAI-protocol server for tests: POST /v1/chat/completions, scripted per test.

    server = FakeOpenAI.start()
    server.script("intent", ['{"signal": "resolve", "reason": "asks to set up payroll"}'])
    server.script("tools", [{"tool_calls": [{"name": "list_groups", "arguments": {}}]}])
    ...
    server.stop()

Which list answers a request is read from the request as a real server would see it:
- `response_format.json_schema.name` (structured output: "intent", "requirements", ...);
- "tool_result" when the last message is a tool's result (the answer after a tool call);
- "tools" when the request offers tools;
- "text" otherwise.
Each list answers in order and repeats its last answer. An answer is a string (content) or
{"content": ..., "tool_calls": [{"name", "arguments"}]}. With "stream": true the content
goes out as SSE chunks of `chunk` characters, `delay` seconds apart, and tool calls as
fragments keyed by index, then usage and [DONE], as OpenAI streams them.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeOpenAI:
    def __init__(self) -> None:
        self.scripts: dict[str, list[Any]] = {}
        self.positions: dict[str, int] = {}
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.chunk = 4
        self.delay = 0.0
        self.httpd: ThreadingHTTPServer | None = None

    @classmethod
    def start(cls) -> FakeOpenAI:
        server = cls()
        handler = type("Handler", (_Handler,), {"fake": server})
        server.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.httpd.serve_forever, daemon=True).start()
        return server

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def stop(self) -> None:
        if self.httpd:
            self.httpd.shutdown()
            self.httpd.server_close()

    def script(self, key: str, answers: list[Any]) -> None:
        with self.lock:
            self.scripts[key] = list(answers)
            self.positions[key] = 0

    def reset(self) -> None:
        with self.lock:
            self.scripts.clear()
            self.positions.clear()
            self.requests.clear()

    def seen(self, key: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["key"] == key]

    def answer_for(self, body: dict[str, Any]) -> tuple[str, Any]:
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        messages = body.get("messages") or []
        if schema:
            key = schema
        elif messages and messages[-1].get("role") == "tool":
            key = "tool_result"
        elif body.get("tools"):
            key = "tools"
        else:
            key = "text"
        with self.lock:
            self.requests.append({"key": key, "body": body})
            answers = self.scripts.get(key)
            if not answers:
                return key, "Understood."
            index = self.positions.get(key, 0)
            self.positions[key] = index + 1
            return key, answers[min(index, len(answers) - 1)]


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAI
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, {"error": {"message": "not found"}})
            return
        _, answer = self.fake.answer_for(body)
        if isinstance(answer, str):
            answer = {"content": answer}
        content = answer.get("content")
        calls = [{"id": f"call_{i}", "type": "function",
                  "function": {"name": c["name"], "arguments": c["arguments"] if isinstance(c["arguments"], str)
                               else json.dumps(c["arguments"])}}
                 for i, c in enumerate(answer.get("tool_calls") or [])]
        finish = "tool_calls" if calls else "stop"
        model = body.get("model") or "fake-model"
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": content}
            if calls:
                message["tool_calls"] = calls
            self._send(200, {"id": "chatcmpl-fake", "object": "chat.completion", "model": model,
                             "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                             "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

        def send(chunk: dict[str, Any]) -> None:
            chunk.setdefault("model", model)
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()

        send({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})
        text = content or ""
        for start in range(0, len(text), self.fake.chunk):
            if self.fake.delay:
                time.sleep(self.fake.delay)
            send({"choices": [{"index": 0, "delta": {"content": text[start:start + self.fake.chunk]}}]})
        for index, call in enumerate(calls):
            send({"choices": [{"index": 0, "delta": {"tool_calls": [{
                "index": index, "id": call["id"], "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""}}]}}]})
            arguments = call["function"]["arguments"]
            for start in range(0, len(arguments), 7):
                send({"choices": [{"index": 0, "delta": {"tool_calls": [{
                    "index": index, "function": {"arguments": arguments[start:start + 7]}}]}}]})
        send({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        send({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _send(self, status: int, data: dict[str, Any]) -> None:
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)
