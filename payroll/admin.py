from django.contrib import admin

from .models import (
    CityRulePeriod,
    Employee,
    GroupItem,
    IdempotencyRecord,
    PayrollGroup,
    PayrollTemplate,
    Snapshot,
    TemplateItem,
)


class TemplateItemInline(admin.TabularInline):
    model = TemplateItem
    extra = 0


@admin.register(PayrollTemplate)
class PayrollTemplateAdmin(admin.ModelAdmin):
    list_display = ["code", "version", "name", "name_zh", "region", "pay_frequency", "currency"]
    list_filter = ["region", "pay_frequency"]
    inlines = [TemplateItemInline]


class GroupItemInline(admin.TabularInline):
    model = GroupItem
    extra = 0


@admin.register(PayrollGroup)
class PayrollGroupAdmin(admin.ModelAdmin):
    list_display = ["name", "tenant", "template", "template_version", "created_at"]
    list_filter = ["tenant"]
    inlines = [GroupItemInline]


@admin.register(Employee)
class EmployeeAdmin(admin.ModelAdmin):
    list_display = ["employee_no", "name", "tenant", "department", "location", "group"]
    list_filter = ["tenant", "location", "department"]


@admin.register(Snapshot)
class SnapshotAdmin(admin.ModelAdmin):
    list_display = ["label", "tenant", "checksum", "created_at"]
    list_filter = ["tenant"]


@admin.register(IdempotencyRecord)
class IdempotencyRecordAdmin(admin.ModelAdmin):
    list_display = ["operation", "key", "tenant", "state", "response_status", "expires_at", "created_at"]
    list_filter = ["tenant", "operation", "state"]


@admin.register(CityRulePeriod)
class CityRulePeriodAdmin(admin.ModelAdmin):
    """Read-only here: a change goes through the rules page (services.city_rule_period_change),
    which validates the figures as a look-up does and records who changed them, compare-and-set."""

    list_display = ["city", "name", "effective_from", "effective_to", "verified", "updated_by", "updated_at"]
    list_filter = ["city", "verified"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
