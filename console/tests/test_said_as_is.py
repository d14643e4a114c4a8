"""What the console says agrees with the facts: the chat's heading is the
conversation's title as soon as the first message gives it one; an attached list of one is
"1 row"; the runs grid puts the whole-tenant restore's step under its own column, not the
setup's "Undo"; a wait withdrawn by a replan says so; a renamed run is called by its new name."""
import pytest

from agents.models import Message
from agents.orchestrator import message_post
from approvals.models import ApprovalRequest
from payroll.records import services as payroll
from timeline.services import conversation_create
from workflows.models import Run
from workflows.services import run_revise
from tests.helpers import client_for, drive, membership, run_to_approval
from tests.payroll import actor_for

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo", "builtin_llm")]


def test_the_chat_refresh_carries_the_title_the_first_message_gave():
    alice = membership("alice")
    conv = conversation_create(tenant_id=alice.tenant_id, user_id=alice.user_id)
    page = client_for("alice").get(f"/conversations/{conv.id}/").content.decode()
    assert f"Conversation {conv.id}" in page  # untitled until the first message
    message_post(membership=alice, conversation_id=conv.id, text="What can you do?")
    chat = client_for("alice").get(f"/conversations/{conv.id}/chat/").content.decode()
    assert 'id="conversation-title" data-testid="conversation-title" hx-swap-oob="true">What can you do?</h2>' in chat
    assert "<title>What can you do? · Keel</title>" in chat and f"Conversation {conv.id}" not in chat


@pytest.mark.parametrize("lang, one, three", [("en", "1 row", "3 rows"), ("zh-CN", "1 行", "3 行")])
def test_an_attachment_chip_counts_its_rows_in_the_right_form(lang, one, three):
    alice = membership("alice")
    conv = conversation_create(tenant_id=alice.tenant_id, user_id=alice.user_id, title="Lists")
    for rows in (1, 3):
        Message.objects.create(conversation=conv, role=Message.Role.USER, text="here", author=alice.user,
                               attachment_name=f"list{rows}.csv", attachment_rows=rows)
    page = client_for("alice").get(f"/conversations/{conv.id}/", HTTP_ACCEPT_LANGUAGE=lang).content.decode()
    assert f"· {one}</span>" in page and f"· {three}</span>" in page
    assert "1 rows" not in page


def test_the_restore_step_sits_in_its_own_column_not_under_undo():
    setup = run_to_approval()
    sid = int(payroll.snapshot_create(actor=actor_for("bob"), label="b", idempotency_key="b").body["snapshot_id"])
    receipt = payroll.snapshot_restore(actor=actor_for("ada"), snapshot_id=sid, idempotency_key="r")
    restore = drive(Run.objects.get(id=int(receipt.body["run_id"])))
    html = client_for("ada").get("/runs/").content.decode()
    head = html.split("grid-strip-head", 1)[1].split("</th>", 1)[0]
    labels = [chunk.split('title="', 1)[1].split('"', 1)[0] for chunk in head.split('data-step-key="')[1:]]
    assert "Undo" in labels and "Restore" in labels, labels
    row = html.split(f'data-run="{restore.id}"', 1)[1].split("</tr>", 1)[0]
    assert 'title="Restore: ' in row and 'title="Undo: ' not in row
    assert setup.id != restore.id


def waiting_then_renamed(new_name: str) -> Run:
    run = run_to_approval(group_name="Shanghai Sales")
    run_revise(membership=membership("alice"), run_id=run.id, params_update={"group_name": new_name},
               replace=["snapshot"], reason="the user renamed the group")
    return drive(Run.objects.get(id=run.id))


@pytest.mark.parametrize("lang, withdrawn, waiting", [("en", "withdrawn", "still waiting"), ("zh-CN", "已撤回", "仍在等待")])
def test_a_wait_withdrawn_by_a_rename_says_withdrawn_not_still_waiting(lang, withdrawn, waiting):
    run = waiting_then_renamed("Shanghai Sales 2")
    assert ApprovalRequest.objects.filter(run=run, status="superseded").count() == 1
    html = client_for("alice").get(f"/runs/{run.id}/", HTTP_ACCEPT_LANGUAGE=lang).content.decode()
    waits = html.split('class="waits"', 1)[1].split("</ul>", 1)[0]
    assert waits.count("<li>") == 2, waits  # the withdrawn card's wait, and the fresh card's
    assert withdrawn in waits and waits.count(waiting) == 1, waits  # only the fresh card still waits
    assert "the user renamed the group" in waits or lang != "en"


def test_the_run_pages_waits_refresh_with_its_panel_to_show_a_card_asked_after_the_page_loaded():
    run = run_to_approval(group_name="Shanghai Sales")
    alice = client_for("alice")
    page = alice.get(f"/runs/{run.id}/").content.decode()
    assert f'id="run-waits" data-refreshed hx-get="/runs/{run.id}/waits/" hx-trigger="keel:refresh"' in page
    assert page.split('class="waits"', 1)[1].split("</ul>", 1)[0].count("still waiting") == 1
    run_revise(membership=membership("alice"), run_id=run.id, params_update={"group_name": "Shanghai Sales 3"},
               replace=["snapshot"], reason="the user renamed the group")
    # What the page's refresh fetches once the rename's events arrive: the withdrawn wait and the new.
    before = alice.get(f"/runs/{run.id}/waits/").content.decode()
    assert "withdrawn" in before and "still waiting" not in before  # the fresh card is not asked yet
    drive(Run.objects.get(id=run.id))
    after = alice.get(f"/runs/{run.id}/waits/").content.decode()
    assert after.count("<li>") == 2 and after.count("still waiting") == 1 and "<html" not in after
    assert client_for("oscar").get(f"/runs/{run.id}/waits/").status_code == 404  # another tenant's run


def test_after_a_rename_the_run_is_called_by_its_new_name_everywhere():
    run = waiting_then_renamed("Shanghai Sales 2")
    alice = client_for("alice")
    for url in (f"/runs/{run.id}/", f"/conversations/{run.conversation_id}/"):
        html = alice.get(url).content.decode()
        assert "Run: Payroll group setup: Shanghai Sales 2</h2>" in html, url
    grid = alice.get("/runs/").content.decode().split(f'data-run="{run.id}"', 1)[1].split("</tr>", 1)[0]
    assert ">Payroll group setup: Shanghai Sales 2</a>" in grid, grid
    zh = alice.get(f"/runs/{run.id}/", HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    assert "薪资组设置：Shanghai Sales 2" in zh
