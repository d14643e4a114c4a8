from django.contrib import admin

from .models import PolicyAnswerCache, PolicyDocument, PolicyLine, PolicyVersion


class PolicyLineInline(admin.TabularInline):
    model = PolicyLine
    extra = 0


@admin.register(PolicyDocument)
class PolicyDocumentAdmin(admin.ModelAdmin):
    list_display = ["title", "topic", "tenant", "authority"]
    list_filter = ["tenant", "topic"]


@admin.register(PolicyVersion)
class PolicyVersionAdmin(admin.ModelAdmin):
    list_display = ["label", "document", "effective_from", "effective_to", "replaces"]
    list_filter = ["document__tenant"]
    inlines = [PolicyLineInline]


@admin.register(PolicyAnswerCache)
class PolicyAnswerCacheAdmin(admin.ModelAdmin):
    list_display = ["question", "on_date", "topic", "lang", "tenant", "corpus_version", "hits", "created_at"]
    list_filter = ["tenant", "topic", "lang"]
    readonly_fields = [f.name for f in PolicyAnswerCache._meta.fields]
