"""The HR system of record in the admin: read-only, each member sees their tenant."""
from django.contrib import admin

from tenants.admin import ReadOnlyInline, TenantScopedAdmin

from .models import Candidate, IdempotencyRecord, Match, OutboxEvent, Tan, TanTransition


class TransitionInline(ReadOnlyInline):
    model = TanTransition
    fields = readonly_fields = ["from_status", "to_status", "actor", "at"]


class MatchInline(ReadOnlyInline):
    model = Match
    fields = readonly_fields = ["rank", "candidate", "score", "explanation", "run_id"]


@admin.register(Tan)
class TanAdmin(TenantScopedAdmin):
    list_display = ["id", "title", "location", "status", "approved_by", "approved_at"]
    list_filter = ["status"]
    inlines = [TransitionInline, MatchInline]


@admin.register(Candidate)
class CandidateAdmin(TenantScopedAdmin):
    list_display = ["name", "name_zh", "location", "seniority"]


@admin.register(Match)
class MatchAdmin(TenantScopedAdmin):
    list_display = ["tan", "rank", "candidate", "score", "run_id", "created_at"]


@admin.register(OutboxEvent)
class OutboxEventAdmin(TenantScopedAdmin):
    list_display = ["id", "type", "tan", "actor", "created_at", "consumed_at", "outcome"]


@admin.register(IdempotencyRecord)
class IdempotencyRecordAdmin(TenantScopedAdmin):
    list_display = ["operation", "key", "state", "response_status", "created_at"]
