"""The developer timeline's Replay button: replay a run in a sandbox and show the verdict
(agents/replay.py does the work; the API is POST /api/v1/runs/{id}/replay/)."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from agents.replay import replay_run
from tenants.selectors import membership_for_user


@login_required
@require_POST
def run_replay_fragment(request: HttpRequest, run_id: int) -> HttpResponse:
    result = replay_run(membership=membership_for_user(request.user), run_id=run_id)
    return render(request, "timeline/_replay_result.html", {"result": result})
