"""The steps that write the system of record: reserve the run's records and snapshot exactly
those, import the template (after its approval), verify the import, assign the employees, and
the compensation that undoes this run's effects by their receipts."""
from __future__ import annotations

from typing import Any

from django.urls import reverse
from django.utils.translation import gettext_noop

from config.api import DomainError
from config.names import char_invisible
from config.words import Stored, ngettext_noop, sentences, words
from workflows.faults import fault_flag
from workflows.models import Run, ToolCall
from workflows.pipeline import coordinate_resolve
from workflows.tools import (
    Acceptance,
    MONEY,
    Measure,
    NeedsInput,
    Replacement,
    Tool,
    ToolBlocked,
    ToolContext,
    ToolError,
    tool_register,
)

from payroll.agent import previews
from payroll.agent.proposals import with_salaries
from payroll.models import (
    ClaimKind,
    Employee,
    PayrollGroup,
    PayrollTemplate,
    RecordClaim,
    Snapshot,
    TemplateItem,
    group_name_key,
)
from payroll.reading.matching import template_next_best
from payroll.reading.requirements import asked_in_chinese
from payroll.records.selectors import scope_checksum
from payroll.records.trial import city_of_params
from payroll.records.services import (
    Actor,
    EmployeeHeld,
    NameTaken,
    ScopeChanged,
    employee_pay_record,
    employees_assign,
    employees_create,
    group_name_normalised,
    records_claim,
    run_effects_undo,
    snapshot_create,
    template_import,
)

from .common import ID, retried_when_busy


def _scope_employee_ids(ctx: ToolContext, arguments: dict[str, Any]) -> list[int]:
    # From interpret's coordinate when the run has one (the attachment the user sent).
    ids = arguments["employee_ids"] if "employee_ids" in arguments else ctx.params.get("employee_ids")
    return [int(e) for e in ids or []]


RETRY_ANSWERS = {"retry", "try again", "重试", "再试一次"}
CALLED_INSTEAD = words(gettext_noop("What should the new payroll group be called instead?"))


def _employee_held_question(ctx: ToolContext, held: EmployeeHeld) -> NeedsInput:
    """Another run is assigning one of this run's employees: said in words (each reader's
    language), with a link to that run, and what to do — try again once it has finished, or
    cancel this run."""
    zh = asked_in_chinese(ctx.params)
    who, other = held.extra.get("who") or held.extra.get("employee"), held.extra.get("run") or ""
    text = words(gettext_noop("Employee %(who)s is being assigned by another run (run %(run)s). Reply “retry” once "
                              "that run has finished, or “cancel” to cancel this one."), who=who, run=other)
    options = [{"label": "重试" if zh else "Retry", "label_en": "Retry", "label_zh": "重试", "answer": "retry"}]
    link = {"href": reverse("run", args=[int(other)]), "label": words(gettext_noop("Open the other run"))} if other else {}
    return NeedsInput(text, options, link=link)


