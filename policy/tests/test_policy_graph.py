"""The traces of the policy seed's KA-5 chapter, reproduced on the exact graph."""
import json
from datetime import date

import pytest
from django.core.management import call_command

from llm import on_model_call
from policy.models import PolicyAnswerCache
from policy.services import policy_answer
from policy.workflow import CAP_GUARD, GRAPH_PATH, graph_load, policy_graph_walk
from tenants.models import Tenant

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo", "builtin_llm")]
FULL_PATH = ["RETRIEVED", "VERIFIED", "DECIDED", "COMPOSED", "ANSWERED"]


@pytest.fixture
def model_calls():
    seen = []
    hook = lambda purpose, messages, result: seen.append((purpose, messages, result))  # noqa: E731
    on_model_call.append(hook)
    yield seen
    on_model_call.remove(hook)


def script(monkeypatch, tmp_path, *responses):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"responses": list(responses)}))
    monkeypatch.setenv("KEEL_LLM", "scripted")
    monkeypatch.setenv("KEEL_LLM_SCRIPT", str(path))


def ask(question="Beijing lodging", on=date(2026, 9, 14), lang="en", tenant="demo", **caps):
    return policy_graph_walk(tenant=Tenant.objects.get(slug=tenant), question=question, on_date=on,
                             topic="travel", lang=lang, **caps)


def test_it_answers_750_through_five_transitions_for_2026(model_calls):
    result = ask()
    assert result["state"] == "ANSWERED" and result["path"] == FULL_PATH and result["transitions"] == 5
    assert result["model_calls"] == 1 and result["reason"] == "answered"
    assert result["answer"]["amount"] == "750" and result["answer"]["unit"] == "yuan per room per night"
    # The complete span: line 1 gives the unit, line 2 the date and replacement, line 3 the amount.
    assert [(c["source"], c["line"]) for c in result["answer"]["citation"]] == [
        ("travel-v2", 1), ("travel-v2", 2), ("travel-v2", 3)]
    assert "2026-01-01" in result["answer"]["citation"][1]["text"]
    [(purpose, messages, call)] = model_calls
    assert purpose == "decide" and call.text == "use_evidence" and call.provider == "builtin"
    assert "use_evidence, abstain" in messages[-1]["content"]


def test_it_answers_750_in_chinese_with_the_chinese_lines():
    result = ask(question="北京住宿标准是多少？", lang="zh")
    assert result["state"] == "ANSWERED" and result["path"] == FULL_PATH
    assert result["answer"]["amount"] == "750" and result["answer"]["unit"] == "元/间/晚"
    assert result["answer"]["citation"][2]["text"] == "北京住宿：750元/间/晚。"


def test_it_answers_600_for_a_date_in_2025():
    result = ask(on=date(2025, 9, 14))
    assert result["state"] == "ANSWERED" and result["path"] == FULL_PATH
    assert result["answer"]["amount"] == "600"
    assert {c["source"] for c in result["answer"]["citation"]} == {"travel-v1"}


def test_it_abstains_on_an_empty_corpus_without_a_model_call(model_calls):
    result = ask(tenant="other")  # tenant other has no policy at all
    assert result["state"] == "ABSTAINED" and result["path"] == ["RETRIEVED", "ABSTAINED"]
    assert result["reason"] == "insufficient_evidence" and result["model_calls"] == 0
    assert result["answer"] == {"amount": None, "unit": None, "citation": []}
    assert model_calls == []


def test_it_abstains_without_a_model_call_when_no_version_is_in_force(model_calls):
    result = ask(on=date(2024, 6, 1))
    assert (result["state"], result["reason"], result["model_calls"]) == ("ABSTAINED", "insufficient_evidence", 0)
    assert ask(question="Shanghai lodging")["reason"] == "insufficient_evidence"
    assert model_calls == []


def test_it_abstains_when_the_model_chooses_abstain(monkeypatch, tmp_path):
    script(monkeypatch, tmp_path, "abstain")
    result = ask()
    assert result["state"] == "ABSTAINED" and result["path"] == ["RETRIEVED", "VERIFIED", "DECIDED", "ABSTAINED"]
    assert result["reason"] == "model_abstained" and result["model_calls"] == 1
    assert result["answer"]["amount"] is None


def test_it_stops_on_an_invalid_decision(monkeypatch, tmp_path):
    script(monkeypatch, tmp_path, "cancel_order")
    result = ask()
    assert result["state"] == "STOPPED" and result["path"] == ["RETRIEVED", "VERIFIED", "STOPPED"]
    assert result["reason"] == "invalid_decision" and "cancel_order" in result["detail"]
    assert result["model_calls"] == 1 and result["answer"]["amount"] is None


