"""The chat and the run panel refresh on every chat message and run event: each partial
reads only what it shows."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.orchestrator import message_post
from timeline.services import conversation_create
from tests.helpers import client_for, membership, run_to_approval

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]

COMPLETE = "set up a monthly payroll group for our Shanghai sales team with commission"


def tables_read(client, url):
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return response.content.decode(), " ".join(q["sql"] for q in queries.captured_queries)


def test_the_chat_partial_reads_the_messages_and_not_the_run_or_the_approvals(monkeypatch):
    monkeypatch.setenv("KEEL_LLM", "builtin")
    alice = membership("alice")
    conversation = conversation_create(tenant_id=alice.tenant_id, user_id=alice.user_id)
    message_post(membership=alice, conversation_id=conversation.id, text=COMPLETE)
    html, sql = tables_read(client_for("alice"), f"/conversations/{conversation.id}/chat/")
    assert 'data-testid="keel-message"' in html and "Shanghai Sales" in html
    assert '"agents_message"' in sql
    assert '"workflows_node"' not in sql and '"approvals_approvalrequest"' not in sql


def test_the_panel_reads_the_run_and_not_the_messages_or_the_top_bars_counts():
    run = run_to_approval()
    alice = client_for("alice")
    html, sql = tables_read(alice, f"/conversations/{run.conversation_id}/panel/")
    assert "Waiting on:</strong> an approver (ada, bob)" in html
    assert '"workflows_node"' in sql and '"agents_message"' not in sql
    # The run's approval is read for the panel; the top bar's pending count is not.
    assert "COUNT(" not in sql.upper()


def test_the_whole_page_still_shows_the_top_bars_pending_count():
    run = run_to_approval()
    html = client_for("bob").get(f"/conversations/{run.conversation_id}/").content.decode()
    assert 'data-testid="pending-count">1<' in html
