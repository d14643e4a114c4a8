"""Replays in the admin: what each replay of a run found, kept after its sandbox is deleted.
Read-only, scoped to the member's tenant (see tenants/admin.py)."""
from django.contrib import admin
from django.utils.translation import gettext_lazy

from tenants.admin import TenantScopedAdmin, admin_link

from .models import ReplayResult


@admin.register(ReplayResult)
class ReplayResultAdmin(TenantScopedAdmin):
    list_display = ("id", "run_link", "status", "identical", "requested_by", "created_at", "sandbox_deleted_at")
    list_filter = ("status", "identical")
    search_fields = ("=run__id",)
    search_help_text = gettext_lazy("Search by run id.")
    readonly_fields = ("id", "run_link", "status", "identical", "differences", "recorded", "replayed", "requested_by",
                       "sandbox_slug", "sandbox_run_id", "created_at", "sandbox_deleted_at")
    fields = readonly_fields
    ordering = ("-created_at",)

    @admin.display(description=gettext_lazy("run"))
    def run_link(self, result: ReplayResult):
        return admin_link(result.run, result.run_id)
