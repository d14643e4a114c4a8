"""What a run tells the chat, in the words of its domain, stored as meaning:
an expense claim is told as an expense claim (what was filed, the policy's verdict with the
limit it cites, who must approve and why, the missing invoice), a blueprint that registers
no news gets generic words, and a message is shown in its reader's language, whatever the
language of the one who asked.

The Chinese expected here is locale/zh_hans_strings.py's: the catalog must be rebuilt
(makemessages + scripts/i18n_fill.py) for those assertions to pass."""
import re

import pytest
from rest_framework.test import APIClient

from agents.models import Message
from agents.news import NEWS_TYPES, news_post
from agents.orchestrator import message_post
from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from config.words import words_render
from timeline.models import Event
from timeline.services import conversation_create
from workflows.models import Run
from workflows.news import News, RunNews, news_tell
from workflows.services import run_start
from tests.helpers import drive, membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]

CLAIM = "Please file an expense claim: lodging in Beijing, 2 nights from 2026-11-16, 1,800 yuan in total"
PAYROLL_WORDS = re.compile(r"(?i)payroll|import|薪资组|工资组|导入")


def conversation(username="alice"):
    m = membership(username)
    return conversation_create(tenant_id=m.tenant_id, user_id=m.user_id)


def say(conv, text, username="alice"):
    return message_post(membership=membership(username), conversation_id=conv.id, text=text)


def news(conv):
    """What the subscriber's task does on a worker: post the message each run event calls for."""
    for event in Event.objects.filter(conversation=conv).order_by("seq"):
        if event.type.startswith(NEWS_TYPES):
            news_post(event.id)
    return list(Message.objects.filter(conversation=conv, intent="news").order_by("created_at", "id"))


def history(conv, language):
    client = APIClient()
    client.force_authenticate(membership("alice").user)
    response = client.get(f"/api/v1/conversations/{conv.id}/messages/", HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200
    return [m for m in response.json() if m["intent"] == "news"]


def claim_run_waiting(conv):
    run = drive(Run.objects.get(id=int(say(conv, CLAIM)["run_id"])))
    assert run.status == "awaiting_approval"
    return run


def test_an_expense_claim_is_told_with_the_verdict_the_rule_it_cites_and_who_must_approve():
    conv = conversation()
    claim_run_waiting(conv)
    waiting = news(conv)[-1]
    text = waiting.text
    assert "lodging claim in Beijing: 1,800.00 CNY for 2 nights from 2026-11-16" in text
    assert "over the travel policy: 900.00 CNY a night against the limit of 750.00 CNY a night" in text
    assert "travel-v2" in text  # the policy version the limit is cited from
    assert "Bob Li" in text and "must approve it" in text
    assert "No invoice is attached" in text and waiting.link["href"].startswith("/expenses/claims/")
    assert not PAYROLL_WORDS.search(text)
    assert not PAYROLL_WORDS.search(words_render(waiting.words, "zh-hans"))


def test_an_approved_claim_is_done_as_an_expense_claim_not_a_payroll_group():
    conv = conversation()
    run = claim_run_waiting(conv)
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                    verdict="approved")
    run = drive(run)
    assert run.status == "completed"
    told = news(conv)
    done = told[-1]
    assert done.text.startswith("Done: the expense claim for lodging in Beijing (1,800.00 CNY) was approved by "
                                "Bob Li and submitted.")
    assert done.link["href"].startswith("/expenses/claims/")
    for message in told:
        assert not PAYROLL_WORDS.search(message.text), message.text
        assert not PAYROLL_WORDS.search(words_render(message.words, "zh-hans")), message.words


def test_a_rejected_claim_says_who_rejected_it_and_that_it_stays_a_draft():
    conv = conversation()
    run = claim_run_waiting(conv)
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                    verdict="rejected", comment="Book the agreed hotel")
    drive(run)
    texts = [m.text for m in news(conv)]
    assert any("Bob Li rejected your lodging claim in Beijing" in t and "Book the agreed hotel" in t
               and "stays a draft" in t for t in texts), texts
    assert not any(PAYROLL_WORDS.search(t) for t in texts)


