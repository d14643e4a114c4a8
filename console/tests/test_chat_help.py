"""What the console says Keel can do, the files the chat takes and the top bar's
pages come from the registered domains, in the reader's language: a domain registered from
the tests shows up with no change to the console."""
import re

import pytest

from tests.domains.leave import leave_registered
from timeline.services import conversation_create
from tests.helpers import client_for, membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}
EN = {"HTTP_ACCEPT_LANGUAGE": "en"}


def chat_page(lang) -> str:
    alice = membership("alice")
    conv = conversation_create(tenant_id=alice.tenant_id, user_id=alice.user_id)
    return client_for("alice").get(f"/conversations/{conv.id}/", **lang).content.decode()


def test_the_empty_chat_lists_each_domains_example_and_the_files_it_takes_in_the_readers_language():
    en, zh = chat_page(EN), chat_page(ZH)
    assert "set up a monthly payroll group for our Shanghai sales team with commission" in en
    assert "Please file an expense claim: lodging in Beijing" in en
    assert "a CSV or XLSX employee list (.csv or .xlsx)" in en and "an invoice for an expense claim" in en
    assert 'accept=".csv,.xlsx,.pdf,.png,.jpg,.jpeg"' in en
    assert "为我们上海销售团队设置一个含提成的月度薪资组" in zh and "请帮我报销" in zh
    assert "告诉 Keel 您需要什么" in zh and "报销申请的发票" in zh
    help_zh = zh.split('data-testid="chat-help"', 1)[1].split("</div>", 1)[0]
    english = set(re.findall(r"[A-Za-z]{2,}", re.sub(r"<[^>]+>", " ", help_zh)))
    assert english <= {"Keel", "CSV", "XLSX", "csv", "xlsx", "pdf", "png", "jpg"}, english


def test_a_domain_registered_later_is_offered_with_no_change_to_the_console():
    assert "take 3 days" not in chat_page(EN)
    with leave_registered():
        assert "book leave" in chat_page(EN)
        assert "请假" in chat_page(ZH)


def test_the_top_bar_lists_the_domains_pages_in_the_readers_language():
    en = client_for("alice").get("/console/", **EN).content.decode()
    zh = client_for("alice").get("/console/", **ZH).content.decode()
    assert re.search(r'href="/payroll/"[^>]*>Payroll<', en) and 'data-testid="nav-expenses">Expenses<' in en
    assert 'data-testid="nav-hiring">' in zh and "报销" in zh
    assert en.index(">Payroll<") < en.index(">Expenses<") < en.index(">Hiring<")
