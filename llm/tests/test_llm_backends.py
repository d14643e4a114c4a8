"""The model interface: builtin, scripted, the recorder hook and the price table."""
import json
from decimal import Decimal

import pytest

from llm import (
    ModelError,
    ModelResult,
    ModelTimeout,
    backend_get,
    model_call,
    on_model_call,
    scripted_reset,
    tokens_estimate,
)
from llm.builtin import decide
from llm.prices import cost_for, price_known


def user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


@pytest.fixture
def recorded():
    seen: list = []
    hook = lambda purpose, messages, result: seen.append((purpose, messages, result))  # noqa: E731
    on_model_call.append(hook)
    yield seen
    on_model_call.remove(hook)


def test_it_uses_the_builtin_backend_by_default(monkeypatch):
    monkeypatch.delenv("KEEL_LLM", raising=False)
    assert backend_get().name == "builtin"
    monkeypatch.setenv("KEEL_LLM", "openai")
    assert backend_get().name == "openai"  # read at call time, not at import


def test_it_refuses_an_unknown_backend(monkeypatch):
    monkeypatch.setenv("KEEL_LLM", "magic")
    with pytest.raises(ModelError, match="not a backend"):
        model_call(user("hi"), purpose="intent")


def test_the_builtin_answers_by_purpose(monkeypatch, recorded):
    monkeypatch.setenv("KEEL_LLM", "builtin")
    intent = model_call(user("Set up a monthly payroll group for Shanghai sales with commission"), purpose="intent")
    assert intent.text == "resolve" and intent.cost == Decimal("0") and intent.provider == "builtin"
    requirements = json.loads(model_call(user("上海销售，月薪，有提成"), purpose="requirements").text)
    assert requirements["region"] == "CN-SH" and requirements["items_named"] == ["commission"]
    chosen = model_call(user("Evidence: [travel-v2 line 3] Beijing lodging: 750.\nCandidates: use_evidence, abstain"),
                        purpose="decide", choices=["use_evidence", "abstain"])
    assert chosen.text == "use_evidence"
    assert model_call(user("thanks!"), purpose="chat").text == "You're welcome!"
    assert [purpose for purpose, _, _ in recorded] == ["intent", "requirements", "decide", "chat"]
    purpose, messages, result = recorded[0]
    assert messages == user("Set up a monthly payroll group for Shanghai sales with commission")
    assert result.prompt == messages and result.output_raw == "resolve"
    assert result.input_tokens == tokens_estimate(messages[0]["content"]) + 3 and result.output_tokens == 1
    assert result.tokens_estimated


def test_the_builtin_decision_picks_the_best_matching_listed_candidate():
    assert decide(user("Nothing quoted here. Candidates: use_evidence, abstain"), ["use_evidence", "abstain"]) == "abstain"
    assert decide(user("证据：北京住宿：750元/间/晚。候选：use_evidence, abstain"), ["use_evidence", "abstain"]) == "use_evidence"
    assert decide(user("the payroll group for interns"), ["intern_group", "sales_group"]) == "intern_group"


def test_it_estimates_tokens_honestly_for_english_and_chinese():
    assert tokens_estimate("Set up a payroll group.") == 6  # five words and a full stop
    assert tokens_estimate("我们有哪些薪资组") == 8  # one per character
    assert tokens_estimate("") == 0


def test_the_scripted_backend_replays_in_order_then_times_out(monkeypatch, tmp_path, recorded):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"responses": ["resolve", {"text": "", "tool_calls": [
        {"id": "call_1", "name": "template_match", "arguments": {"region": "CN-SH"}}]}]}))
    monkeypatch.setenv("KEEL_LLM", "scripted")
    monkeypatch.setenv("KEEL_LLM_SCRIPT", str(path))
    assert model_call(user("anything"), purpose="intent").text == "resolve"
    second = model_call(user("anything"), purpose="react", tools=[{"type": "function"}])
    assert second.tool_calls[0]["name"] == "template_match" and second.cost == Decimal("0")
    with pytest.raises(ModelTimeout, match="exhausted"):
        model_call(user("anything"), purpose="intent")
    assert recorded[-1][2].error.startswith("ModelTimeout")
    scripted_reset(str(path))
    assert model_call(user("anything"), purpose="intent").text == "resolve"


def test_the_scripted_backend_needs_a_readable_script(monkeypatch, tmp_path):
    monkeypatch.setenv("KEEL_LLM", "scripted")
    monkeypatch.setenv("KEEL_LLM_SCRIPT", str(tmp_path / "missing.json"))
    with pytest.raises(ModelError, match="does not exist"):
        model_call(user("x"), purpose="intent")
    bad = tmp_path / "bad.json"
    bad.write_text('{"answers": []}')
    monkeypatch.setenv("KEEL_LLM_SCRIPT", str(bad))
    with pytest.raises(ModelError, match="responses"):
        model_call(user("x"), purpose="intent")


def test_a_failing_recorder_does_not_fail_the_call(monkeypatch):
    def broken(purpose, messages, result):
        raise RuntimeError("recorder down")

    on_model_call.append(broken)
    try:
        monkeypatch.setenv("KEEL_LLM", "builtin")
        assert model_call(user("hello"), purpose="intent").text == "chat"
    finally:
        on_model_call.remove(broken)


def test_it_prices_known_models_and_dated_names_and_says_when_it_cannot():
    assert cost_for("gpt-4o-mini", 1_000_000, 1_000_000) == Decimal("0.75000000")
    assert cost_for("gpt-4o-mini-2024-07-18", 1000, 0) == Decimal("0.00015000")
    assert not price_known("some-local-model") and cost_for("some-local-model", 10, 10) == Decimal("0")


def test_a_result_becomes_a_json_safe_frame():
    frame = ModelResult(text="hi", provider="builtin", model="m", cost=Decimal("0.1")).as_frame()
    assert json.loads(json.dumps(frame))["cost"] == "0.1"
