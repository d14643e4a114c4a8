"""The conversation front's intent and route frames are words: the signal and the
branch are codes shown by their word in the reader's language, a fixed reason is words, and a
reason built from parts keeps its English for the English reader (and in the payload) while a
Chinese reader reads a generic sentence. Rows written before words read as they were written."""
import pytest
from django.conf import settings
from django.utils import translation

from agents.orchestrator import message_post
from timeline.models import Frame, FramePayload
from timeline.services import conversation_create, frame_record
from tests.helpers import client_for, membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]

REQUEST = "帮我给上海销售团队建一个薪资组，有提成，叫“沪销走查”"


@pytest.fixture(autouse=True)
def _default_language_after():
    yield
    translation.activate(settings.LANGUAGE_CODE)


def timeline(conversation_id: int, language: str) -> str:
    response = client_for("alice").get(f"/conversations/{conversation_id}/timeline/", HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200, response.content[:500]
    return response.content.decode()


def turn(text: str):
    m = membership("alice")
    conv = conversation_create(tenant_id=m.tenant_id, user_id=m.user_id, title="t")
    result = message_post(membership=m, conversation_id=conv.id, text=text)
    return conv, Frame.objects.filter(activity_id=int(result["activity_id"]))


def test_a_payroll_requests_intent_and_route_read_in_chinese_and_in_english():
    conv, frames = turn(REQUEST)
    intent, route = frames.get(kind="intent", name="intent resolve"), frames.get(kind="route", name="route → plan")
    # The English column (search, logs, the admin) and the payload keep the English as it was.
    assert intent.summary == "Intent: resolve — asks to act (建一个) on 薪资."
    assert route.summary.startswith("Route: plan — the request is complete (") and "a fixed plan runs at once." in route.summary
    assert intent.summary_words["params"]["signal"]["key"] == "resolve"
    assert FramePayload.objects.get(frame=intent).data["signal"] == "resolve"
    assert FramePayload.objects.get(frame=route).data["reason"].startswith("the request is complete (")

    zh = timeline(conv.id, "zh-hans")
    assert "意图：办理——按规则从消息的用词判断。" in zh
    assert "路由：计划——请求已完整（薪资组“沪销走查”）：立即按固定计划执行。" in zh
    assert "Intent: resolve" not in zh and "Route: plan" not in zh and "asks to act" not in zh

    en = timeline(conv.id, "en")
    assert "Intent: resolve — asks to act (建一个) on 薪资." in en
    assert "Route: plan — the request is complete (" in en and "a fixed plan runs at once." in en
    assert "意图" not in en and "路由" not in en


def test_small_talk_routes_by_fixed_words():
    conv, frames = turn("hello")
    route = frames.get(kind="route")
    assert route.summary == "Route: chat — small talk: answer it."
    zh = timeline(conv.id, "zh-hans")
    assert "意图：闲聊——" in zh and "路由：闲聊——闲聊：直接回复。" in zh
    assert "small talk" not in zh
    en = timeline(conv.id, "en")
    assert "Route: chat — small talk: answer it." in en and "路由" not in en


def test_a_frame_written_before_words_reads_as_written():
    conv, frames = turn("hello")
    frame_record(activity_id=frames.first().activity_id, kind="route", name="route → chat",
                 summary="Route: chat — an old row, stored as prose.", payload={})
    assert "Route: chat — an old row, stored as prose." in timeline(conv.id, "zh-hans")
