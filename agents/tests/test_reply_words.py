"""Keel's replies are words: stored as meaning on the Message, the turn's Activity
and the message.reply event, and rendered in the *reader's* language — an English reader of
a conversation started in Chinese reads English, in the chat, the messages API and the
timeline, and the other way round. The POST and the event's `text` keep the reply in the
request's language (the API contract); a row stored as text before words reads as stored."""
import html

import pytest
from django.conf import settings
from django.utils import translation

from agents.models import Message
from agents.orchestrator import message_post
from timeline.models import Activity, Conversation, Event
from timeline.services import conversation_create
from tests.helpers import client_for, membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]

PAYROLL_ZH = "帮我给上海销售团队建一个薪资组，有提成，叫“沪销走查”"
PAYROLL_ZH_REPLY = "好的，我开始创建薪资组“沪销走查”，使用模板“销售人员（含提成）”：先做快照，导入前会请审批人确认。"
PAYROLL_EN = "Set up a monthly payroll group for our Shanghai sales team with commission, called Shanghai Walk"
CLAIM_EN = "Please file an expense claim: lodging in Beijing, 2 nights from 2026-11-16, 1,800 yuan in total"
CLAIM_ZH = "请帮我报销：北京住宿，2026-11-16起住了2晚，共1800元"


@pytest.fixture(autouse=True)
def _default_language_after():
    yield
    translation.activate(settings.LANGUAGE_CODE)


def turn(text: str) -> tuple[Conversation, dict]:
    m = membership("alice")
    conversation = conversation_create(tenant_id=m.tenant_id, user_id=m.user_id, title="t")
    return conversation, message_post(membership=m, conversation_id=conversation.id, text=text)


def read(conversation: Conversation, language: str, who: str = "bob") -> dict[str, str]:
    """What a reader of `language` reads of the conversation: the chat, the messages API's
    Keel messages, the timeline page."""
    client = client_for(who)
    pages = {}
    for name, url in (("chat", f"/conversations/{conversation.id}/chat/"),
                      ("page", f"/conversations/{conversation.id}/"),
                      ("timeline", f"/conversations/{conversation.id}/timeline/")):
        response = client.get(url, HTTP_ACCEPT_LANGUAGE=language)
        assert response.status_code == 200, (url, response.content[:300])
        pages[name] = html.unescape(response.content.decode())
    response = client.get(f"/api/v1/conversations/{conversation.id}/messages/", HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200
    pages["api"] = " ".join(m["text"] for m in response.json() if m["role"] == "assistant")
    return pages


def stored_reply(conversation: Conversation, result: dict) -> tuple[Message, Activity, Event]:
    message = Message.objects.get(conversation=conversation, role=Message.Role.ASSISTANT)
    activity = Activity.objects.get(id=int(result["activity_id"]))
    event = Event.objects.get(conversation=conversation, type="message.reply")
    return message, activity, event


def test_a_chinese_payroll_request_s_reply_reads_in_english_for_an_english_reader():
    conversation, result = turn(PAYROLL_ZH)
    assert result["reply"] == PAYROLL_ZH_REPLY  # the POST answers in the request's language
    message, activity, event = stored_reply(conversation, result)
    assert message.words["key"].startswith("I've started setting up “%(group)s” with the template")
    assert activity.summary_words == message.words and event.data["words"] == message.words
    assert event.data["text"] == PAYROLL_ZH_REPLY
    # The English column (search, logs) is English.
    assert activity.summary.startswith("I've started setting up “沪销走查” with the template “")

    en = read(conversation, "en")
    for name in ("chat", "page", "timeline", "api"):
        assert "I've started setting up “沪销走查” with the template “" in en[name], name
        assert "I'll take a snapshot first" in en[name], name
        assert "我开始创建薪资组" not in en[name] and "先做快照" not in en[name], name

    zh = read(conversation, "zh-hans")
    for name in ("chat", "page", "timeline", "api"):
        assert PAYROLL_ZH_REPLY in zh[name], name


def test_an_english_payroll_request_s_reply_reads_in_chinese_for_a_chinese_reader():
    conversation, result = turn(PAYROLL_EN)
    assert result["reply"].startswith("I've started setting up “Shanghai Walk” with the template “")
    message, activity, event = stored_reply(conversation, result)
    assert message.words is not None and activity.summary_words == message.words
    assert event.data["text"] == result["reply"]

    zh = read(conversation, "zh-hans")
    for name in ("chat", "page", "timeline", "api"):
        assert "我开始创建薪资组“Shanghai Walk”，使用模板“" in zh[name], name
        at = zh[name].find("I've started setting up")
        assert at < 0, (name, zh[name][max(at - 300, 0):at + 100])
        assert "take a snapshot" not in zh[name], name
    en = read(conversation, "en")
    for name in ("chat", "timeline", "api"):
        assert "I've started setting up “Shanghai Walk”" in en[name], name


def test_a_chinese_expense_claim_s_reply_reads_in_english_for_an_english_reader():
    conversation, result = turn(CLAIM_ZH)
    assert result["reply"].startswith("已提交报销申请：北京住宿，2026-11-16起2晚，共1,800元（900元/晚）。")
    message, activity, event = stored_reply(conversation, result)
    assert message.words is not None and event.data["words"] == message.words

    en = read(conversation, "en")
    for name in ("chat", "page", "timeline", "api"):
        assert ("I've filed an expense claim: lodging in Beijing, 2 nights from 2026-11-16, 1,800 yuan "
                "(900 yuan a night).") in en[name], name
        assert "Please attach the invoice" in en[name], name
        assert "已提交报销申请" not in en[name], name
    zh = read(conversation, "zh-hans")
    for name in ("chat", "timeline", "api"):
        assert "已提交报销申请：北京住宿，2026-11-16起2晚，共1,800元（900元/晚）。" in zh[name], name


def test_an_english_expense_claim_s_reply_reads_in_chinese_for_a_chinese_reader():
    conversation, result = turn(CLAIM_EN)
    assert result["reply"].startswith("I've filed an expense claim: lodging in Beijing, 2 nights from 2026-11-16, "
                                      "1,800 yuan (900 yuan a night).")
    zh = read(conversation, "zh-hans")
    for name in ("chat", "page", "timeline", "api"):
        assert "已提交报销申请：北京住宿，2026-11-16起2晚，共1,800元（900元/晚）。" in zh[name], name
        assert "请在此对话中附上发票" in zh[name], name
        assert "I've filed an expense claim" not in zh[name], name


def test_a_reply_stored_as_text_before_words_reads_as_it_was_stored():
    conversation, result = turn(PAYROLL_ZH)
    Message.objects.filter(conversation=conversation, role=Message.Role.ASSISTANT).update(words=None)
    Activity.objects.filter(id=int(result["activity_id"])).update(summary_words=None, summary=PAYROLL_ZH_REPLY)
    en = read(conversation, "en")
    assert PAYROLL_ZH_REPLY in en["chat"] and PAYROLL_ZH_REPLY in en["timeline"]


def test_a_domain_outside_the_catalog_brings_its_reply_in_both_languages():
    from tests.domains.leave import leave_registered

    with leave_registered():
        conversation, result = turn("我想请假 2 天，从 2026-12-21 开始")
        assert result["reply"] == "好的，我已提交 2 天休假（2026-12-21 起），等待审批。"
        en = read(conversation, "en")
        assert "I've asked for 2 days of leave from 2026-12-21; an approver decides." in en["chat"]
        assert "休假" not in en["chat"]
