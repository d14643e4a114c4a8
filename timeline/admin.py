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
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from tenants.admin import TenantScopedAdmin, admin_link

from .models import Activity, Event, Frame, FramePayload
from .shown import activity_title_shown, frame_name_shown, status_shown

FRAMES_SHOWN = 500  # an Activity may hold 20,000 frames: the admin shows a bounded page


# --- the timeline --------------------------------------------------------------------------------


def frames_waterfall(activity: Activity) -> SafeString:
    """Frames in order, each a bar placed on the activity's time axis."""
    frames = list(Frame.objects.filter(activity=activity).select_related("payload")
                  .order_by("started_at", "id")[:FRAMES_SHOWN])
    if not frames:
        return format_html('<p class="help">{}</p>', _("No frames recorded."))
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
            '<tr data-frame="{}"><td>{}</td><td>{}</td><td><strong>{}</strong>{}</td><td>{}</td>'
            '<td class="keel-bar-cell"><svg class="keel-bar" viewBox="0 0 100 10" preserveAspectRatio="none" '
            'role="img"><title>+{} ms · {} ms</title><rect class="keel-bar-{}" x="{}" width="{}" height="10">'
            '</rect></svg></td><td class="keel-num">{} ms</td><td class="keel-num">{}</td>'
            '<td>{}{}</td></tr>',
            frame.id, i, frame.get_kind_display(), frame_name_shown(frame.name),
            format_html(' · {} <a href="{}?q={}">{}</a>', _("call"), reverse("admin:workflows_toolcall_changelist"),
                        frame.gen_ai_tool_call_id, frame.gen_ai_tool_call_id) if frame.gen_ai_tool_call_id else "",
            frame.get_status_display(), f"{offset_ms:.0f}", f"{frame.latency_ms:.1f}", tone,
            f"{bar_left:.2f}", f"{min(width, 100 - bar_left):.2f}", f"{frame.latency_ms:.1f}", tokens or "",
            frame.summary_shown,
            format_html('<details><summary>{}</summary><pre class="keel-payload">{}</pre></details>',
                        _("payload"), _json(payload.data)) if payload is not None else "",
        ))
    total = Frame.objects.filter(activity=activity).count()
    note = (format_html('<p class="help">{}</p>', _("Showing the first %(shown)s of %(total)s frames.")
                        % {"shown": FRAMES_SHOWN, "total": total}) if total > FRAMES_SHOWN else "")
    return format_html(
        '<table class="keel-waterfall" data-testid="frames-waterfall"><thead><tr><th>#</th><th>{}</th><th>{}</th>'
        '<th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr></thead>'
        '<tbody>{}</tbody></table>{}',
        _("kind"), _("name"), _("status"), _("waterfall (%(ms)s ms)") % {"ms": f"{span_ms:.0f}"}, _("latency"),
        _("tokens"), _("summary"), mark_safe("".join(rows)), note)


def _json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, default=str)


class ActivityStatusFilter(admin.SimpleListFilter):
    """An Activity's status, named as the console names it (a run's, a step's or a turn's)."""

    title = gettext_lazy("status")
    parameter_name = "status"

    def lookups(self, request, model_admin):
        # The member's tenant's activities, without the list's frame count (no join for a filter's choices).
        scoped = TenantScopedAdmin.get_queryset(model_admin, request)
        statuses = scoped.order_by().values_list("status", flat=True).distinct()
        return [(status, status_shown(status)) for status in sorted(statuses)]

    def queryset(self, request, queryset):
        return queryset.filter(status=self.value()) if self.value() else queryset