def test_it_compares_the_decision_as_a_whole_string(monkeypatch, tmp_path):
    script(monkeypatch, tmp_path, "use_evidence; search_again")
    result = ask()
    assert (result["state"], result["path"], result["model_calls"]) == (
        "STOPPED", ["RETRIEVED", "VERIFIED", "STOPPED"], 1)


def test_it_stops_when_the_decision_times_out(monkeypatch, tmp_path):
    script(monkeypatch, tmp_path)  # an empty script answers as a timeout
    result = ask()
    assert result["state"] == "STOPPED" and result["reason"] == "model_timeout"
    assert result["path"] == ["RETRIEVED", "VERIFIED", "STOPPED"] and result["model_calls"] == 1


def test_it_stops_before_the_model_call_when_the_cap_is_2(model_calls):
    result = ask(max_transitions=2)
    assert result["state"] == "STOPPED" and result["reason"] == "transition_budget_exhausted"
    # The budget stop is in the returned state and reason, with no event slot left for it.
    assert result["path"] == ["RETRIEVED", "VERIFIED"] and result["transitions"] == 2
    assert result["model_calls"] == 0 and model_calls == []


def test_it_stops_when_the_model_call_budget_is_spent(model_calls):
    result = ask(max_model_calls=0)
    assert (result["state"], result["reason"], result["path"]) == (
        "STOPPED", "model_call_budget_exhausted", ["RETRIEVED", "VERIFIED", "STOPPED"])
    assert model_calls == []


def test_its_graph_is_data_with_terminal_states_and_a_cap_exit_everywhere():
    graph = graph_load()
    data = json.loads(GRAPH_PATH.read_text())
    assert len(graph.edges) == len(data["edges"])
    assert graph.candidates == ("use_evidence", "abstain") and graph.max_transitions == 8
    for terminal in ("ANSWERED", "ABSTAINED", "STOPPED"):
        assert graph.edges_from(terminal) == []
    for state in ("START", "RETRIEVED", "VERIFIED", "DECIDED", "COMPOSED"):
        assert any(e.guard == CAP_GUARD for e in graph.edges_from(state))


def test_it_caches_by_date_and_tenant_so_2025_and_2026_never_share_an_answer(model_calls):
    demo = Tenant.objects.get(slug="demo")
    first = policy_answer(tenant=demo, question="Beijing lodging", on_date=date(2026, 9, 14), topic="travel", lang="en")
    again = policy_answer(tenant=demo, question="  beijing   LODGING ", on_date=date(2026, 9, 14), topic="travel",
                          lang="en")
    older = policy_answer(tenant=demo, question="Beijing lodging", on_date=date(2025, 9, 14), topic="travel", lang="en")
    assert (first["cached"], again["cached"], older["cached"]) == (False, True, False)
    assert (again["answer"]["amount"], older["answer"]["amount"]) == ("750", "600")
    assert len(model_calls) == 2
    other = policy_answer(tenant=Tenant.objects.get(slug="other"), question="Beijing lodging",
                          on_date=date(2026, 9, 14), topic="travel", lang="en")
    assert other["state"] == "ABSTAINED" and other["cached"] is False


def test_it_misses_the_cache_after_the_corpus_changes():
    demo = Tenant.objects.get(slug="demo")
    kwargs = dict(tenant=demo, question="Beijing lodging", on_date=date(2026, 9, 14), topic="travel", lang="en")
    assert policy_answer(**kwargs)["answer"]["amount"] == "750"
    from policy.models import PolicyLine

    line = PolicyLine.objects.get(version__label="travel-v2", lang="en", number=3)
    line.text, line.amount = "Beijing lodging: 780 yuan per room per night.", 780
    line.save()
    fresh = policy_answer(**kwargs)
    assert fresh["cached"] is False and fresh["answer"]["amount"] == "780"
    assert PolicyAnswerCache.objects.filter(tenant=demo).count() == 2


def test_it_does_not_cache_a_stop(monkeypatch, tmp_path):
    demo = Tenant.objects.get(slug="demo")
    script(monkeypatch, tmp_path, "cancel_order")
    result = policy_answer(tenant=demo, question="Beijing lodging", on_date=date(2026, 9, 14), topic="travel",
                           lang="en", use_cache=True)
    assert result["state"] == "STOPPED" and not PolicyAnswerCache.objects.exists()


def test_seeding_twice_keeps_one_corpus():
    call_command("seed_demo", verbosity=0)
    assert ask()["answer"]["amount"] == "750"
    from policy.models import PolicyLine

    assert PolicyLine.objects.count() == 12
