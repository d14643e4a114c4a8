"""Runs, tool calls and state coordinates in the admin timeline, with the provenance chain of
every coordinate. Read-only, scoped to the member's tenant (see tenants/admin.py)."""
from django.contrib import admin
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from config.words import value_text
from tenants.admin import ReadOnlyInline, TenantScopedAdmin, admin_link

from .cards import rows_html, value_rows
from .models import (
    CoordinateConsumption,
    Node,
    Plan,
    ProvenanceBlock,
    Run,
    StateCoordinate,
    ToolCall,
    Transition,
)
from .provenance import coordinate_chain


class IdColumns:
    """A run's and a call's id as columns, headed in the reader's language (Django heads a
    foreign key's `run_id` "Run id", in English only)."""

    @admin.display(description=gettext_lazy("run id"), ordering="run_id")
    def run_ref(self, obj) -> str:
        return str(obj.run_id) if obj.run_id else "—"

    @admin.display(description=gettext_lazy("call id"), ordering="call_id")
    def call_ref(self, obj) -> str:
        return str(obj.call_id) if obj.call_id else "—"


class NodeInline(ReadOnlyInline):
    model = Node
    fields = ["key", "plan_version", "retired_in", "tool", "depends_on", "status", "attempts", "result_ref",
              "started_at", "finished_at"]
    readonly_fields = fields
    ordering = ["plan_version", "id"]


class PlanInline(ReadOnlyInline):
    model = Plan
    fields = ["version", "reason", "graph", "diff", "created_at"]
    readonly_fields = fields
    show_change_link = False


@admin.register(Run)
class RunAdmin(TenantScopedAdmin):
    list_display = ["id", "blueprint", "status", "plan_version", "created_by", "created_at", "finished_at"]
    list_filter = ["status", "blueprint"]
    search_fields = ["id__exact", "blueprint", "status_reason", "=coordinates__key", "=tool_calls__tool"]
    search_help_text = gettext_lazy("Search by run id, blueprint, tool, state key or status reason.")
    readonly_fields = ["id", "blueprint", "params", "status", "status_reason", "control", "plan_version",
                       "transition_count", "transition_cap", "model_calls", "model_call_cap", "created_by",
                       "created_at", "finished_at", "activity_link"]
    fields = readonly_fields
    inlines = [PlanInline, NodeInline]
    ordering = ["-created_at"]

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("created_by")

    @admin.display(description=gettext_lazy("activity"))
    def activity_link(self, run: Run):
        return admin_link(run.activity, run.activity.title) if run.activity_id else "—"


@admin.register(Node)
class NodeAdmin(IdColumns, TenantScopedAdmin):
    tenant_path = "run__tenant_id"
    list_display = ["key", "run_ref", "plan_version", "retired_in", "tool", "status", "attempts", "started_at"]
    list_filter = ["status", "tool"]
    search_fields = ["run__id__exact", "key", "tool"]
    search_help_text = gettext_lazy("Search by run id, step key or tool.")
    readonly_fields = ["run_link", "key", "goal", "tool", "plan_version", "retired_in", "depends_on", "run_when",
                       "arguments", "acceptance", "status", "status_reason", "attempts", "result_link", "question",
                       "lease_owner", "lease_expires_at", "dispatched_at", "started_at", "finished_at"]
    fields = readonly_fields
    ordering = ["-run__created_at", "plan_version", "id"]

    @admin.display(description=gettext_lazy("run"))
    def run_link(self, node: Node):
        return admin_link(node.run, node.run_id)

    @admin.display(description=gettext_lazy("accepted on call"))
    def result_link(self, node: Node):
        call = ToolCall.objects.filter(id=node.result_ref).first() if node.result_ref.isdigit() else None
        return admin_link(call, _("%(tool)s · call %(id)s") % {"tool": call.tool, "id": call.id}) if call else (
            node.result_ref or "—")


