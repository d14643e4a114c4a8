"""The chip on Keel's reply says what the person's message was understood as once the turn was
done — an answer to Keel's question, a change or a cancel of the waiting run, a request, a
question, small talk — and "not understood" only when it was not ("the first one", answering
a template question, is an answer, never "not understood").

A labelled set, English and Chinese. The TUNING rows are the walk's cases the rule was written
against; the HELD_OUT rows were written beforehand and not used to shape it: their score is the
measure, and each row must hold."""
import pytest

from agents.orchestrator import message_post
from timeline.services import conversation_create
from workflows.models import Run
from tests.helpers import client_for, drive, membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]

SHENZHEN_NO_FIT = "Set up a payroll group for our Shenzhen team paid twice a month with commission"
BJ = "Set up a monthly payroll group for our Beijing engineering team, call it BJ Eng"
BJ_ZH = "给北京研发的同事建个月薪工资组，叫研发一组"

# (what was said before, the message, the chip it gets)
TUNING = [
    ([SHENZHEN_NO_FIT], "the first one", "answer"),
    (["Set up a payroll group for Chengdu"], "Chengdu, call it Chengdu Ops", "answer"),
    ([BJ], "actually, call it BJ Eng 2", "change"),
    ([BJ], "cancel", "cancel"),
    ([], "hello", "chat"),
    ([], "asdf qwer", "unknown"),
]
HELD_OUT = [
    (["给深圳的销售团队建一个半月发薪、有提成的工资组"], "第一个", "answer"),
    (["Set up a weekly payroll group for Shenzhen factory workers"], "the second one", "answer"),
    ([SHENZHEN_NO_FIT], "banana", "unknown"),
    ([BJ_ZH], "改叫研发二组", "change"),
    ([BJ_ZH], "取消", "cancel"),
    ([], "Set up a monthly payroll group for our Shanghai sales team with commission", "resolve"),
    ([], "上海模板的公积金比例是多少？", "analyze"),
    ([], "你好", "chat"),
]


def chip_of(before: list[str], text: str) -> str:
    alice = membership("alice")
    conv = conversation_create(tenant_id=alice.tenant_id, user_id=alice.user_id)
    for said in before:
        reply = message_post(membership=alice, conversation_id=conv.id, text=said)
        if reply["run_id"]:
            drive(Run.objects.get(id=int(reply["run_id"])))
    reply = message_post(membership=alice, conversation_id=conv.id, text=text)
    return reply["understood"]


@pytest.mark.parametrize("before, text, chip", TUNING + HELD_OUT,
                         ids=[f"tuning-{n}" for n in range(len(TUNING))] + [f"held-out-{n}" for n in range(len(HELD_OUT))])
def test_each_labelled_message_gets_the_chip_of_what_it_was_understood_as(before, text, chip):
    assert chip_of(before, text) == chip


@pytest.mark.parametrize("lang, answer, not_understood", [("en", "answer", "not understood"), ("zh-CN", "回答", "未理解")])
def test_the_chat_chips_an_understood_answer_as_an_answer(lang, answer, not_understood):
    alice = membership("alice")
    conv = conversation_create(tenant_id=alice.tenant_id, user_id=alice.user_id)
    run = drive(Run.objects.get(id=int(message_post(membership=alice, conversation_id=conv.id,
                                                    text=SHENZHEN_NO_FIT)["run_id"])))
    assert run.status == "awaiting_input"
    assert message_post(membership=alice, conversation_id=conv.id, text="the first one")["intent"] == "unknown"
    html = client_for("alice").get(f"/conversations/{conv.id}/", HTTP_ACCEPT_LANGUAGE=lang).content.decode()
    chips = [c.split(">", 1)[1].split("<", 1)[0] for c in html.split('class="chip" data-intent=')[1:]]
    assert chips[-1] == answer and not_understood not in chips, chips
