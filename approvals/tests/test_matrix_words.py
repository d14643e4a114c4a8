"""The approver's desk in the reader's language: the approval matrix names each tool by
the title its domain declares (`Tool.title`, a msgid), and a run's approval history names the
role an approval needs and each decision's verdict as labels, never as stored codes."""
import html
import re

import pytest
from django.conf import settings
from django.utils import translation

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from tests.helpers import client_for, drive, membership, run_to_approval
from workflows.tools import TOOLS, tool_title

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]

TITLES = {"import_template": ("Import template", "导入模板"),
          "restore_tenant_snapshot": ("Restore tenant snapshot", "恢复租户快照"),
          "persist_matches": ("Persist matches", "保存匹配结果"),
          "submit_claim": ("Submit claim", "提交申请")}


@pytest.fixture(autouse=True)
def _default_language_after():
    yield
    translation.activate(settings.LANGUAGE_CODE)


def page(username: str, url: str, language: str) -> str:
    response = client_for(username).get(url, HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200, response.content[:500]
    return html.unescape(response.content.decode())


def shown_text(content: str) -> str:
    """The page without its code (tool names as codes are data) and without its markup."""
    content = re.sub(r"<code>.*?</code>", " ", content, flags=re.S)
    content = re.sub(r"<(script|style)\b.*?</\1>", " ", content, flags=re.S)
    return re.sub(r"<[^>]+>", " ", content)


def test_every_tool_that_asks_for_approval_declares_its_title():
    assert {name for name, tool in TOOLS.items() if tool.needs_approval and tool.title} >= set(TITLES)
    with translation.override("zh-hans"):
        assert {name: tool_title(name) for name in TITLES} == {name: zh for name, (_en, zh) in TITLES.items()}
    with translation.override("en"):
        assert {name: tool_title(name) for name in TITLES} == {name: en for name, (en, _zh) in TITLES.items()}
        assert tool_title("no_such_tool") == "No such tool"  # undeclared: the name, spaced


def test_the_matrix_names_each_tool_in_the_readers_language():
    zh = page("ada", "/approvals/matrix/", "zh-hans")
    text = shown_text(zh)
    for name, (en, chinese) in TITLES.items():
        assert f"<strong>{chinese}</strong> <code>{name}</code>" in zh
        assert f"保存“{chinese}”" in text or f"“{chinese}”" in text  # the save button of an admin's form
        assert en not in text
    en = page("ada", "/approvals/matrix/", "en")
    for name, (english, chinese) in TITLES.items():
        assert f"<strong>{english}</strong> <code>{name}</code>" in en
        assert f"Save “{english}” rule" in en
        assert chinese not in en


def test_the_approval_history_names_the_role_and_the_verdict_in_the_readers_language():
    run = run_to_approval()
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                    verdict="approved")
    drive(run)
    url = f"/approvals/runs/{run.id}/history/"
    zh = page("bob", url, "zh-hans")
    decisions = zh[zh.index('data-testid="history-decisions"'):zh.index('data-testid="history-events"')]
    assert "<td>已批准</td>" in decisions
    assert re.search(r'class="needs needs-approver">审批人<', zh)
    rows = shown_text(zh[:zh.index('data-testid="history-events"')])
    assert not re.search(r"\bapprover\b|\bapproved\b", rows)
    en = page("bob", url, "en")
    assert "<td>Approved</td>" in en and 'class="needs needs-approver">Approver<' in en
    assert "审批人" not in shown_text(en[:en.index('data-testid="history-events"')])
