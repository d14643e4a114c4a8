"""The run page: every step, every plan version, the waits, and the panel it refreshes."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from tenants.selectors import membership_for_user
from workflows.models import RunStatus
from workflows.selectors import node_acceptance, run_get_for
from workflows.step_status import step_status_shown

from ..runs_history import GRID_STATUSES, RunFilterError, RunFilters, run_waterfall, runs_grid
from ..selectors import nodes_in_plan_order, run_panel, waits_for_runs


@login_required
@require_GET
def runs_history(request: HttpRequest) -> HttpResponse:
    """The tenant's runs × steps, coloured by status; filters and pages. A filter value that
    cannot be one is refused with a clear message (400) and filters nothing."""
    membership = membership_for_user(request.user)
    error = ""
    try:
        filters = RunFilters.from_query(request.GET)
    except RunFilterError as exc:
        error, filters = exc.message, RunFilters()
    grid = runs_grid(membership, filters)
    return render(request, "timeline/runs.html", {"membership": membership, "grid": grid, "filters": filters,
                                                   "filter_query": filters.as_query(), "error": error,
                                                   "statuses": RunStatus.values, "step_statuses": GRID_STATUSES},
                  status=400 if error else 200)


@login_required
@require_GET
def run_page(request: HttpRequest, run_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    run = run_get_for(membership, run_id)
    panel = run_panel(membership, run)
    nodes = nodes_in_plan_order(run.nodes.all(), panel.plans)
    for node in nodes:
        node.acceptance_rows = node_acceptance(node)
        node.display_status = step_status_shown(run.status, node.status)
    waterfall = run_waterfall(run, nodes)
    return render(request, "timeline/run.html", {"membership": membership, "run": run,
                                                  "conversation": run.conversation, "panel": panel,
                                                  "nodes": nodes,
                                                  "waits": waits_for_runs([run.id]),
                                                  "waterfall": waterfall})


@login_required
@require_GET
def run_panel_fragment(request: HttpRequest, run_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    run = run_get_for(membership, run_id)
    return render(request, "timeline/conversation.html#run-panel",
                  {"membership": membership, "conversation": run.conversation, "panel": run_panel(membership, run)})


@login_required
@require_GET
def run_waits_fragment(request: HttpRequest, run_id: int) -> HttpResponse:
    """The run page's waits, refreshed with its panel."""
    run = run_get_for(membership_for_user(request.user), run_id)
    return render(request, "timeline/run.html#waits", {"run": run, "waits": waits_for_runs([run.id])})