def test_a_message_stored_in_english_is_shown_in_chinese_to_a_chinese_reader():
    conv = conversation()
    claim_run_waiting(conv)
    waiting = news(conv)[-1]
    assert "Bob Li" in waiting.text and not re.search(r"[\u4e00-\u9fff]", waiting.text)  # stored: English
    zh = history(conv, "zh-hans")[-1]
    assert "北京住宿报销" in zh["text"] and "超出差旅政策" in zh["text"] and "750.00" in zh["text"]
    assert zh["words"] == waiting.words
    assert history(conv, "en")[-1]["text"] == waiting.text


def test_a_chinese_request_is_told_in_english_to_an_english_reader():
    conv = conversation()
    result = say(conv, "帮我建一个上海销售薪资组，有提成")
    drive(Run.objects.get(id=int(result["run_id"])))
    waiting = news(conv)[-1]
    en = history(conv, "en")[-1]["text"]
    assert en.startswith("The import for “上海销售”") and "is waiting for" in en and "Bob Li" in en
    zh = history(conv, "zh-hans")[-1]["text"]
    assert zh.startswith("“上海销售”的导入正在等待") and "Bob Li" in zh
    assert waiting.text == en  # the stored text is the English, for search


def test_the_pushed_news_event_carries_english_text_and_the_words():
    conv = conversation()
    claim_run_waiting(conv)
    news(conv)
    pushed = Event.objects.filter(conversation=conv, type="message.news").order_by("seq").last()
    assert "over the travel policy" in pushed.data["text"]
    assert pushed.data["words"]["key"] and words_render(pushed.data["words"], "en") == pushed.data["text"]


def test_a_blueprint_with_no_news_of_its_own_gets_the_generic_words():
    conv = conversation("dora")
    run = drive(run_start(membership=membership("dora"), blueprint="noop_chain", params={"n": 2},
                          conversation_id=conv.id))
    assert run.status == "completed"
    done = news(conv)[-1]
    assert done.text == "Done: the run “No-op chain” has finished."
    assert words_render(done.words, "zh-hans") == "完成了：运行“空操作链”已结束。"
    generic = news_tell(RunNews(run=run, kind="approval.requested", approvers=["Bob Li", "Ada Zhao"]))
    assert isinstance(generic, News)
    assert words_render(generic.words, "en") == ("The run “No-op chain” is waiting for Bob Li or Ada Zhao to "
                                                 "approve it. I'll carry on once it is approved.")


def test_the_chat_page_shows_the_news_in_the_readers_chosen_language(client):
    conv = conversation()
    claim_run_waiting(conv)
    news(conv)
    reader = membership("alice")
    reader.language = "zh-hans"
    reader.save(update_fields=["language"])
    client.force_login(reader.user)
    page = client.get(f"/conversations/{conv.id}/").content.decode()
    assert "超出差旅政策" in page and "打开报销申请" in page


def test_candidate_matching_is_told_as_matches_for_the_tan():
    from hr.models import OutboxEvent, Tan
    from hr.services import Actor, tan_approve
    from hr.supervisor import tan_event_consume

    ada = membership("ada")
    tan = Tan.objects.get(title="Senior Backend Engineer")
    tan_approve(actor=Actor(tenant_id=ada.tenant_id, user_id=ada.user_id, role=ada.role), tan_id=tan.id)
    run = drive(Run.objects.get(id=tan_event_consume(OutboxEvent.objects.get(tan=tan).id)))
    waiting = news(run.conversation)[-1]
    assert waiting.text.startswith("5 matches for the TAN “Senior Backend Engineer”") and "Bob Li" in waiting.text
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                    verdict="approved")
    drive(run)
    done = news(run.conversation)[-1]
    assert done.text == "Done: 5 matches for the TAN “Senior Backend Engineer” were recorded."
    assert done.link["href"] == f"/hiring/tans/{tan.id}/"
    assert not PAYROLL_WORDS.search(waiting.text + done.text)
