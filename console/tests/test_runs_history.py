"""The runs grid and the run's waterfall (issue 16)."""
import pytest

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from timeline.tests.helpers import client_for, run_to_approval
from workflows.models import Run
from workflows.tests.helpers import drive, membership

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
