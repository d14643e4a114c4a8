"""What people notice: a favicon, distinct status colours, filters that hide what does
not match, one status vocabulary on every page."""
import re
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders
from django.db import transaction

from console.views.metrics import STATUS_COLOUR
from timeline.models import Activity
from tests.helpers import client_for, run_to_approval
from workflows.models import Node

from workflows.transitions import node_transition

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def test_every_page_names_a_favicon_that_exists():
    html = client_for("alice").get("/console/").content.decode()
    icon = re.search(r'<link rel="icon" href="([^"]+)"', html).group(1)
    assert icon.endswith("keel/favicon.svg") and finders.find("keel/favicon.svg")
    response = client_for("alice").get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("keel/favicon.svg")


def test_every_status_has_its_own_colour_in_the_metrics_plots_and_the_stylesheet():
    assert len(set(STATUS_COLOUR.values())) == len(STATUS_COLOUR)
    css = Path(finders.find("keel/keel.css")).read_text()
    colour = {s: re.search(r"\.status-" + s + r"[ ,][^{]*\{ background:var\((--keel-[a-z]+)\)", css).group(1)
              for s in ["pending", "ready", "in_progress", "awaiting_approval", "awaiting_input", "completed",
                        "failed", "blocked", "rolled_back", "stopped", "cancelled"]}
    assert len(set(colour.values())) == len(colour), colour
    metrics_css = Path(finders.find("keel/metrics.css")).read_text()
    for variable in STATUS_COLOUR.values():
        assert f".fill{variable} " in metrics_css and f".bg{variable} " in metrics_css


def test_errors_only_hides_the_activities_with_no_matching_frame():
    run = run_to_approval()
    html = client_for("dora").get(f"/conversations/{run.conversation_id}/timeline/?view=developer&errors=1")
    html = html.content.decode()
    assert "No frames match the filters" not in html
    assert "data-activity=" not in html
    assert "No activity has frames that match the filters." in html
    # A filter that matches shows only the Activities with a matching frame, and says how many it hid.
    models = client_for("dora").get(f"/conversations/{run.conversation_id}/timeline/?view=developer"
                                    "&kind=model_call").content.decode()
    assert "No frames match the filters" not in models
    assert 'data-frame-kind="model_call"' in models and 'data-testid="hidden-activities"' in models


def test_a_step_awaiting_input_reads_the_same_on_the_timeline_the_console_and_the_run_page():
    run = run_to_approval()
    match = Node.objects.get(run=run, key="match")
    Activity.objects.filter(run=run, node_key="match").update(status="in_progress")
    with transaction.atomic():
        Node.objects.filter(id=match.id).update(status="in_progress")
        match.refresh_from_db()
        node_transition(match, "awaiting_input", expected="in_progress", reason="Which template?",
                        question={"text": "Which template?", "options": []})
    developer = client_for("dora").get(f"/conversations/{run.conversation_id}/timeline/?view=developer")
    business = client_for("alice").get(f"/conversations/{run.conversation_id}/timeline/")
    panel = client_for("alice").get(f"/conversations/{run.conversation_id}/panel/")
    run_page = client_for("alice").get(f"/runs/{run.id}/")
    activity = Activity.objects.get(run=run, node_key="match")
    for page in (developer, business):
        block = page.content.decode().split(f'data-activity="{activity.id}"')[1].split("data-activity=")[0]
        assert '<span class="status status-awaiting_input">Awaiting Input</span>' in block
        assert "in progress" not in block.lower()
    assert re.search(r'data-node="match" data-status="awaiting_input"[\s\S]*?Awaiting Input</text>',
                     panel.content.decode())
    assert '<span class="status status-awaiting_input">Awaiting Input</span>' in run_page.content.decode()
