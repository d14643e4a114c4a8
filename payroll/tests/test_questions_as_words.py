"""A run's questions are stored as meaning: the tool raises words, the step keeps them
in `Node.question["words"]` beside their English (`text`, for API clients and search), and
every place that shows the question renders it in its reader's language — a Chinese request's
"which template?" reads in English for an English reader and in Chinese for a Chinese one, on
the chat page, in the conversation API and on the run panel; so does the trial's question for a
missing salary. A question stored before questions were words still shows its text.

The Chinese expected here is locale/zh_hans_strings.py's: the catalog must be rebuilt
(makemessages + scripts/i18n_fill.py) for those assertions to pass."""
import html

import pytest
from django.conf import settings
from django.utils import translation
from rest_framework.test import APIClient

from agents.models import Message
from agents.news import NEWS_TYPES, news_post
from agents.orchestrator import message_post
from approvals.models import ApprovalRequest
from config.words import is_words, words_render
from console.selectors import run_panel
from timeline.models import Event
from timeline.services import conversation_create
from tests.helpers import client_for, drive, membership
from workflows.models import Node, Run
from workflows.services import run_start

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]

ASKED_ZH = "帮我建一个杭州的月薪工资组"


@pytest.fixture(autouse=True)
def _default_language_after():
    yield
    translation.activate(settings.LANGUAGE_CODE)


def conversation():
    m = membership("alice")
    return conversation_create(tenant_id=m.tenant_id, user_id=m.user_id)


def news(conv):
    """What the subscriber's task does on a worker: post the message each run event calls for."""
    for event in Event.objects.filter(conversation=conv).order_by("seq"):
        if event.type.startswith(NEWS_TYPES):
            news_post(event.id)


def chat_page(conv, language: str) -> str:
    response = client_for("alice").get(f"/conversations/{conv.id}/", HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200, response.content[:500]
    return html.unescape(response.content.decode())


def api_questions(conv, language: str) -> list[str]:
    client = APIClient()
    client.force_authenticate(membership("alice").user)
    response = client.get(f"/api/v1/conversations/{conv.id}/messages/", HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200
    return [m["text"] for m in response.json() if m["intent"] == "news"]


def test_a_chinese_requests_template_question_reads_in_each_readers_language():
    conv = conversation()
    result = message_post(membership=membership("alice"), conversation_id=conv.id, text=ASKED_ZH)
    run = drive(Run.objects.get(id=int(result["run_id"])))
    assert run.status == "awaiting_input", run.status_reason
    question = Node.objects.get(run=run, key="match", retired_in__isnull=True).question
    assert is_words(question["words"])
    english, chinese = words_render(question["words"], "en"), words_render(question["words"], "zh-hans")
    # The API's `text` is the English rendering, whatever the request's language.
    assert question["text"] == english
    assert "杭州" not in english and "Hangzhou" in english and "Pick one" in english
    assert "杭州" in chinese and "请选择一个" in chinese and "Pick one" not in chinese
    labels = [o["label"] for o in question["options"]]  # the buttons keep both languages
    assert all(o["label_en"] and o["label_zh"] for o in question["options"]) and labels

    news(conv)
    assert Message.objects.filter(conversation=conv, intent="news", words=question["words"]).exists()
    assert english in api_questions(conv, "en") and chinese in api_questions(conv, "zh-hans")
    en_page, zh_page = chat_page(conv, "en"), chat_page(conv, "zh-hans")
    assert english in en_page and chinese not in en_page
    assert chinese in zh_page and english not in zh_page
    # The run page's step row: the question, cut to its first 120 characters, in the page's language.
    run_en, run_zh = (html.unescape(client_for("alice").get(f"/runs/{run.id}/", HTTP_ACCEPT_LANGUAGE=lang)
                                    .content.decode()) for lang in ("en", "zh-hans"))
    assert english[:60] in run_en and chinese[:30] not in run_en
    assert chinese[:30] in run_zh and english[:60] not in run_zh
    # The run panel too: the question and its buttons in the reader's language.
    with translation.override("en"):
        panel = run_panel(membership("alice"), run)
        assert panel.question["text"] == english
        assert [o["label"] for o in panel.question["options"]] == [o["label_en"] for o in question["options"]]
    with translation.override("zh-hans"):
        panel = run_panel(membership("alice"), run)
        assert panel.question["text"] == chinese
        assert [o["label"] for o in panel.question["options"]] == [o["label_zh"] for o in question["options"]]


def test_continue_asks_again_in_the_readers_language_and_a_question_from_before_words_shows_its_text():
    from agents.orchestrator import _resume_run  # noqa: PLC0415 — the re-ask, without a model in the way

    conv = conversation()
    result = message_post(membership=membership("alice"), conversation_id=conv.id, text=ASKED_ZH)
    run = drive(Run.objects.get(id=int(result["run_id"])))
    node = Node.objects.get(run=run, key="match", retired_in__isnull=True)
    said = node.question["words"]
    Node.objects.filter(id=node.id).update(question={**node.question, "options": []})

    class Turn:
        text = "continue"

    with translation.override("en"):
        assert words_render(_resume_run(Turn, run).reply) == words_render(said, "en")
    # A row stored before questions were words: its text, as it was stored.
    Node.objects.filter(id=node.id).update(question={"text": "旧的问题？", "options": []})
    with translation.override("en"):
        assert words_render(_resume_run(Turn, run).reply) == "旧的问题？"
        assert run_panel(membership("alice"), run).question["text"] == "旧的问题？"


def test_the_missing_salary_question_reads_in_each_readers_language():
    # Asked before the approval (the salaries step), so that the approver's card shows the answer.
    run = drive(run_start(membership=membership("alice"), blueprint="payroll_group_setup", params={
        "request": "给上海销售团队建一个含提成的月薪薪资组", "group_name": "上海无薪",
        "new_employees": [{"employee_no": "T-2001", "name": "周敏", "department": "Sales", "location": "Shanghai"}]}))
    assert run.status == "awaiting_input", run.status_reason
    assert not ApprovalRequest.objects.filter(run=run).exists()
    question = Node.objects.get(run=run, key="salaries", retired_in__isnull=True).question
    assert question["text"] == words_render(question["words"], "en")
    assert "周敏 (T-2001)" in question["text"] and "monthly base salary" in question["text"]
    chinese = words_render(question["words"], "zh-hans")
    assert "以下员工还没有工资，无法试算：周敏（T-2001）。" in chinese and "monthly" not in chinese

    conv = Run.objects.get(id=run.id).conversation
    news(conv)
    assert question["text"] in api_questions(conv, "en") and chinese in api_questions(conv, "zh-hans")
    assert chinese in chat_page(conv, "zh-hans") and question["text"] in chat_page(conv, "en")
