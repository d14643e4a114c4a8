"""The expense system of record in the admin: read-only, each member sees their tenant."""
from django.contrib import admin

from tenants.admin import ReadOnlyInline, TenantScopedAdmin

from .models import ClaimTransition, ExpenseClaim, IdempotencyRecord, Invoice


class InvoiceInline(ReadOnlyInline):
    model = Invoice
    fields = ["filename", "content_type", "size", "checksum", "created_at"]
    readonly_fields = fields


class TransitionInline(ReadOnlyInline):
    model = ClaimTransition
    fields = ["from_status", "to_status", "actor", "approval_id", "reason", "at"]
    readonly_fields = fields


@admin.register(ExpenseClaim)
class ExpenseClaimAdmin(TenantScopedAdmin):
    list_display = ["id", "claimant", "category", "city", "start_date", "nights", "amount", "currency", "status",
                    "policy_verdict"]
    list_filter = ["status", "category", "policy_verdict"]
    inlines = [InvoiceInline, TransitionInline]


@admin.register(Invoice)
class InvoiceAdmin(TenantScopedAdmin):
    list_display = ["filename", "claim", "content_type", "size", "checksum", "created_at"]
    exclude = ["content"]


@admin.register(IdempotencyRecord)
class IdempotencyRecordAdmin(TenantScopedAdmin):
    list_display = ["operation", "key", "state", "response_status", "created_at"]
    list_filter = ["operation"]
