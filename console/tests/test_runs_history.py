"""The runs grid and the run's waterfall."""
import pytest

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from tests.helpers import client_for, drive, membership, run_to_approval
from workflows.models import Run

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def test_the_grid_shows_the_tenants_runs_by_step_and_never_another_tenants():
    run = run_to_approval()
    html = client_for("alice").get("/runs/").content.decode()
    assert f'data-run="{run.id}"' in html
    for step, status in (("interpret", "completed"), ("import", "awaiting_approval"), ("verify", "pending")):
        assert f'data-step-key="{step}"' in html
    assert 'class="grid-cell status-awaiting_approval"' in html and 'class="grid-cell status-completed"' in html
    assert f'data-run="{run.id}"' not in client_for("oscar").get("/runs/").content.decode()


def test_the_grid_filters_by_status_blueprint_starter_and_date_and_refuses_nonsense():
    run = run_to_approval()
    alice = client_for("alice")
    assert f'data-run="{run.id}"' in alice.get("/runs/?status=awaiting_approval").content.decode()
    assert f'data-run="{run.id}"' not in alice.get("/runs/?status=completed").content.decode()
    assert f'data-run="{run.id}"' in alice.get(f"/runs/?blueprint={run.blueprint}").content.decode()
    assert f'data-run="{run.id}"' not in alice.get("/runs/?blueprint=nothing").content.decode()
    assert f'data-run="{run.id}"' in alice.get(f"/runs/?started_by={run.created_by.username}").content.decode()
    assert f'data-run="{run.id}"' not in alice.get("/runs/?started_by=bob").content.decode()
    day = run.created_at.date().isoformat()
    assert f'data-run="{run.id}"' in alice.get(f"/runs/?since={day}&until={day}").content.decode()
    assert f'data-run="{run.id}"' not in alice.get("/runs/?since=2001-01-01&until=2001-01-02").content.decode()
    for bad, message in (("status=sleeping", "is not a run status"), ("since=yesterday", "is not a date"),
                         ("since=2030-01-02&until=2030-01-01", "is after")):
        response = alice.get(f"/runs/?{bad}")
        assert response.status_code == 400 and message in response.content.decode()


def test_the_grid_pages_by_25():
    first = run_to_approval()
    for _ in range(26):
        clone = Run.objects.get(id=first.id)
        clone.pk = None
        clone.save()
    alice = client_for("alice")
    page1 = alice.get("/runs/").content.decode()
    assert page1.count("data-run=") == 25 and "page 1 of 2" in page1
    page2 = alice.get("/runs/?page=2").content.decode()
    assert page2.count("data-run=") == 2


def test_the_run_waterfall_has_one_axis_and_a_labelled_wait():
    run = run_to_approval()
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                    verdict="approved")
    drive(run)
    html = client_for("alice").get(f"/runs/{run.id}/").content.decode()
    assert 'data-testid="run-waterfall"' in html and 'data-testid="wf-axis"' in html
    for step in ("interpret", "match", "snapshot", "import", "verify"):
        assert f'class="wf-lane" data-lane="{step}"' in html
    # One axis: every bar's offset is a share of the same run span, so the later steps start further right.
    import re
    lefts = {lane: min(float(x) for x in re.findall(r'data-kind="work" data-left="([0-9.]+)"', block))
             for lane, block in re.findall(r'data-lane="(\w+)">([\s\S]*?)</div>\s*</div>', html)
             if 'data-kind="work"' in block}
    assert lefts["interpret"] <= lefts["match"] <= lefts["import"] <= lefts["verify"]
    label = html.split('data-testid="wait-label">')[1].split("</span>")[0]
    assert label.startswith("waited on Bob Li for approval · ")


def test_a_step_that_will_never_run_reads_skipped_in_the_grid_and_on_the_run_page():
    """The undo step of a completed run waited on a failure that never came: it reads
    "Skipped" (display only; the step keeps its status), while a waiting run's steps stay pending."""
    from tests.helpers import REQUEST
    from workflows.step_status import step_status_shown
    from workflows.models import Node
    from workflows.services import run_start

    done = run_to_approval()
    waiting = drive(run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                              params={"request": REQUEST, "group_name": "Beijing Operations"}))
    assert waiting.status == "awaiting_approval"
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=done).id,
                    verdict="approved")
    done = drive(done)
    assert done.status == "completed"
    assert Node.objects.get(run=done, key="restore").status == "pending"
    html = client_for("alice").get("/runs/").content.decode()
    done_row = html.split(f'data-run="{done.id}"')[1].split("</tr>")[0]
    waiting_row = html.split(f'data-run="{waiting.id}"')[1].split("</tr>")[0]
    assert 'class="grid-cell status-skipped"' in done_row and 'data-status="pending"' not in done_row
    assert 'data-status="skipped"' not in waiting_row and 'data-status="pending"' in waiting_row
    assert "Undo: Skipped" in done_row
    assert '<i class="grid-cell status-skipped"></i>Skipped' in html  # the legend explains it
    page = client_for("alice").get(f"/runs/{done.id}/").content.decode()
    restore = page.split('data-testid="step-status-restore"')[1].split("</td>")[0]
    assert 'data-status="skipped"' in restore and "Skipped" in restore
    # Only a run that is over for good: a failed or blocked run may be retried.
    assert step_status_shown("completed", "pending") == "skipped"
    assert step_status_shown("rolled_back", "blocked") == "skipped"
    assert step_status_shown("cancelled", "pending") == "cancelled"
    assert step_status_shown("completed", "completed") == "completed"
    assert step_status_shown("failed", "pending") == "pending"
    assert step_status_shown("blocked", "blocked") == "blocked"
    assert step_status_shown("running", None) is None


def test_each_grid_row_says_who_started_the_run_and_how_long_it_took():
    run = run_to_approval()
    html = client_for("alice").get("/runs/").content.decode()
    row = html.split(f'data-run="{run.id}"')[1].split("</tr>")[0]
    assert '<td class="rg-who">Alice Chen</td>' in row
    import re
    assert re.search(r'<td class="rg-num">[0-9.]+ (ms|s|min|h)</td>', row), row
