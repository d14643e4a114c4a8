"""The whole-tenant restore: an admin asks, the run shows exactly which groups go and come
back, a second person approves, and the restore writes only if the tenant is as they saw it."""
from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_noop

from config.api import Conflict
from config.words import words
from workflows.tools import Acceptance, Measure, Tool, ToolBlocked, ToolContext, tool_register

from payroll.agent import previews
from payroll.models import Snapshot
from payroll.records.selectors import configuration_checksum
from payroll.records.services import Actor, snapshot_restore

from .common import ID, retried_when_busy


def inspect_tenant_restore(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """Read the tenant as it is now: the approval of the restore is bound to this checksum."""
    snapshot = Snapshot.objects.filter(id=int(arguments["snapshot_id"]), tenant_id=ctx.tenant_id).first()
    if snapshot is None or snapshot.scope is not None:
        raise ToolBlocked("That is not a whole-tenant snapshot of this tenant; nothing can be restored from it.")
    return {"snapshot_id": str(snapshot.id), "tenant_checksum": configuration_checksum(tenant_id=ctx.tenant_id),
            "receipt_ref": f"payroll/snapshots/{snapshot.id}"}


def _inspect_accept(ctx, arguments, output) -> list[Acceptance]:
    whole = Snapshot.objects.filter(id=int(output["snapshot_id"]), tenant_id=ctx.tenant_id, scope__isnull=True)
    return [Acceptance("the snapshot is a whole-tenant snapshot of this tenant", whole.exists())]


tool_register(Tool(
    name="inspect_tenant_restore",
    description="Read what restoring the whole tenant to a snapshot would delete and bring back.",
    input_schema={"type": "object", "properties": {"snapshot_id": ID}, "required": ["snapshot_id"]},
    output_schema={"type": "object", "properties": {"snapshot_id": ID, "tenant_checksum": {"type": "string"}},
                   "required": ["snapshot_id", "tenant_checksum"]},
    fn=inspect_tenant_restore, produces=["snapshot_id", "tenant_checksum"], accept=_inspect_accept,
    summary=lambda output: words(gettext_noop("Read the tenant's payroll configuration as it is now.")),
))


@retried_when_busy
def restore_tenant_snapshot(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    try:
        receipt = snapshot_restore(actor=Actor.of_agent(ctx), snapshot_id=int(arguments["snapshot_id"]),
                                   tenant_checksum=arguments["tenant_checksum"], idempotency_key=ctx.idempotency_key)
    except Conflict as err:
        if err.code == "configuration_changed":
            raise ToolBlocked(err.message) from None
        raise
    return {"snapshot_id": receipt.body["snapshot_id"], "checksum": receipt.body["checksum"],
            "receipt_ref": f"payroll/snapshots/{receipt.body['snapshot_id']}"}


def _restore_accept(ctx, arguments, output) -> list[Acceptance]:
    snapshot = Snapshot.objects.get(id=int(arguments["snapshot_id"]), tenant_id=ctx.tenant_id)
    return [Acceptance("the tenant's checksum equals the snapshot's",
                       configuration_checksum(tenant_id=ctx.tenant_id) == snapshot.checksum)]


tool_register(Tool(
    name="restore_tenant_snapshot",
    title=gettext_noop("Restore tenant snapshot"),
    description="Restore the whole tenant's payroll configuration to a snapshot (deletes every later group).",
    input_schema={"type": "object", "properties": {"snapshot_id": ID, "tenant_checksum": {"type": "string"}},
                  "required": ["snapshot_id", "tenant_checksum"]},
    output_schema={"type": "object", "properties": {"checksum": {"type": "string"}}, "required": ["checksum"]},
    fn=restore_tenant_snapshot, consumes=["snapshot_id", "tenant_checksum"], side_effects=True, read_only=False,
    needs_approval=True, accept=_restore_accept,
    irreversible="It commits in one transaction and is the run's last step, so nothing is ever left half done; "
                 "undoing it is another whole-tenant restore, with its own approval.",
    summary=lambda output: words(gettext_noop("Restored the whole tenant's payroll configuration to the snapshot.")),
    preview=previews.restore_preview, preconditions_check=previews.restore_preconditions,
    argument_describe=previews.restore_argument, summary_describe=previews.restore_summary,
    # Whoever asked (a tenant admin) may not decide it: the four-eyes rule makes it a
    # second person's call, an approver's or another admin's.
    approval_rule={"roles": ["approver", "admin"], "deadline_seconds": 24 * 3600,
                   "remind_before_seconds": 2 * 3600},
    measures=[Measure("headcount", gettext_noop("Employees moved out of groups"), gettext_noop("people"))],
    milestones={"awaiting_approval": "the whole-tenant restore is waiting for a second person",
                "completed": "the tenant's payroll configuration was restored to the snapshot",
                "blocked": "the restore was refused, or the tenant changed after the approver looked"},
))
