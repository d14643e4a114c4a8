"""The admin timeline (DESIGN.md §1): developers debug runs in the Django admin —
Activities with their frames as a waterfall, search by run, tool, call id and state
key. Access and tenant scoping come from tenants/admin.py."""
from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.db.models import Count
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from tenants.admin import TenantScopedAdmin, admin_link

from .models import Activity, Event, Frame, FramePayload

FRAMES_SHOWN = 500  # an Activity may hold 20,000 frames: the admin shows a bounded page


# --- the timeline --------------------------------------------------------------------------------


def frames_waterfall(activity: Activity) -> SafeString:
    """Frames in order, each a bar placed on the activity's time axis."""
    frames = list(Frame.objects.filter(activity=activity).select_related("payload")
                  .order_by("started_at", "id")[:FRAMES_SHOWN])
    if not frames:
        return mark_safe('<p class="help">No frames recorded.</p>')
    start = min(f.started_at for f in frames)
    end = max((f.ended_at or f.started_at) for f in frames)
    span_ms = max((end - start).total_seconds() * 1000, 1)
    rows = []
    for i, frame in enumerate(frames, 1):
        offset_ms = (frame.started_at - start).total_seconds() * 1000
        left = 100 * offset_ms / span_ms
        width = max(100 * frame.latency_ms / span_ms, 0.4)
        tone = "error" if frame.status == "error" or frame.level == "error" else (
            "waiting" if frame.status == "waiting" else "tool" if frame.kind == "tool_call" else "ok")
        bar_left = min(left, 99.6)
        tokens = frame.gen_ai_usage_input_tokens + frame.gen_ai_usage_output_tokens
        payload = getattr(frame, "payload", None)
        rows.append(format_html(
            '<tr data-frame="{}"><td>{}</td><td><code>{}</code></td><td><strong>{}</strong>{}</td><td>{}</td>'
            '<td class="keel-bar-cell"><svg class="keel-bar" viewBox="0 0 100 10" preserveAspectRatio="none" '
            'role="img"><title>+{} ms · {} ms</title><rect class="keel-bar-{}" x="{}" width="{}" height="10">'
            '</rect></svg></td><td class="keel-num">{} ms</td><td class="keel-num">{}</td>'
            '<td>{}{}</td></tr>',
            frame.id, i, frame.kind, frame.name,
            format_html(' · call <a href="{}?q={}">{}</a>', reverse("admin:workflows_toolcall_changelist"),
                        frame.gen_ai_tool_call_id, frame.gen_ai_tool_call_id) if frame.gen_ai_tool_call_id else "",
            frame.status, f"{offset_ms:.0f}", f"{frame.latency_ms:.1f}", tone,
            f"{bar_left:.2f}", f"{min(width, 100 - bar_left):.2f}", f"{frame.latency_ms:.1f}", tokens or "",
            frame.summary_shown,
            format_html('<details><summary>payload</summary><pre class="keel-payload">{}</pre></details>',
                        _json(payload.data)) if payload is not None else "",
        ))
    total = Frame.objects.filter(activity=activity).count()
    note = (format_html('<p class="help">Showing the first {} of {} frames.</p>', FRAMES_SHOWN, total)
            if total > FRAMES_SHOWN else "")
    return format_html(
        '<table class="keel-waterfall" data-testid="frames-waterfall"><thead><tr><th>#</th><th>kind</th><th>name</th>'
        '<th>status</th><th>waterfall ({} ms)</th><th>latency</th><th>tokens</th><th>summary</th></tr></thead>'
        '<tbody>{}</tbody></table>{}',
        f"{span_ms:.0f}", mark_safe("".join(rows)), note)


def _json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, default=str)


@admin.register(Activity)
class ActivityAdmin(TenantScopedAdmin):
    tenant_path = "conversation__tenant_id"
    list_display = ["started_at", "kind", "title", "status", "run_link", "node_key", "frame_count"]
    list_filter = ["kind", "status"]
    search_fields = ["title", "node_key", "run__id__exact", "frames__gen_ai_tool_name",
                     "=frames__gen_ai_tool_call_id", "=run__coordinates__key"]
    search_help_text = "Search by run id, tool name, tool call id, state key (e.g. template_id) or title."
    fieldsets = [
        (None, {"fields": ["title", ("kind", "status", "node_key"), "summary_text", ("run_link", "conversation_id"),
                           ("intent", "route"), ("started_at", "ended_at")]}),
        ("Timeline", {"fields": ["timeline"], "description": "Every frame of this activity in order; the bar "
                      "shows when it started and how long it took on the activity's time axis."}),
    ]
    readonly_fields = ["kind", "title", "summary_text", "status", "intent", "route", "run_link", "node_key",
                       "conversation_id", "started_at", "ended_at", "timeline"]
    ordering = ["-started_at"]

    class Media:
        css = {"all": ["keel/admin.css"]}  # the waterfall's layout and colours (no inline styles: the CSP)

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("run").annotate(frame_total=Count("frames"))

    @admin.display(description="run")
    def run_link(self, activity: Activity):
        return admin_link(activity.run, activity.run_id) if activity.run_id else "—"

    @admin.display(description="summary")
    def summary_text(self, activity: Activity) -> str:
        return activity.summary_shown  # in the reader's language (stored as words)

    @admin.display(description="frames", ordering="frame_total")
    def frame_count(self, activity: Activity) -> int:
        return activity.frame_total

    @admin.display(description="frames, in order")
    def timeline(self, activity: Activity) -> SafeString:
        return frames_waterfall(activity)


@admin.register(Frame)
class FrameAdmin(TenantScopedAdmin):
    tenant_path = "activity__conversation__tenant_id"
    list_display = ["started_at", "kind", "name", "status", "latency_ms", "gen_ai_tool_name", "gen_ai_tool_call_id",
                    "activity_link"]
    list_filter = ["kind", "status", "level"]
    search_fields = ["name", "gen_ai_tool_name", "=gen_ai_tool_call_id", "activity__run__id__exact"]
    search_help_text = "Search by tool name, tool call id or run id."
    exclude = ["activity", "parent"]
    readonly_fields = ["activity_link", "payload_json"]
    ordering = ["-started_at"]

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in Frame._meta.fields if f.name not in ("activity", "parent")] + self.readonly_fields

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("activity")

    @admin.display(description="activity")
    def activity_link(self, frame: Frame):
        return admin_link(frame.activity, frame.activity.title)

    @admin.display(description="payload")
    def payload_json(self, frame: Frame):
        payload = FramePayload.objects.filter(frame=frame).first()
        return format_html("<pre>{}</pre>", _json(payload.data)) if payload else "—"


@admin.register(Event)
class EventAdmin(TenantScopedAdmin):
    tenant_path = "conversation__tenant_id"
    list_display = ["conversation_id", "seq", "type", "run_id", "created_at"]
    list_filter = ["type"]
    search_fields = ["run__id__exact", "conversation__id__exact", "type"]
    search_help_text = "Search by run id, conversation id or event type."
    readonly_fields = ["conversation_id", "seq", "type", "run_id", "data", "created_at"]
    fields = readonly_fields
    ordering = ["-created_at", "-seq"]
