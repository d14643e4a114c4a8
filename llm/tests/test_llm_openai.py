"""The openai backend against a small OpenAI-protocol server on loopback."""
import json
import threading
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from llm import ModelError, ModelTimeout, model_call

TOOL = {"type": "function", "function": {"name": "template_match", "description": "Find a template",
                                         "parameters": {"type": "object", "properties": {"region": {"type": "string"}}}}}


class FakeOpenAI(BaseHTTPRequestHandler):
    requests: list = []
    mode = "ok"

    def log_message(self, *args):  # keep test output quiet
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeOpenAI.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        if FakeOpenAI.mode == "error":
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b'{"error": "boom"}')
            return
        if FakeOpenAI.mode == "slow":
            threading.Event().wait(1.0)
        if self.path != "/v1/chat/completions":
            self.send_response(404)
            self.end_headers()
            return
        wants_tool = bool(body.get("tools"))
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            chunks = [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}]
            if wants_tool:
                chunks += [
                    {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_7", "type": "function",
                                                                         "function": {"name": "template_match", "arguments": ""}}]}}]},
                    {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"regi"}}]}}]},
                    {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "on\": \"CN-SH\"}"}}]},
                                  "finish_reason": "tool_calls"}]},
                ]
            else:
                chunks += [{"choices": [{"index": 0, "delta": {"content": piece}}]} for piece in ("re", "sol", "ve")]
                chunks += [{"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]
            chunks += [{"choices": [], "model": "gpt-4o-mini-2024-07-18",
                        "usage": {"prompt_tokens": 21, "completion_tokens": 3, "total_tokens": 24}}]
            for chunk in chunks:
                chunk.setdefault("model", "gpt-4o-mini-2024-07-18")
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            return
        message = {"role": "assistant", "content": "resolve"}
        if wants_tool:
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_9", "type": "function",
                 "function": {"name": "template_match", "arguments": "{\"region\": \"CN-SH\"}"}}]}
        answer = {"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini-2024-07-18",
                  "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if wants_tool else "stop"}],
                  "usage": {"prompt_tokens": 1000, "completion_tokens": 2000, "total_tokens": 3000}}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def server(monkeypatch):
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeOpenAI)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    FakeOpenAI.requests, FakeOpenAI.mode = [], "ok"
    monkeypatch.setenv("KEEL_LLM", "openai")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{httpd.server_address[1]}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("KEEL_LLM_MODEL", "gpt-4o-mini")
    yield FakeOpenAI
    httpd.shutdown()
    httpd.server_close()


MESSAGES = [{"role": "system", "content": "Classify."}, {"role": "user", "content": "set up Shanghai sales"}]


def test_it_calls_chat_completions_and_reads_text_usage_and_cost(server):
    result = model_call(MESSAGES, purpose="intent", max_tokens=8)
    assert result.text == "resolve" and result.tool_calls == []
    assert (result.input_tokens, result.output_tokens, result.tokens_estimated) == (1000, 2000, False)
    assert result.provider == "openai" and result.model == "gpt-4o-mini-2024-07-18"
    assert result.cost == Decimal("0.00135000")  # 1000 * 0.15/M + 2000 * 0.60/M
    sent = server.requests[-1]
    assert sent["auth"] == "Bearer sk-test" and sent["body"]["messages"] == MESSAGES
    assert sent["body"]["max_tokens"] == 8 and "stream" not in sent["body"]
    assert result.request == sent["body"] and json.loads(result.output_raw)["id"] == "chatcmpl-1"


def test_it_reads_a_tool_call(server):
    result = model_call(MESSAGES, purpose="react", tools=[TOOL])
    assert result.tool_calls == [{"id": "call_9", "name": "template_match", "arguments": {"region": "CN-SH"},
                                  "arguments_json": "{\"region\": \"CN-SH\"}"}]
    assert result.finish_reason == "tool_calls" and server.requests[-1]["body"]["tools"] == [TOOL]


def test_it_streams_text_chunk_by_chunk(server):
    pieces: list[str] = []
    result = model_call(MESSAGES, purpose="intent", stream=True, on_delta=pieces.append)
    assert pieces == ["re", "sol", "ve"] and result.text == "resolve"
    assert (result.input_tokens, result.output_tokens) == (21, 3)
    assert result.first_token_ms is not None and result.first_token_ms <= result.latency_ms
    assert server.requests[-1]["body"]["stream"] is True
    assert result.output_raw.endswith("[DONE]")


def test_it_streams_a_tool_call_assembled_from_fragments(server):
    result = model_call(MESSAGES, purpose="react", tools=[TOOL], stream=True)
    assert result.tool_calls == [{"id": "call_7", "name": "template_match", "arguments": {"region": "CN-SH"},
                                  "arguments_json": "{\"region\": \"CN-SH\"}"}]
    assert result.text == "" and result.finish_reason == "tool_calls"


def test_it_reports_http_errors_and_timeouts(server, monkeypatch):
    server.mode = "error"
    with pytest.raises(ModelError, match="HTTP 500"):
        model_call(MESSAGES, purpose="intent")
    server.mode = "slow"
    monkeypatch.setenv("KEEL_LLM_TIMEOUT", "0.2")
    with pytest.raises(ModelTimeout):
        model_call(MESSAGES, purpose="intent")


def test_it_reports_an_unreachable_endpoint(monkeypatch):
    monkeypatch.setenv("KEEL_LLM", "openai")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    with pytest.raises(ModelError, match="cannot reach"):
        model_call(MESSAGES, purpose="intent")