@admin.register(Transition)
class TransitionAdmin(IdColumns, TenantScopedAdmin):
    tenant_path = "run__tenant_id"
    list_display = ["at", "run_ref", "node", "from_status", "to_status", "reason", "worker"]
    list_filter = ["to_status"]
    search_fields = ["run__id__exact", "node__key", "reason"]
    search_help_text = gettext_lazy("Search by run id, step key or reason.")
    readonly_fields = ["run_ref", "node", "from_status", "to_status", "reason", "worker", "at"]
    fields = readonly_fields
    ordering = ["-at", "-id"]

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("node")


@admin.register(Plan)
class PlanAdmin(IdColumns, TenantScopedAdmin):
    tenant_path = "run__tenant_id"
    list_display = ["run_ref", "version", "reason", "created_at"]
    search_fields = ["run__id__exact", "reason"]
    readonly_fields = ["run_ref", "version", "reason", "graph", "created_at"]
    fields = readonly_fields
    ordering = ["-created_at"]


# --- the tool runtime: calls, coordinates, provenance ---------------------------------------

def _call_text(call: ToolCall) -> str:
    return _("%(tool)s · call %(id)s · %(status)s") % {"tool": call.tool, "id": call.id, "status": call.status}


@admin.register(ToolCall)
class ToolCallAdmin(IdColumns, TenantScopedAdmin):
    list_display = ["id", "tool", "status", "run_ref", "node", "latency_ms", "started_at"]
    list_filter = ["status", "tool"]
    search_fields = ["id__exact", "run__id__exact", "tool", "=idempotency_key", "=produced__key",
                     "=consumed__coordinate__key"]
    search_help_text = gettext_lazy(
        "Search by call id, run id, tool, idempotency key or a state key it produced or consumed.")
    readonly_fields = ["id", "run_link", "node", "tool", "status", "error", "idempotency_key", "approval_id",
                       "arguments", "result", "produced_coordinates", "consumed_coordinates", "started_at",
                       "ended_at", "latency_ms"]
    fields = readonly_fields
    ordering = ["-started_at"]

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("node")

    @admin.display(description=gettext_lazy("run"))
    def run_link(self, call: ToolCall):
        return admin_link(call.run, call.run_id)

    @admin.display(description=gettext_lazy("produced"))
    def produced_coordinates(self, call: ToolCall):
        rows = [(admin_link(c, c.key), value_text(c.value)) for c in call.produced.all()]  # never a Python dict
        return format_html_join(mark_safe("<br>"), "{} = <code>{}</code>", rows) or "—"

    @admin.display(description=gettext_lazy("consumed"))
    def consumed_coordinates(self, call: ToolCall):
        links = CoordinateConsumption.objects.filter(call=call).select_related("coordinate", "coordinate__call")
        rows = [(admin_link(link.coordinate, link.coordinate.key), value_text(link.coordinate.value),
                 admin_link(link.coordinate.call, _call_text(link.coordinate.call))) for link in links]
        return format_html_join(mark_safe("<br>"), _("{} = <code>{}</code> from {}"), rows) or "—"


