"""The second turn of a conversation — an answer is a whole message,
nothing requested is dropped silently, and the labelled dialogues (`manage.py eval_dialogues`)."""
import pytest

from agents.evaluation import evaluate_dialogues, labelled_dialogues, pending_state
from agents.orchestrator import message_post
from payroll.conversation.evaluation import dialogue_observe
from payroll.reading.matching import template_decide
from payroll.reading.requirements import requirements_extract
from payroll.records.selectors import template_catalog
from timeline.services import conversation_create
from workflows.inprocess import conversation_runs_drive
from workflows.models import Run
from tests.helpers import drive, membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]


def dialogue(*texts):
    m = membership("alice")
    conv = conversation_create(tenant_id=m.tenant_id, user_id=m.user_id)
    seen = []
    for text in texts:
        result = message_post(membership=m, conversation_id=conv.id, text=text)
        conversation_runs_drive(conv.id)  # as workers would
        seen.append(dialogue_observe(conv.id, result, pending_state(conv.id, "payroll")))
    return seen


def test_nationwide_then_a_restated_place_and_a_name_en():
    first, second = dialogue("Create one payroll group for all our employees nationwide, paid monthly",
                             "all of China. Call it China All Staff")
    assert first["asks"] and "not one of the options" not in second["reply"]
    assert second["name"] == "China All Staff"
    assert "If you don't say, I'll use" in second["reply"]  # the second asking says what it assumes
    assert second["template"] == "cn-sh-monthly-salaried"


def test_nationwide_ranks_general_templates_before_interns():
    requirements = requirements_extract("Create one payroll group for all our employees nationwide, paid monthly")
    decision = template_decide(requirements, template_catalog())
    assert decision.options and "intern" not in decision.options[0].code
    assert all("intern" not in t.code for t in decision.options)


def test_the_question_is_never_asked_a_third_time():
    seen = dialogue("Set up payroll for our Qingdao office, monthly", "hmm not sure", "dunno")
    assert [s["asks"] for s in seen] == [True, True, False]
    assert seen[-1]["template"] == "cn-sh-monthly-salaried" and seen[-1]["name"] == "Qingdao Payroll"


def test_chengdu_operations_zh():
    first, second = dialogue("成都运营那边的工资组弄一下呗，按月发", "成都，叫成都运营")
    assert first["name"] == "成都运营" and second["name"] == "成都运营"
    assert "不是可选项" not in second["reply"] and "如果您不再说明" in second["reply"]


def test_a_name_given_with_a_chosen_template_is_used_zh():
    first, second = dialogue("给杭州研发的同事建个月薪工资组", "用上海月薪的模板，叫杭州研发中心")
    assert first["asks"] and not second["asks"]
    assert second["name"] == "杭州研发中心" and second["template"] == "cn-sh-monthly-salaried"
    assert "其社保和公积金比例是上海的，不是杭州的" in second["reply"]


def test_a_name_given_with_a_chosen_template_is_used_en():
    first, second = dialogue("set up monthly payroll for our Hangzhou engineers",
                             "use the shanghai template and call it HZ Devs")
    assert second["name"] == "HZ Devs" and second["template"] == "cn-sh-monthly-salaried"
    assert "There is no Hangzhou template" in second["reply"] and "Shanghai's, not Hangzhou's" in second["reply"]


def test_performance_pay_is_not_dropped_silently_zh():
    (only,) = dialogue("上海客服部要配个工资组，底薪加绩效")
    assert only["template"] == "cn-sh-monthly-salaried" and only["not_met"] == ["performance_bonus"]
    assert "未满足：绩效" in only["reply"]
    run = Run.objects.get(id=only["run"])
    assert run.params["requirements"]["not_met"][0]["item"] == "performance_bonus"
    assert run.params["requirements"]["not_met"][0]["reason"]


def test_performance_pay_is_not_dropped_silently_en():
    (only,) = dialogue("Set up a monthly group for Shanghai customer service with performance bonus")
    assert only["not_met"] == ["performance_bonus"] and "Not met — performance pay" in only["reply"]


def test_the_first_reply_does_not_repeat_the_question():
    m = membership("alice")
    conv = conversation_create(tenant_id=m.tenant_id, user_id=m.user_id)
    result = message_post(membership=m, conversation_id=conv.id,
                          text="hey can u set up pay for the hangzhou engineering folks? monthly pls")
    run = drive(Run.objects.get(id=int(result["run_id"])))
    question = run.nodes.get(key="match", retired_in__isnull=True).question["text"]
    first_sentences = {s.strip() for s in question.split(".") if s.strip()}
    assert not any(s in result["reply"] for s in first_sentences)


def test_never_mind_stops_it():
    seen = dialogue("帮我建一个杭州的月薪工资组", "算了，不用了")
    assert seen[-1]["outcome"] == "stopped" and not seen[-1]["asks"]


def test_the_labelled_dialogues_are_at_least_95_percent_right():
    rows = labelled_dialogues()
    assert len(rows) >= 80 and sum(r["s"] == "test" for r in rows) >= 30
    score = evaluate_dialogues(rows)
    assert score.accuracy("dialogue") >= 0.95, "\n".join(score.misses)
