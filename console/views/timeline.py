"""The timeline: two projections of the same records — business (summaries, status
chips) and developer (frames, waterfall, payloads on demand, provenance)."""
from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from config.api import Forbidden
from tenants.models import Membership
from tenants.selectors import membership_for_user
from timeline.models import Frame
from timeline.selectors import (
    FrameFilters,
    activities_for,
    activity_get_for,
    conversation_get_for,
    conversation_totals,
    conversations_for,
    frame_payload_get_for,
    frames_page,
    waterfall_rows,
)

from ..selectors import (
    frame_tools_for,
    node_statuses_for_runs,
    provenance_for_runs,
    waits_for_runs,
)

DEVELOPER = "developer"
BUSINESS_FRAMES = 12
BUSINESS_FILTER = FrameFilters(kinds=["intent", "route", "tool_call", "approval", "validation", "plan", "provenance"])


def _developer_only(membership: Membership) -> None:
    if not membership.can_see_payloads:
        raise Forbidden(_("The developer view is for developers and tenant admins."), code="developer_view_forbidden")


@login_required
@require_GET
def timeline_index(request: HttpRequest) -> HttpResponse:
    membership = membership_for_user(request.user)
    conversations = conversations_for(membership)[:100]
    return render(request, "timeline/index.html", {"membership": membership, "conversations": conversations})


@login_required
@require_GET
def conversation_timeline(request: HttpRequest, conversation_id: int) -> HttpResponse:
    """Two projections of the same records: business (summaries, status chips)
    and developer (frames, waterfall, payloads on demand, provenance)."""
    membership = membership_for_user(request.user)
    conversation = conversation_get_for(membership, conversation_id)
    developer = request.GET.get("view") == DEVELOPER
    if developer:
        _developer_only(membership)
    activities = list(activities_for(conversation))
    run_ids = sorted({a.run_id for a in activities if a.run_id})
    step_status = node_statuses_for_runs(run_ids)
    for activity in activities:
        # A run's Activity speaks for the run and a step's for the step: the status the engine
        # keeps, so the timeline says what the console says (one vocabulary, console/status.py).
        if activity.kind == "run" and activity.run:
            activity.shown_status = activity.run.status
        elif activity.kind == "node" and (activity.run_id, activity.node_key) in step_status:
            activity.shown_status = step_status[(activity.run_id, activity.node_key)]
        else:
            activity.shown_status = activity.status
    context = {"membership": membership, "conversation": conversation, "activities": activities,
               "developer": developer, "waits": waits_for_runs(run_ids), "totals": conversation_totals(conversation)}
    if developer:
        filters = FrameFilters.from_query(request.GET)
        # One bounded page per Activity: the query count depends on the number of
        # Activities, never on how many frames each one holds.
        for activity in activities:
            page = frames_page(activity, filters=filters)
            activity.rows = waterfall_rows(activity, page.frames)
            activity.next_cursor = page.next_cursor
        if filters.active:
            # A filter hides what does not match: an Activity with no matching frame goes too.
            hidden = sum(1 for a in activities if not a.rows)
            activities = [a for a in activities if a.rows]
            context.update(activities=activities, hidden_activities=hidden)
        context.update(filters=filters, filter_query=filters.as_query(), tools=frame_tools_for(conversation),
                       kinds=Frame.Kind.choices, levels=Frame.Level.choices,
                       provenance=provenance_for_runs(run_ids), replayable_runs=run_ids)
    else:
        # Business users read what happened in plain words: the frames' summaries
        # (written to be safe for them), a few per Activity, never a payload.
        for activity in activities:
            activity.outcomes = [f.summary_shown for f in frames_page(activity, limit=BUSINESS_FRAMES,
                                                                      filters=BUSINESS_FILTER).frames
                                 if f.summary or f.summary_words]
    return render(request, "timeline/timeline.html", context)


@login_required
@require_GET
def activity_frames_fragment(request: HttpRequest, activity_id: int) -> HttpResponse:
    """The next page of an Activity's frames ("load more"), developers only."""
    membership = membership_for_user(request.user)
    activity = activity_get_for(membership, activity_id)
    _developer_only(membership)
    filters = FrameFilters.from_query(request.GET)
    page = frames_page(activity, after=request.GET.get("after"), filters=filters)
    activity.rows = waterfall_rows(activity, page.frames)
    activity.next_cursor = page.next_cursor
    return render(request, "timeline/timeline.html#frame-rows",
                  {"a": activity, "filter_query": filters.as_query(), "developer": True})


@login_required
@require_GET
def frame_payload_fragment(request: HttpRequest, frame_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    payload = frame_payload_get_for(membership, frame_id)
    text = json.dumps(payload.data, indent=2, ensure_ascii=False, default=str) if payload else ""
    return render(request, "timeline/timeline.html#payload", {"payload_json": text, "frame_id": frame_id})