@admin.register(StateCoordinate)
class StateCoordinateAdmin(IdColumns, TenantScopedAdmin):
    list_display = ["key", "value_shown", "producer", "call_ref", "run_ref", "plan_version", "created_at"]
    list_filter = ["key", "producer"]
    search_fields = ["=key", "run__id__exact", "call__id__exact", "producer", "receipt_ref"]
    search_help_text = gettext_lazy("Search by state key, run id, producing call id, producer or receipt.")
    readonly_fields = ["key", "value_rows", "run_link", "plan_version", "producer", "receipt_ref", "created_at",
                       "provenance_chain"]
    fields = readonly_fields
    ordering = ["-created_at"]

    class Media:
        css = {"all": ["keel/admin.css"]}  # the provenance chain's list (no inline styles: the CSP)

    @admin.display(description=gettext_lazy("value"))
    def value_shown(self, coordinate: StateCoordinate) -> str:
        return value_text(coordinate.value)

    @admin.display(description=gettext_lazy("value"))
    def value_rows(self, coordinate: StateCoordinate):
        """The value as the approval card shows one: fields, tables, lists (workflows.cards), never a dict."""
        return format_html('<div class="keel-value" data-testid="coordinate-value">{}</div>',
                           rows_html(value_rows(coordinate.value)))

    @admin.display(description=gettext_lazy("run"))
    def run_link(self, coordinate: StateCoordinate):
        return admin_link(coordinate.run, coordinate.run_id)

    @admin.display(description=gettext_lazy("provenance chain"))
    def provenance_chain(self, coordinate: StateCoordinate):
        consumers = (CoordinateConsumption.objects.filter(coordinate=coordinate).select_related("call", "call__node")
                     .order_by("at"))
        consumer_rows = format_html_join(
            "", '<li data-testid="consumer">{} <span class="help">{} <code>{}</code> · {}</span></li>',
            [(admin_link(link.call, _call_text(link.call)), _("step"), link.call.node.key,
              f"{link.at:%Y-%m-%d %H:%M:%S}") for link in consumers])
        return format_html(
            '<div data-testid="provenance-chain"><p><strong>{}</strong> <span data-testid="producer">{}</span>'
            ' <span class="help">{} <code>{}</code> · {} <code>{}</code></span></p>'
            '<p><strong>{}</strong></p><ul class="keel-consumers">{}</ul>'
            '<p><strong>{}</strong> {}</p>{}</div>',
            _("Produced by"), admin_link(coordinate.call, _call_text(coordinate.call)), _("step"),
            coordinate.call.node.key, _("receipt"), coordinate.receipt_ref, _("Consumed by"),
            consumer_rows or format_html("<li>{}</li>", _("no call has consumed it yet")), _("Comes from"),
            _("(upstream, back to what started the run)"), _upstream_html(coordinate_chain(coordinate)))


def _origin_html(origin: dict):
    if origin["kind"] == "message":
        attachment = origin.get("attachment")
        return format_html('<li data-testid="origin">{} <q data-testid="origin-text">{}</q>{}'
                           ' <span class="help">{}</span></li>',
                           _("the message %(user)s typed:") % {"user": origin["user"]}, origin["text"],
                           format_html(" {}", ngettext("with the attachment %(name)s (%(rows)s row)",
                                                            "with the attachment %(name)s (%(rows)s rows)",
                                                            attachment["rows"])
                                       % {"name": attachment["name"], "rows": attachment["rows"]})
                           if attachment else "", origin["at"])
    return format_html('<li data-testid="origin">{} (<code>{}</code>) <span class="help">{}</span></li>',
                       _("the run started by %(user)s") % {"user": origin["user"]}, origin.get("type", "event"),
                       origin["at"])


def _upstream_html(chain: dict):
    """The chain as nested lists: each coordinate, its producing call, then what that call consumed."""
    inner = format_html_join("", "{}", [(_upstream_html(c),) for c in chain["inputs"]])
    if chain["origin"] is not None:
        inner = _origin_html(chain["origin"])
    value = rows_html(value_rows(chain["value"]))  # as the approval card shows a value, never a dict
    return format_html('<ul class="keel-consumers"><li data-testid="upstream-{}"><code>{}</code>'
                       ' = <span class="keel-value">{}</span> <span class="help">{}</span>{}'
                       '</li></ul>',
                       chain["key"], chain["key"], value,
                       format_html(_("by <code>{}</code> in step <code>{}</code> · call {}"), chain["producer"],
                                   chain["node"], chain["call_id"]),
                       format_html('<ul class="keel-consumers">{}</ul>', inner) if inner else "")


@admin.register(ProvenanceBlock)
class ProvenanceBlockAdmin(IdColumns, TenantScopedAdmin):
    list_display = ["at", "key", "run_ref", "node", "reason"]
    list_filter = ["key"]
    search_fields = ["run__id__exact", "=key", "supplied", "expected"]
    search_help_text = gettext_lazy("Search by run id, state key or the supplied or expected value.")
    readonly_fields = ["at", "run_link", "node", "key", "supplied", "expected", "reason"]
    fields = readonly_fields
    ordering = ["-at"]

    @admin.display(description=gettext_lazy("run"))
    def run_link(self, block: ProvenanceBlock):
        return admin_link(block.run, block.run_id)
