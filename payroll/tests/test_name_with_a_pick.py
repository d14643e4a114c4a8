"""A group name given with the answer to "which template?" ("用上海月薪的模板，叫杭州研发中心",
"成都，叫成都运营") revises the waiting run — a new plan version, the pick and the name taken —
and never cancels it to start another: the runs page shows no cancelled run the user did not
cancel, and the approval card states the name as given (not "no name was stated")."""
import pytest

from approvals.models import ApprovalRequest
from payroll.tests.test_second_turn import dialogue as second_turn_dialogue
from workflows.models import Run
from tests.helpers import client_for

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]


def dialogue(*texts):
    seen = second_turn_dialogue(*texts)
    return Run.objects.get(id=seen[0]["run"]).conversation, seen


def card(run, **lang):
    approval = ApprovalRequest.objects.get(run=run, status="pending")
    return client_for("bob").get(f"/approvals/{approval.id}/", **lang).content.decode()


@pytest.mark.parametrize("first,second,name", [
    ("给杭州研发的同事建个月薪工资组", "用上海月薪的模板，叫杭州研发中心", "杭州研发中心"),
    ("set up monthly payroll for our Hangzhou engineers", "use the shanghai template and call it HZ Devs", "HZ Devs"),
])
def test_a_name_with_a_pick_revises_the_waiting_run(first, second, name):
    conv, (asked, answered) = dialogue(first, second)
    assert asked["asks"] and not answered["asks"]
    runs = list(Run.objects.filter(conversation_id=conv.id))
    assert len(runs) == 1, [(r.id, r.status, r.params.get("group_name")) for r in runs]
    run = runs[0]
    assert run.id == asked["run"] and run.status == "awaiting_approval", run.status_reason
    assert run.params["group_name"] == name and run.plan_version >= 2
    assert answered["template"] == "cn-sh-monthly-salaried"
    english = card(run)
    assert name in english and "no name was stated" not in english
    assert "未说明名称" not in card(run, HTTP_ACCEPT_LANGUAGE="zh-hans")


def test_a_name_without_a_pick_revises_too_and_the_next_pick_switches_the_template():
    conv, seen = dialogue("Set up payroll for our Qingdao office, monthly", "call it Qingdao Ops")
    runs = list(Run.objects.filter(conversation_id=conv.id))
    assert len(runs) == 1 and runs[0].status != "cancelled", [(r.id, r.status) for r in runs]
    assert runs[0].params["group_name"] == "Qingdao Ops"
    assert not Run.objects.filter(conversation_id=conv.id, status="cancelled").exists()


def test_a_rename_while_the_card_waits_is_a_stated_name_on_the_new_card():
    conv, (first, renamed) = dialogue("set up a monthly payroll group for our Shanghai sales team",
                                      "actually, call it SH Sales Two")
    run = Run.objects.get(id=renamed["run"])
    assert run.params["group_name"] == "SH Sales Two" and run.status == "awaiting_approval", run.status_reason
    english = card(run)
    assert "SH Sales Two" in english and "no name was stated" not in english
