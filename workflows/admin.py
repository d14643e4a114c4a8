"""Runs in the admin timeline: read-only, scoped to the member's tenant (see timeline/admin.py)."""
from django.contrib import admin

from timeline.admin import ReadOnlyInline, TenantScopedAdmin, admin_link

from .models import Node, Plan, Run, Transition


class NodeInline(ReadOnlyInline):
    model = Node
    fields = ["key", "plan_version", "retired_in", "tool", "depends_on", "status", "attempts", "result_ref",
              "started_at", "finished_at"]
    readonly_fields = fields
    ordering = ["plan_version", "id"]


class PlanInline(ReadOnlyInline):
    model = Plan
    fields = ["version", "reason", "graph", "created_at"]
    readonly_fields = fields
    show_change_link = False


@admin.register(Run)
class RunAdmin(TenantScopedAdmin):
    list_display = ["id", "blueprint", "status", "plan_version", "created_by", "created_at", "finished_at"]
    list_filter = ["status", "blueprint"]
    search_fields = ["id__exact", "blueprint", "status_reason", "=coordinates__key", "=tool_calls__tool"]
    search_help_text = "Search by run id, blueprint, tool, state key or status reason."
    readonly_fields = ["id", "blueprint", "params", "status", "status_reason", "control", "plan_version",
                       "transition_count", "transition_cap", "model_calls", "model_call_cap", "created_by",
                       "created_at", "finished_at", "activity_link"]
    fields = readonly_fields
    inlines = [PlanInline, NodeInline]
    ordering = ["-created_at"]

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("created_by")

    @admin.display(description="activity")
    def activity_link(self, run: Run):
        return admin_link(run.activity, run.activity.title) if run.activity_id else "—"


@admin.register(Node)
class NodeAdmin(TenantScopedAdmin):
    tenant_path = "run__tenant_id"
    list_display = ["key", "run_id", "plan_version", "retired_in", "tool", "status", "attempts", "started_at"]
    list_filter = ["status", "tool"]
    search_fields = ["run__id__exact", "key", "tool"]
    search_help_text = "Search by run id, step key or tool."
    readonly_fields = ["run_link", "key", "goal", "tool", "plan_version", "retired_in", "depends_on", "run_when",
                       "arguments", "acceptance", "status", "status_reason", "attempts", "result_link", "question",
                       "lease_owner", "lease_expires_at", "dispatched_at", "started_at", "finished_at"]
    fields = readonly_fields
    ordering = ["-run__created_at", "plan_version", "id"]

    @admin.display(description="run")
    def run_link(self, node: Node):
        return admin_link(node.run, node.run_id)

    @admin.display(description="accepted on call")
    def result_link(self, node: Node):
        from agents.models import ToolCall

        call = ToolCall.objects.filter(id=node.result_ref).first() if node.result_ref.isdigit() else None
        return admin_link(call, f"{call.tool} · call {call.id}") if call else (node.result_ref or "—")


@admin.register(Transition)
class TransitionAdmin(TenantScopedAdmin):
    tenant_path = "run__tenant_id"
    list_display = ["at", "run_id", "node", "from_status", "to_status", "reason", "worker"]
    list_filter = ["to_status"]
    search_fields = ["run__id__exact", "node__key", "reason"]
    search_help_text = "Search by run id, step key or reason."
    readonly_fields = ["run_id", "node", "from_status", "to_status", "reason", "worker", "at"]
    fields = readonly_fields
    ordering = ["-at", "-id"]

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("node")


@admin.register(Plan)
class PlanAdmin(TenantScopedAdmin):
    tenant_path = "run__tenant_id"
    list_display = ["run_id", "version", "reason", "created_at"]
    search_fields = ["run__id__exact", "reason"]
    readonly_fields = ["run_id", "version", "reason", "graph", "created_at"]
    fields = readonly_fields
    ordering = ["-created_at"]
