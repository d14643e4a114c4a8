"""llm.structured: validation against the schema, one repair, then the caller's rules."""
from llm import ModelError, ModelResult, ModelTimeout
from llm.structured import response_format_for, structured_call, structured_parse, tool_calls_first

SCHEMA = {"type": "object", "additionalProperties": False, "required": ["colour"],
          "properties": {"colour": {"enum": ["red", "blue"]}}}


def scripted(*answers):
    calls = []

    def call(messages, **options):
        calls.append({"messages": messages, **options})
        answer = answers[min(len(calls) - 1, len(answers) - 1)]
        if isinstance(answer, Exception):
            raise answer
        return ModelResult(text=answer, provider="test", model="m")
    return call, calls


def test_a_valid_answer_stands_and_asks_for_the_strict_schema():
    call, calls = scripted('{"colour": "red"}')
    outcome = structured_call(call, [{"role": "user", "content": "?"}], purpose="paint", schema=SCHEMA,
                              rules=lambda: {"colour": "blue"})
    assert (outcome.source, outcome.data, outcome.repaired) == ("model", {"colour": "red"}, False)
    assert calls[0]["response_format"] == response_format_for("paint", SCHEMA)
    assert calls[0]["response_format"]["json_schema"]["strict"] is True


def test_an_invalid_answer_is_repaired_once_with_the_reason():
    call, calls = scripted('{"colour": "green"}', '```json\n{"colour": "blue"}\n```')
    outcome = structured_call(call, [{"role": "user", "content": "?"}], purpose="paint", schema=SCHEMA,
                              rules=lambda: {"colour": "red"})
    assert (outcome.source, outcome.data, outcome.repaired) == ("model", {"colour": "blue"}, True)
    assert "'green' is not one of" in calls[1]["messages"][-1]["content"]
    assert calls[1]["messages"][-2] == {"role": "assistant", "content": '{"colour": "green"}'}


def test_a_second_invalid_answer_falls_back_to_the_rules_and_says_why():
    call, calls = scripted("not json", '{"colour": "red", "extra": 1}')
    outcome = structured_call(call, [], purpose="paint", schema=SCHEMA, rules=lambda: {"colour": "blue"})
    assert (outcome.source, outcome.data) == ("rules", {"colour": "blue"})
    assert len(calls) == 2 and "invalid 2 times" in outcome.fallback and "Additional properties" in outcome.fallback
    assert outcome.as_payload()["errors"][0].startswith("not JSON")


def test_a_model_that_does_not_answer_falls_back_at_once():
    call, calls = scripted(ModelTimeout("slow"))
    outcome = structured_call(call, [], purpose="paint", schema=SCHEMA, rules=lambda: {"colour": "red"})
    assert outcome.source == "rules" and outcome.fallback.startswith("the model did not answer") and len(calls) == 1


def test_parse_refuses_arrays_and_reports_where():
    assert structured_parse("[1]", SCHEMA) == (None, "not a JSON object")
    data, why = structured_parse('{"colour": 3}', SCHEMA)
    assert data is None and why.startswith("colour:")


def test_the_first_allowed_tool_call_wins():
    result = ModelResult(text="", provider="t", model="m", tool_calls=[
        {"id": "a", "name": "drop_tables", "arguments": {}},
        {"id": "b", "name": "list_groups", "arguments": {"x": 1}}])
    assert tool_calls_first(result, {"list_groups"}) == {"id": "b", "name": "list_groups", "arguments": {"x": 1}}
    assert tool_calls_first(result, {"nothing"}) is None
    assert isinstance(ModelTimeout("x"), ModelError)


def test_the_openai_backend_sends_the_schema_and_tools_and_streams_deltas(monkeypatch):
    from llm import model_call
    from tests.fake_openai import FakeOpenAI

    fake = FakeOpenAI.start()
    try:
        monkeypatch.setenv("KEEL_LLM", "openai")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        fake.script("paint", ['{"colour": "red"}'])
        fake.script("tools", [{"content": "looking", "tool_calls": [{"name": "list_groups", "arguments": {"a": 1}}]}])
        outcome = structured_call(model_call, [{"role": "user", "content": "?"}], purpose="paint", schema=SCHEMA,
                                  rules=lambda: {"colour": "blue"})
        assert outcome.source == "model" and fake.seen("paint")[0]["body"]["response_format"]["json_schema"][
            "schema"] == SCHEMA
        tool = {"type": "function", "function": {"name": "list_groups", "parameters": {"type": "object"}}}
        pieces: list[str] = []
        result = model_call([{"role": "user", "content": "?"}], purpose="react", tools=[tool], stream=True,
                            on_delta=pieces.append)
        body = fake.seen("tools")[0]["body"]
        assert body["tools"] == [tool] and body["tool_choice"] == "auto" and body["stream"] is True
        assert result.tool_calls[0]["name"] == "list_groups" and result.tool_calls[0]["arguments"] == {"a": 1}
        assert pieces == ["look", "ing"] and result.text == "looking"
    finally:
        fake.stop()
