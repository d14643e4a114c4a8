"""Run states say what happened, in English and Chinese. A cancelled run's
steps read Cancelled (not Blocked) with who cancelled it and when; a retried run's meta line
follows the run (retried by whom, no "finished" while it runs again); a completed run's undo
step, which will never run, reads Skipped (not Pending)."""
import re

import pytest

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from workflows.step_status import step_status_shown
from workflows.models import Run
from workflows.services import run_cancel, run_retry, run_start
from tests.helpers import client_for, drive, membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]
REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}


def start(name: str, **kwargs) -> Run:
    return drive(run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                           params={"request": REQUEST, "group_name": name}, **kwargs))


def panel(run: Run, lang=None) -> str:
    return client_for("alice").get(f"/conversations/{run.conversation_id}/panel/", **(lang or {})).content.decode()


def node_label(html: str, key: str) -> str:
    block = html.split(f'data-node="{key}"', 1)[1].split("</g>", 1)[0]
    return re.search(r'class="dag-status"[^>]*>([^<]*)<', block).group(1)


def test_a_cancelled_runs_steps_read_cancelled_with_who_and_when():
    run = start("Cancel Me")
    run_cancel(membership=membership("bob"), run_id=run.id, reason="duplicate request")
    run = drive(run)
    assert run.status == "cancelled"
    html = panel(run)
    assert node_label(html, "import") == "Cancelled" and ">Blocked<" not in html
    assert re.search(r"Cancelled by Bob Li at \w{3} \d+, \d\d:\d\d\.", html) and "“duplicate request”" in html
    zh = panel(run, ZH)
    assert node_label(zh, "import") == "已取消"
    assert re.search(r"\d+月\d+日 \d\d:\d\d", zh), "a Chinese reader reads a Chinese date"


def test_a_completed_runs_undo_step_reads_skipped_not_pending():
    run = start("Skip Undo")
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                    verdict="approved")
    run = drive(run)
    assert run.status == "completed"
    assert node_label(panel(run), "restore") == "Skipped"
    assert node_label(panel(run, ZH), "restore") == "已跳过"


def test_a_retried_runs_meta_line_follows_the_run():
    run = start("Retry Me", caps={"model_call_cap": 0})
    assert run.status == "failed"
    assert "finished" in panel(run).split('data-testid="run-meta"', 1)[1].split("</p>", 1)[0]
    Run.objects.filter(id=run.id).update(model_call_cap=20)
    run_retry(membership=membership("alice"), run_id=run.id, reason="cap raised")
    meta = panel(run).split('data-testid="run-meta"', 1)[1].split("</p>", 1)[0]
    assert "retried by Alice Chen at" in meta and "finished" not in meta


def test_a_step_reads_as_it_is_while_its_run_may_still_take_it_up():
    assert step_status_shown("failed", "blocked") == "blocked"  # a retry may still run it
    assert step_status_shown("running", "pending") == "pending"
    assert step_status_shown("completed", "completed") == "completed"
    assert step_status_shown("rolled_back", "pending") == "skipped"


def test_the_api_shows_a_completed_runs_undo_step_as_the_page_does():
    run = start("Skip Undo API")
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                    verdict="approved")
    run = drive(run)
    nodes = {n["key"]: n for n in client_for("alice").get(f"/api/v1/runs/{run.id}/").json()["nodes"]}
    assert nodes["restore"]["status"] == "pending" and nodes["restore"]["display_status"] == "skipped"
    assert nodes["import"]["display_status"] == "completed"