@admin.register(Activity)
class ActivityAdmin(TenantScopedAdmin):
    tenant_path = "conversation__tenant_id"
    list_display = ["started_at", "kind", "title_shown", "status_text", "run_link", "node_key_code", "frames_total"]
    list_filter = ["kind", ActivityStatusFilter]
    search_fields = ["title", "node_key", "run__id__exact", "frames__gen_ai_tool_name",
                     "=frames__gen_ai_tool_call_id", "=run__coordinates__key"]
    search_help_text = gettext_lazy("Search by run id, tool name, tool call id, state key (e.g. template_id) or title.")
    fieldsets = [
        (None, {"fields": ["title_shown", ("kind", "status_text", "node_key_code"), "summary_text",
                           ("run_link", "conversation_ref"), ("intent_code", "route_code"),
                           ("started_at", "ended_at")]}),
        (gettext_lazy("Timeline"), {"fields": ["timeline"], "description": gettext_lazy(
            "Every frame of this activity in order; the bar shows when it started and how long it took on the "
            "activity's time axis.")}),
    ]
    readonly_fields = ["kind", "title_shown", "summary_text", "status_text", "intent_code", "route_code", "run_link",
                       "node_key_code", "conversation_ref", "started_at", "ended_at", "timeline"]
    ordering = ["-started_at"]

    class Media:
        css = {"all": ["keel/admin.css"]}  # the waterfall's layout and colours (no inline styles: the CSP)

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("run").annotate(frame_total=Count("frames"))

    @admin.display(description=gettext_lazy("title"), ordering="title")
    def title_shown(self, activity: Activity) -> str:
        return activity_title_shown(activity)  # a step by its blueprint's title, in the reader's language

    @admin.display(description=gettext_lazy("status"), ordering="status")
    def status_text(self, activity: Activity) -> str:
        return status_shown(activity.status)

    @admin.display(description=gettext_lazy("step key"), ordering="node_key")
    def node_key_code(self, activity: Activity):
        return format_html("<code>{}</code>", activity.node_key) if activity.node_key else "—"

    @admin.display(description=gettext_lazy("intent"))
    def intent_code(self, activity: Activity):
        return format_html("<code>{}</code>", activity.intent) if activity.intent else "—"

    @admin.display(description=gettext_lazy("route"))
    def route_code(self, activity: Activity):
        return format_html("<code>{}</code>", activity.route) if activity.route else "—"

    @admin.display(description=gettext_lazy("conversation id"))
    def conversation_ref(self, activity: Activity):
        return format_html("<code>{}</code>", activity.conversation_id)

    @admin.display(description=gettext_lazy("run"))
    def run_link(self, activity: Activity):
        return admin_link(activity.run, activity.run_id) if activity.run_id else "—"

    @admin.display(description=gettext_lazy("summary"))
    def summary_text(self, activity: Activity) -> str:
        return activity.summary_shown  # in the reader's language (stored as words)

    @admin.display(description=gettext_lazy("frames"), ordering="frame_total")
    def frames_total(self, activity: Activity) -> int:
        return activity.frame_total

    @admin.display(description=gettext_lazy("frames, in order"))
    def timeline(self, activity: Activity) -> SafeString:
        return frames_waterfall(activity)


@admin.register(Frame)
class FrameAdmin(TenantScopedAdmin):
    tenant_path = "activity__conversation__tenant_id"
    list_display = ["started_at", "kind", "name_shown", "status", "latency_ms", "tool_name_code", "gen_ai_tool_call_id",
                    "activity_link"]
    list_filter = ["kind", "status", "level"]
    search_fields = ["name", "gen_ai_tool_name", "=gen_ai_tool_call_id", "activity__run__id__exact"]
    search_help_text = gettext_lazy("Search by tool name, tool call id or run id.")
    exclude = ["activity", "parent"]
    readonly_fields = ["activity_link", "name_shown", "summary_text", "payload_json"]
    ordering = ["-started_at"]

    def get_readonly_fields(self, request, obj=None):
        # Every column as it is stored, but the name and the summary as the reader reads them.
        stored = [f.name for f in Frame._meta.fields
                  if f.name not in ("activity", "parent", "name", "summary", "summary_words")]
        return stored + self.readonly_fields

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("activity", "activity__run")

    @admin.display(description=gettext_lazy("name"), ordering="name")
    def name_shown(self, frame: Frame) -> SafeString:
        return frame_name_shown(frame.name)  # the sentence in the reader's language, its codes as code

    @admin.display(description=gettext_lazy("tool name"), ordering="gen_ai_tool_name")
    def tool_name_code(self, frame: Frame):
        return format_html("<code>{}</code>", frame.gen_ai_tool_name) if frame.gen_ai_tool_name else "—"

    @admin.display(description=gettext_lazy("summary"))
    def summary_text(self, frame: Frame) -> str:
        return frame.summary_shown

    @admin.display(description=gettext_lazy("activity"))
    def activity_link(self, frame: Frame):
        return admin_link(frame.activity, activity_title_shown(frame.activity))

    @admin.display(description=gettext_lazy("payload"))
    def payload_json(self, frame: Frame):
        payload = FramePayload.objects.filter(frame=frame).first()
        return format_html("<pre>{}</pre>", _json(payload.data)) if payload else "—"


@admin.register(Event)
class EventAdmin(TenantScopedAdmin):
    tenant_path = "conversation__tenant_id"
    list_display = ["conversation_ref", "seq", "type_code", "run_ref", "created_at"]
    list_filter = ["type"]
    search_fields = ["run__id__exact", "conversation__id__exact", "type"]
    search_help_text = gettext_lazy("Search by run id, conversation id or event type.")
    readonly_fields = ["conversation_ref", "seq", "type_code", "run_ref", "data", "created_at"]
    fields = readonly_fields
    ordering = ["-created_at", "-seq"]

    @admin.display(description=gettext_lazy("conversation id"), ordering="conversation_id")
    def conversation_ref(self, event: Event):
        return format_html("<code>{}</code>", event.conversation_id)

    @admin.display(description=gettext_lazy("type"), ordering="type")
    def type_code(self, event: Event):
        return format_html("<code>{}</code>", event.type)

    @admin.display(description=gettext_lazy("run id"), ordering="run_id")
    def run_ref(self, event: Event):
        return format_html("<code>{}</code>", event.run_id) if event.run_id else "—"
