"""The domain contract is the only way in. A fourth domain that lives only in
the test suite (tests/domains/leave.py: a leave request — one blueprint, two tools, one
approval) is registered, and with no generic app edited for it, a person's request is
understood in the chat, planned, approved on the desk with the domain's own card, told
in the chat in English and Chinese, listed in the runs grid and drawn on the timeline."""
import re

import pytest

from agents.news import NEWS_TYPES, news_post
from agents.orchestrator import message_post
from approvals.models import ApprovalRequest
from timeline.models import Event
from tests.domains.leave import BOOKED, leave_registered
from timeline.services import conversation_create
from tests.helpers import client_for, drive, membership
from workflows.models import Run

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}
EN = {"HTTP_ACCEPT_LANGUAGE": "en"}
RAW = re.compile(r"\{'|\{&#x27;|\{&quot;")


@pytest.fixture
def leave():
    with leave_registered():
        yield


def ask(text: str):
    alice = membership("alice")
    conv = conversation_create(tenant_id=alice.tenant_id, user_id=alice.user_id)
    return conv, message_post(membership=alice, conversation_id=conv.id, text=text)


@pytest.mark.usefixtures("leave")
@pytest.mark.parametrize("text, days", [("I'd like to take 3 days of annual leave from 2026-12-14, please.", 3),
                                        ("我想请假 2 天，从 2026-12-21 开始", 2)])
def test_a_domain_registered_from_the_tests_is_understood_approved_and_told(text, days):
    conv, reply = ask(text)
    assert reply["run_id"], reply
    run = drive(Run.objects.get(id=int(reply["run_id"])))
    assert run.blueprint == "leave_request" and run.status == "awaiting_approval", run.status_reason
    assert "leave" in reply["reply"] or "休假" in reply["reply"]

    approval = ApprovalRequest.objects.get(run=run)
    for lang, label, summary in ((EN, "Days", f"Book {days} days of leave"), (ZH, "天数", f"休假 {days} 天")):
        page = client_for("bob").get(f"/approvals/{approval.id}/", **lang).content.decode()
        assert label in page and summary in page, summary  # the domain's own card, in the reader's language
        assert not RAW.search(page.split('data-testid="card-summary"', 1)[1].split("</form>", 1)[0])
    decided = client_for("bob").post(f"/api/v1/approvals/{approval.id}/approve/", {"comment": "ok"},
                                     content_type="application/json")
    assert decided.status_code == 200, decided.content
    run = drive(run)
    assert run.status == "completed", run.status_reason
    assert len(BOOKED) == 1  # booked once

    for event in Event.objects.filter(conversation=conv).order_by("seq"):  # what the news task does on a worker
        if event.type.startswith(NEWS_TYPES):
            news_post(event.id)
    chat_en = client_for("alice").get(f"/api/v1/conversations/{conv.id}/messages/", **EN).json()
    chat_zh = client_for("alice").get(f"/api/v1/conversations/{conv.id}/messages/", **ZH).json()
    texts_en = " ".join(m["text"] for m in chat_en if m["role"] == "assistant")
    texts_zh = " ".join(m["text"] for m in chat_zh if m["role"] == "assistant")
    assert f"Done: your {days} days of leave are booked." in texts_en
    assert f"完成了：您的 {days} 天休假已登记。" in texts_zh
    for told in (texts_en, texts_zh):
        assert not re.search(r"(?i)payroll|expense|薪资|工资|报销", told), told

    grid = client_for("alice").get("/runs/", **ZH).content.decode()
    assert "请假申请" in grid  # the runs grid lists it, by its own title
    timeline = client_for("alice").get(f"/conversations/{conv.id}/timeline/", **EN).content.decode()
    assert "Book the leave" in timeline or "leave_book" in timeline


def test_without_the_registration_the_request_is_not_a_leave_run():
    _, reply = ask("I'd like to take 3 days of annual leave from 2026-12-14, please.")
    run = Run.objects.filter(id=int(reply["run_id"])).first() if reply["run_id"] else None
    assert run is None or run.blueprint != "leave_request"
