"""The run page: every step, every plan version, the waits, and the panel it refreshes."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from tenants.selectors import membership_for_user
from workflows.selectors import node_acceptance, run_get_for

from ..selectors import nodes_in_plan_order, run_panel, waits_for_runs


@login_required
@require_GET
def run_page(request: HttpRequest, run_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    run = run_get_for(membership, run_id)
    panel = run_panel(membership, run)
    nodes = nodes_in_plan_order(run.nodes.all(), panel.plans)
    for node in nodes:
        node.acceptance_rows = node_acceptance(node)
    return render(request, "timeline/run.html", {"membership": membership, "run": run,
                                                  "conversation": run.conversation, "panel": panel,
                                                  "nodes": nodes,
                                                  "waits": waits_for_runs([run.id])})


@login_required
@require_GET
def run_panel_fragment(request: HttpRequest, run_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    run = run_get_for(membership, run_id)
    return render(request, "timeline/conversation.html#run-panel",
                  {"membership": membership, "conversation": run.conversation, "panel": run_panel(membership, run)})
