"""Chinese and English: the browser's language by default, a switch kept per user,
translated pages and messages, dates in the user's locale."""
import pytest

from tenants.models import Membership
from tests.helpers import client_for, run_to_approval


pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def test_a_chinese_browser_gets_chinese_and_an_english_one_english():
    run = run_to_approval()
    alice = client_for("alice")
    zh = alice.get(f"/conversations/{run.conversation_id}/", HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9").content.decode()
    assert '<html lang="zh-hans"' in zh
    assert "控制台" in zh and "退出登录" in zh and "等待审批" in zh and "审批人（ada, bob）" in zh
    assert "Log out" not in zh
    en = alice.get(f"/conversations/{run.conversation_id}/", HTTP_ACCEPT_LANGUAGE="en-GB,en;q=0.9").content.decode()
    assert '<html lang="en"' in en and "Log out" in en and "Awaiting Approval" in en and "控制台" not in en


def test_the_log_in_page_speaks_the_browsers_language():
    from django.test import Client

    page = Client().get("/login/", HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    assert "登录 Keel" in page and "用户名" in page


def test_the_switch_is_kept_per_user_across_browsers():
    alice = client_for("alice")
    response = alice.post("/language/", {"language": "zh-hans", "next": "/runs/"}, HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 302 and response["Location"] == "/runs/"
    assert response.cookies["keel_language"].value == "zh-hans"
    assert Membership.objects.get(user__username="alice").language == "zh-hans"
    # Another browser, in English, without the cookie: alice still reads Chinese.
    elsewhere = client_for("alice").get("/runs/", HTTP_ACCEPT_LANGUAGE="en-US").content.decode()
    assert "运行记录" in elsewhere and "Every run of" not in elsewhere
    # Bob, same English browser, is not affected.
    assert "Runs" in client_for("bob").get("/runs/", HTTP_ACCEPT_LANGUAGE="en-US").content.decode()
    back = alice.post("/language/", {"language": "en", "next": "/runs/"})
    assert back.status_code == 302
    assert "Every run of" in client_for("alice").get("/runs/", HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()


def test_a_language_keel_does_not_speak_is_refused_and_changes_nothing():
    alice = client_for("alice")
    response = alice.post("/language/", {"language": "klingon", "next": "/runs/"})
    assert response.status_code == 400 and "klingon" in response.content.decode()
    assert Membership.objects.get(user__username="alice").language == ""
    assert "keel_language" not in response.cookies
    # A next that leaves the site goes home instead.
    away = alice.post("/language/", {"language": "en", "next": "https://evil.example/"})
    assert away["Location"] == "/"


def test_dates_and_messages_follow_the_locale():
    run = run_to_approval()
    alice = client_for("alice")
    Membership.objects.filter(user__username="alice").update(language="zh-hans")
    page = alice.get(f"/runs/{run.id}/").content.decode()
    assert "瀑布图" in page and "所有步骤共用一条时间轴" in page
    assert f"{run.created_at.year}年" in page  # Chinese date format
    refused = alice.get("/runs/?since=yesterday")
    assert refused.status_code == 400 and "不是日期" in refused.content.decode()


def test_the_conversation_and_the_approvals_inbox_speak_chinese():
    run = run_to_approval()
    zh = {"HTTP_ACCEPT_LANGUAGE": "zh-CN"}
    conversation = client_for("alice").get(f"/conversations/{run.conversation_id}/", **zh).content.decode()
    assert "发送" in conversation and "输入消息…" in conversation and "3 / 6 个步骤" in conversation
    assert "等待：</strong> 审批人（ada, bob）" in conversation
    inbox = client_for("bob").get("/approvals/", **zh).content.decode()
    assert "审批矩阵" in inbox and "批准" in inbox and "拒绝并重新规划" in inbox
    english = client_for("bob").get("/approvals/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Reject and replan" in english and "审批矩阵" not in english