@retried_when_busy
def snapshot_payroll_groups(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """Reserve the new group's name and the employees the run will assign, then freeze
    exactly those records. A collision is found here, at planning time, before any
    approver is asked: the user is asked for another name, or told who holds an employee."""
    answer = (arguments.get("answer") or "").strip()
    if answer.lower() in RETRY_ANSWERS:  # "try again" after another run held an employee: not a name
        answer = ""
    name = (answer or arguments.get("requested_group_name") or arguments.get("group_name") or "").strip()
    try:
        name = group_name_normalised(name)  # as it will be stored: the scope, the label and the import use it
    except DomainError as refused:  # empty, or hiding an invisible character: asked like a taken name
        readable = " ".join("".join(ch for ch in name if not char_invisible(ch)).split())
        raise NeedsInput(sentences(refused.words, CALLED_INSTEAD),
                         [{"label": readable, "answer": readable}] if readable else []) from None
    employee_ids = _scope_employee_ids(ctx, arguments)
    run = Run.objects.select_related("created_by").get(id=ctx.run_id)
    try:
        records_claim(tenant_id=ctx.tenant_id, run_id=ctx.run_id, holder=f"run {ctx.run_id} of {run.created_by}",
                      group_name=name, employee_ids=employee_ids)
    except NameTaken as taken:
        raise NeedsInput(sentences(taken.words, CALLED_INSTEAD),
                         [{"label": f"{name} (2)", "answer": f"{name} (2)"}]) from None
    except EmployeeHeld as held:
        raise _employee_held_question(ctx, held) from None
    receipt = snapshot_create(actor=Actor.of_agent(ctx), label=f"before run {ctx.run_id}: “{name}”",
                              idempotency_key=ctx.idempotency_key,
                              scope={"group_name": name, "employee_ids": employee_ids})
    return {"snapshot_id": receipt.body["snapshot_id"], "checksum": receipt.body["checksum"], "group_name": name,
            "receipt_ref": f"payroll/snapshots/{receipt.body['snapshot_id']}"}


def _snapshot_accept(ctx, arguments, output) -> list[Acceptance]:

    snapshot = Snapshot.objects.filter(id=int(output["snapshot_id"]), tenant_id=ctx.tenant_id).first()
    reserved = RecordClaim.objects.filter(tenant_id=ctx.tenant_id, kind=ClaimKind.GROUP_NAME,
                                          key=group_name_key(output["group_name"]), run_id=ctx.run_id).exists()
    return [Acceptance("the snapshot exists in this tenant", snapshot is not None),
            Acceptance("its checksum matches the receipt", bool(snapshot and snapshot.checksum == output["checksum"])),
            Acceptance("the group name is reserved for this run", reserved)]


tool_register(Tool(
    name="snapshot_payroll_groups",
    description="Reserve the new group's name and the employees to assign for this run, and snapshot exactly "
                "those records (never the whole tenant).",
    input_schema={"type": "object", "properties": {"group_name": {"type": "string", "minLength": 1},
                                                   "requested_group_name": {"type": "string"},
                                                   "employee_ids": {"type": "array", "items": ID},
                                                   "answer": {"type": "string"}}},
    output_schema={"type": "object", "properties": {"snapshot_id": ID, "checksum": {"type": "string"},
                                                    "group_name": {"type": "string", "minLength": 1}},
                   "required": ["snapshot_id", "checksum", "group_name"]},
    fn=snapshot_payroll_groups, produces=["snapshot_id", "group_name"], side_effects=True, accept=_snapshot_accept,
    consumes_optional=["requested_group_name", "employee_ids"],
    summary=lambda output: words(gettext_noop("Reserved the name “%(name)s” and took a snapshot of what the run "
                                              "touches."), name=output["group_name"]),
    release=previews.scope_release,
    milestones={"awaiting_input": "the group name is taken: waiting for the user to choose another",
                "completed": "the group name is reserved and a snapshot of what the run touches was taken"},
))


@retried_when_busy
def import_template(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:

    receipt = template_import(actor=Actor.of_agent(ctx), template_id=int(arguments["template_id"]),
                              group_name=arguments["group_name"], idempotency_key=ctx.idempotency_key,
                              city=city_of_params(ctx.params))
    body = receipt.body
    return {"group_id": body["group_id"], "items_created": body["items_created"],
            "template_id": body["template_id"], "template_version": body["template_version"],
            "receipt_ref": f"payroll/groups/{body['group_id']}"}


def _import_accept(ctx, arguments, output) -> list[Acceptance]:

    group = PayrollGroup.objects.filter(id=int(output["group_id"]), tenant_id=ctx.tenant_id).first()
    expected = TemplateItem.objects.filter(template_id=int(arguments["template_id"])).count()
    actual = group.items.count() if group else 0
    return [Acceptance("the group exists", group is not None),
            Acceptance("it has the template's item count", actual == expected,
                       words(gettext_noop("%(done)s of %(total)s items"), done=actual, total=expected)),
            Acceptance("it was built from the approved template",
                       bool(group and str(group.template_id) == str(arguments["template_id"])))]


tool_register(Tool(
    name="import_template",
    title=gettext_noop("Import template"),
    description="Import the matched template into a new payroll group.",
    input_schema={"type": "object", "properties": {"template_id": ID, "snapshot_id": ID,
                                                   "group_name": {"type": "string", "minLength": 1},
                                                   "salaries": {"type": "array"}},
                  "required": ["template_id", "snapshot_id", "group_name"]},
    output_schema={"type": "object", "properties": {"group_id": ID, "items_created": {"type": "integer"}},
                   "required": ["group_id", "items_created"]},
    # The name comes from the step that reserved it, by provenance, never retyped.
    fn=import_template, produces=["group_id"], consumes=["template_id", "snapshot_id", "group_name"],
    # The salaries answered before the approval: on its card, bound by its arguments.
    consumes_optional=["salaries"],
    side_effects=True, read_only=False, needs_approval=True, compensation="undo_run_effects", accept=_import_accept,
    summary=lambda output: words(ngettext_noop("Imported the template: %(count)s payroll item created.",
                                                       "Imported the template: %(count)s payroll items created.", "count"),
                                 count=output["items_created"]),
    preview=previews.import_preview, preconditions_check=previews.import_preconditions,
    argument_describe=previews.import_argument, summary_describe=previews.import_summary, rejection_replan=previews.import_rejection_replan,
    experience=previews.import_experience, effects_count=previews.import_effects,
    # Any approver, but a group reaching more than 50 employees or 500,000 CNY of monthly
    # gross is an admin's call (a template in another currency is too: it cannot be compared).
    approval_rule={"roles": ["approver", "admin"], "deadline_seconds": 24 * 3600,
                   "remind_before_seconds": 2 * 3600, "limits": {"headcount": 50, "monthly_gross": "500000"},
                   "above_limit_role": "admin"},
    measures=[Measure("headcount", gettext_noop("Headcount"), gettext_noop("people")),
              Measure("monthly_gross", gettext_noop("Monthly gross"), MONEY, currency="CNY")],
    milestones={"awaiting_approval": "the import is waiting for an approver",
                "completed": "the template was imported into the new group", "failed": "the import failed",
                "blocked": "the import was refused or timed out"},
))


def verify_import(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:

    group = (PayrollGroup.objects.select_related("template")
             .filter(id=int(arguments["group_id"]), tenant_id=ctx.tenant_id).first())
    if group is None:
        raise ToolError("The imported group is missing.")
    items = group.items.count()
    # The recovery tests' fault hook (KEEL_FAULTS="verify_import.item_unseen#<template code>=on"):
    # the verification finds one item short, so its criterion fails.
    tags = (*[v for v in ctx.params.values() if isinstance(v, str)], group.template.code if group.template else "")
    if fault_flag("verify_import.item_unseen", tags):
        items -= 1
    return {"group_name": group.name, "items": items,
            "template_items": group.template.items.count() if group.template_id else 0,
            "template_id": str(group.template_id or ""), "receipt_ref": f"payroll/groups/{group.id}"}


def _verify_undo_replan(tenant_id: int, run_id: int, params: dict[str, Any], output: dict[str, Any] | None,
                        not_met: list[str]) -> Replacement | None:
    """After a verification that failed and whose import was undone: try the template the
    match ranks next (the tried ones excluded). A verify that errored is not replanned."""
    if output is None or not not_met or not output.get("template_id"):
        return None
    tried = [str(t) for t in params.get("excluded_templates") or []] + [str(output["template_id"])]
    coordinate = coordinate_resolve(run_id=run_id, tenant_id=tenant_id, key="requirements")
    requirements = dict(coordinate.value) if coordinate else dict(params.get("requirements") or {})
    left = [t for t in PayrollTemplate.objects.prefetch_related("items").order_by("code", "-version")
            if str(t.id) not in tried]
    chosen = template_next_best(requirements, left)
    failed = "; ".join(not_met)
    if chosen is None:
        return Replacement(None, f"verification failed: {failed}; no other template is left to try")
    return Replacement({"excluded_templates": tried, "next_best_template": str(chosen.id), "template_code": None},
                       f"verification failed: {failed}; trying template {chosen.name}")


tool_register(Tool(
    name="verify_import",
    description="Check that the imported group is complete.",
    input_schema={"type": "object", "properties": {"group_id": ID}, "required": ["group_id"]},
    output_schema={"type": "object", "properties": {"items": {"type": "integer"}}, "required": ["items"]},
    fn=verify_import, consumes=["group_id"], inline=True, undo_replan=_verify_undo_replan,
    accept=lambda ctx, arguments, output: [Acceptance("every template item is in the group",
                                                      output["items"] == output["template_items"] > 0,
                                                      words(gettext_noop("%(done)s of %(total)s"),
                                                            done=output["items"], total=output["template_items"]))],
    summary=lambda output: words(ngettext_noop("Verified the group “%(name)s”: %(count)s item.",
                                                       "Verified the group “%(name)s”: %(count)s items.", "count"),
                                 name=output["group_name"], count=output["items"]),
    milestones={"completed": "the new group was verified"},
))


def _receipt_keys(ctx: ToolContext, tool: str) -> list[str]:
    """The idempotency keys under which this run's `tool` reached the system of record."""
    return list(ToolCall.objects.filter(run_id=ctx.run_id, tool=tool).values_list("idempotency_key", flat=True))


@retried_when_busy
def undo_run_effects(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """Undo this run's effects by its receipts, and nothing else; stop (blocked) if
    someone changed those records meanwhile."""
    try:
        receipt = run_effects_undo(actor=Actor.of_agent(ctx), snapshot_id=int(arguments["snapshot_id"]),
                                   import_keys=_receipt_keys(ctx, "import_template"),
                                   assign_keys=_receipt_keys(ctx, "assign_employees"),
                                   idempotency_key=ctx.idempotency_key)
    except ScopeChanged as changed:
        raise ToolBlocked(changed.message) from None
    body = receipt.body
    return {"snapshot_id": body["snapshot_id"], "checksum": body["checksum"],
            "groups_deleted": body["groups_deleted"], "employees_restored": body["employees_restored"],
            "receipt_ref": f"payroll/snapshots/{body['snapshot_id']}"}


def _undo_accept(ctx, arguments, output) -> list[Acceptance]:

    snapshot = Snapshot.objects.get(id=int(arguments["snapshot_id"]), tenant_id=ctx.tenant_id)
    now = scope_checksum(tenant_id=ctx.tenant_id, scope=snapshot.scope or {})
    return [Acceptance("the checksum over this run's scope equals the snapshot's", now == snapshot.checksum)]


def _undo_summary(output: dict[str, Any]) -> Stored:
    deleted = output["groups_deleted"]
    if not deleted and not output["employees_restored"]:
        return words(gettext_noop("Nothing of this run had reached the payroll system; nothing to undo."))
    removed = [f"“{n}”" for n in deleted] or words(gettext_noop("no group"))  # the names, as they are
    if output["employees_restored"]:
        return words(ngettext_noop("Undid this run's changes: removed %(groups)s, put %(count)s employee back.",
                                   "Undid this run's changes: removed %(groups)s, put %(count)s employees back.", "count"),
                     groups=removed, count=output["employees_restored"])
    return words(gettext_noop("Undid this run's changes: removed %(groups)s."), groups=removed)


tool_register(Tool(
    name="undo_run_effects",
    description="Undo exactly this run's changes (the group it created, the assignments it made), by its receipts.",
    input_schema={"type": "object", "properties": {"snapshot_id": ID}, "required": ["snapshot_id"]},
    output_schema={"type": "object", "properties": {"checksum": {"type": "string"},
                                                    "groups_deleted": {"type": "array"},
                                                    "employees_restored": {"type": "integer"}},
                   "required": ["checksum", "groups_deleted", "employees_restored"]},
    fn=undo_run_effects, consumes=["snapshot_id"], side_effects=True, read_only=False, accept=_undo_accept,
    summary=_undo_summary,
    milestones={"completed": "this run's changes were undone", "blocked": "the undo stopped: someone changed the "
                                                                          "run's records"},
))


@retried_when_busy
def assign_employees(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:

    # The salaries answered before the approval, which its card showed: recorded with the export's pay.
    arguments = with_salaries(arguments, arguments.get("salaries"))
    ids = [int(e) for e in arguments.get("employee_ids") or []]
    created: list[str] = []
    if arguments.get("new_employees"):
        # The approval of the import covered them (its card listed each as a new employee).
        made = employees_create(actor=Actor.of_agent(ctx), group_id=int(arguments["group_id"]),
                                employees=arguments["new_employees"], idempotency_key=f"{ctx.idempotency_key}:new")
        ids += [int(e) for e in made.body["employee_ids"]]
        created = made.body["created"]
    if arguments.get("employee_pay"):
        # The export's pay for employees the tenant had, where it differs from the pay in force:
        # part of the same approved change (the card listed the export), once per key.
        employee_pay_record(actor=Actor.of_agent(ctx), employee_pay=arguments["employee_pay"],
                            idempotency_key=f"{ctx.idempotency_key}:pay", source=f"HR export, run {ctx.run_id}")
    receipt = employees_assign(actor=Actor.of_agent(ctx), group_id=int(arguments["group_id"]), employee_ids=ids,
                               idempotency_key=ctx.idempotency_key)
    return {"group_id": receipt.body["group_id"], "assigned": receipt.body["assigned"],
            "employee_ids": receipt.body["employee_ids"], "created": created,
            "receipt_ref": f"payroll/groups/{receipt.body['group_id']}"}


def _assign_accept(ctx, arguments, output) -> list[Acceptance]:

    listed = {int(e) for e in arguments.get("employee_ids") or []} | {int(e) for e in output.get("employee_ids") or []}
    in_group = Employee.objects.filter(tenant_id=ctx.tenant_id, id__in=listed,
                                       group_id=int(output["group_id"])).count()
    return [Acceptance("every listed employee is in the new group", in_group == len(listed),
                       words(gettext_noop("%(done)s of %(total)s"), done=in_group, total=len(listed)))]


tool_register(Tool(
    name="assign_employees",
    description="Assign the employees of the attached list to the new payroll group (creating those the approval "
                "card proposed as new).",
    input_schema={"type": "object", "properties": {
        # Empty when the export lists only new employees (interpret's coordinate is then []).
        "group_id": ID, "employee_ids": {"type": "array", "items": ID},
        "new_employees": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["employee_no", "name"],
            "properties": {"employee_no": {"type": "string", "minLength": 1, "maxLength": 40},
                           "name": {"type": "string", "minLength": 1, "maxLength": 200},
                           "department": {"type": "string"}, "location": {"type": "string"},
                           "pay": {"type": "object", "required": ["base_salary"]}}}},
        "employee_pay": {"type": "array", "items": {"type": "object", "required": ["employee_id", "pay"],
                                                    "properties": {"employee_id": ID, "pay": {"type": "object"}}}},
        "salaries": {"type": "array"}},
        "required": ["group_id"], "anyOf": [{"required": ["employee_ids"]}, {"required": ["new_employees"]}]},
    output_schema={"type": "object", "properties": {"assigned": {"type": "integer"}}, "required": ["assigned"]},
    fn=assign_employees, consumes=["group_id"], consumes_optional=["employee_ids", "salaries"], side_effects=True, read_only=False, accept=_assign_accept,
    summary=lambda output: words(ngettext_noop("Assigned %(count)s employee to the new group.",
                                                       "Assigned %(count)s employees to the new group.", "count"),
                                 count=output["assigned"]),
    milestones={"completed": "the listed employees were assigned to the new group"},
))
