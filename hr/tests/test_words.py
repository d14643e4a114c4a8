"""Candidate matching's timeline reads in the reader's language: the trigger frame
names the TAN by its title in that language, the tools' summaries are words (each candidate by
their name in that language), and the run's conversation has no English title of its own."""
import pytest
from django.conf import settings
from django.utils import translation

from hr.models import OutboxEvent, Tan
from hr.services import Actor, tan_approve
from hr.supervisor import tan_event_consume
from timeline.models import Frame
from tests.helpers import client_for, drive, membership
from workflows.models import Run

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


@pytest.fixture(autouse=True)
def _default_language_after():
    yield
    translation.activate(settings.LANGUAGE_CODE)


def matching_run() -> Run:
    m = membership("ada")
    tan = Tan.objects.get(title="Data Analyst")
    tan_approve(actor=Actor(tenant_id=m.tenant_id, user_id=m.user_id, role=m.role), tan_id=tan.id)
    run = drive(Run.objects.get(id=tan_event_consume(OutboxEvent.objects.get(tan=tan).id)))
    assert run.status == "completed", run.status_reason
    return run


def page(url: str, language: str) -> str:
    response = client_for("ada").get(url, HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200, response.content[:500]
    return response.content.decode()


def test_the_matching_timeline_reads_in_chinese_and_in_english():
    run = matching_run()
    url = f"/conversations/{run.conversation_id}/timeline/"
    zh = page(url, "zh-hans")
    assert "由“数据分析师”的“招聘申请已批准”事件启动（ada 批准），而不是由聊天消息启动。" in zh
    assert "已从简历库检索到 10 名候选人。" in zh
    assert "已为 10 名候选人打分；3 人合适：玛丽亚·加西亚 1.000、周欣 0.800、陈静 0.525。" in zh
    assert "已在人力资源系统中记录 3 个匹配。" in zh
    for english in ("Started by the event", "Data Analyst", "Retrieved 10 candidates", "Scored 10 candidates",
                    "Maria Garcia", "Recorded 3 matches", "Candidate matching"):
        assert english not in zh, english

    en = page(url, "en")
    assert ("Started by the event “TAN approved” for “Data Analyst” (approved by ada), not by a chat message."
            in en)
    assert "Retrieved 10 candidates from the CV bank." in en
    assert "Scored 10 candidates; 3 fit: Maria Garcia 1.000, Zhou Xin 0.800, Chen Jing 0.525." in en
    assert "Recorded 3 matches in the HR system." in en
    for chinese in ("数据分析师", "招聘申请", "检索到", "玛丽亚", "记录"):
        assert chinese not in en, chinese


def test_the_english_columns_keep_the_english_and_the_conversation_reads_in_each_language():
    run = matching_run()
    trigger = Frame.objects.get(activity=run.activity, name="trigger: hr.tan.approved")
    assert trigger.summary == ("Started by the event “TAN approved” for “Data Analyst” (approved by ada), "
                               "not by a chat message.")
    assert trigger.summary_words["params"]["tan"] == {"en": "Data Analyst", "zh-hans": "数据分析师"}
    assert Frame.objects.get(activity__run=run, name="score_candidates").summary.startswith("Scored 10 candidates; 3 fit")
    console = f"/conversations/{run.conversation_id}/"
    assert f"对话 {run.conversation_id}" in page(console, "zh-hans")
    english = page(console, "en")
    assert f"Conversation {run.conversation_id}" in english and "Candidate matching: Data Analyst" not in english
