"""Approvals in the admin timeline: read-only, scoped to the member's tenant (see tenants/admin.py)."""
from django.contrib import admin
from django.utils.translation import gettext_lazy

from tenants.admin import ReadOnlyInline, TenantScopedAdmin, admin_link
from workflows.admin import IdColumns

from .models import ApprovalDecision, ApprovalRequest


class DecisionInline(ReadOnlyInline):
    model = ApprovalDecision
    fields = ["at", "user", "verdict", "accepted", "comment"]
    readonly_fields = fields
    show_change_link = False


@admin.register(ApprovalRequest)
class ApprovalRequestAdmin(IdColumns, TenantScopedAdmin):
    list_display = ["id", "tool", "status", "run_ref", "requested_by", "decided_by", "created_at", "deadline"]
    list_filter = ["status", "tool"]
    search_fields = ["id__exact", "run__id__exact", "tool", "summary", "arguments_hash"]
    search_help_text = gettext_lazy("Search by approval id, run id, tool, summary or argument hash.")
    readonly_fields = ["id", "run_link", "node", "tool", "status", "summary", "arguments", "arguments_hash", "diff",
                       "deadline", "requested_by", "decided_by", "decided_at", "comment", "replan", "superseded_by",
                       "created_at"]
    fields = readonly_fields
    inlines = [DecisionInline]
    ordering = ["-created_at"]

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("requested_by", "decided_by", "node")

    @admin.display(description=gettext_lazy("run"))
    def run_link(self, approval: ApprovalRequest):
        return admin_link(approval.run, approval.run_id)
