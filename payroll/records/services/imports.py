"""Importing a catalog template into a new payroll group: the agent's import (after its
approval) and a person's direct write (on the timeline, or a run of its own above the approval
matrix's thresholds)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from approvals.matrix import approval_route
from config.api import Conflict, Unprocessable
from idempotency.services import Receipt, key_checked
from tenants.actors import Actor
from tenants.models import Membership
from timeline.models import Activity
from timeline.services import activity_close, activity_open, conversation_create, event_append, frame_record
from workflows.blueprints import Door
from workflows.services import run_start

from payroll.models import GroupItem, IdempotencyRecord, PayrollGroup
from payroll.records.selectors import formula_problem, import_scope, template_get

from .claims import claim_check, group_name_free, records_claim, records_release
from .protocol import authorise, id_checked, idempotent_write, name_checked


def template_import(*, actor: Actor, template_id: int, group_name: str, idempotency_key: str,
                    city: str = "") -> Receipt:
    """Import a catalog template into a new payroll group, committed in steps.

    The group row commits first, then each item in its own transaction, as a real
    import would; an item whose formula names an undeclared variable stops the
    import there (422) and leaves the partial group, linked to this key so that a
    retry with the same key resumes it instead of starting a second group. `city`: the city
    whose rules the group computes under (blank: its template's region's).
    """
    key = key_checked(idempotency_key)
    template_id = id_checked(template_id, "template_id")
    group_name = name_checked(group_name, _("group name"))
    authorise(actor, tool="import_template", arguments={"template_id": template_id, "group_name": group_name},
               what=_("import a payroll template"))
    template = template_get(template_id)
    if actor.role is not None:
        # A person's direct write: on the same footing as the agent's.
        return _group_import_direct(actor=actor, template=template, group_name=group_name, key=key, city=city)
    return _template_import_work(actor=actor, template=template, group_name=group_name, key=key, city=city)


def _group_import_direct(*, actor: Actor, template, group_name: str, key: str, city: str = "") -> Receipt:
    """A person imports directly. Under the approval matrix's thresholds for imports
    (headcount, monthly gross in scope) it goes through now, holding the name's claim
    while it writes, and is recorded on the timeline with who did it. Over them, it
    becomes a small run (blueprint payroll_direct_import) whose import waits at the same
    gate as the agent's: the four-eyes rule makes a second person approve it (202)."""
    tenant_id = actor.tenant_id
    membership = Membership.objects.select_related("user").get(user_id=actor.user_id, tenant_id=tenant_id)
    request = {"template_id": template.id, "group_name": group_name}
    if IdempotencyRecord.objects.filter(tenant_id=tenant_id, operation="template_import", key=key).exists():
        # A retry of a write already made (replay, resume, or 409/422 as the record says).
        return _template_import_work(actor=actor, template=template, group_name=group_name, key=key, city=city)
    measures = import_scope(tenant_id=tenant_id, template_id=template.id)
    route = approval_route(tenant_id=tenant_id, tool="import_template", measures=measures)
    if route.over_limit:
        def work(record: IdempotencyRecord) -> tuple[int, dict[str, Any]]:
            run = run_start(membership=membership, blueprint="payroll_direct_import", door=Door.ENDPOINT,
                            params={"template_id": str(template.id), "group_name": group_name})
            event_append(conversation_id=run.conversation_id, run_id=run.id, type="payroll.direct_write",
                         data={"by": membership.user.username, "role": membership.role, "operation": "import",
                               "group_name": group_name, "template": template.code, "measures": measures,
                               "outcome": "approval_required", "routing": route.reason})
            return 202, {"run_id": str(run.id), "status": "approval_required", "group_name": group_name,
                         "template_id": str(template.id), "routing": route.reason,
                         "detail": "Over the approval matrix's limits: a second person must approve this import."}

        return idempotent_write(actor=actor, operation="template_import", key=key, request=request, work=work,
                           atomic=True)
    import_work = _import_work(actor=actor, template=template, group_name=group_name, claim_held=True, city=city)

    def work(record: IdempotencyRecord) -> tuple[int, dict[str, Any]]:
        # The name is held while the person's import writes, as a run holds it: a run
        # that reserved it first makes this a clear 409, and no run can take it meanwhile.
        claims = records_claim(tenant_id=tenant_id, run_id=None, holder=f"{membership.user.username}'s direct import",
                               group_name=group_name, own_record_id=record.id)
        try:
            return import_work(record)
        finally:
            records_release(tenant_id=tenant_id, claim_ids=claims)

    receipt = idempotent_write(actor=actor, operation="template_import", key=key, request=request, work=work, atomic=False)
    if not receipt.replayed:
        with transaction.atomic():
            _direct_write_record(membership, f"Imported “{template.name}” as the new group “{group_name}”",
                                 {"operation": "import", "group_name": group_name, "template": template.code,
                                  "group_id": receipt.body.get("group_id"), "measures": measures,
                                  "routing": route.reason, "outcome": "imported"})
    return receipt


def _direct_write_record(membership: Membership, summary: str, data: dict[str, Any]) -> None:
    """A person's write to the system of record, on the timeline with who did it."""
    who = membership.user.username
    conversation = conversation_create(tenant_id=membership.tenant_id, user_id=membership.user_id,
                                       title=f"Direct write by {who}")
    activity = activity_open(conversation_id=conversation.id, kind=Activity.Kind.MESSAGE,
                             title=f"Direct write by {who}", summary=summary)
    frame_record(activity_id=activity.id, kind="state_change", name="payroll direct write",
                 summary=f"{summary} (by {who}, {membership.role}).", payload={"by": who, **data})
    event_append(conversation_id=conversation.id, type="payroll.direct_write",
                 data={"by": who, "role": membership.role, **data})
    activity_close(activity_id=activity.id, status="completed")


def _template_import_work(*, actor: Actor, template, group_name: str, key: str, city: str = "") -> Receipt:
    """The agent's import, under its idempotency key (authority already checked)."""
    return idempotent_write(actor=actor, operation="template_import", key=key,
                       request={"template_id": template.id, "group_name": group_name},
                       work=_import_work(actor=actor, template=template, group_name=group_name, city=city),
                       atomic=False)


def _import_work(*, actor: Actor, template, group_name: str, claim_held: bool = False,
                 city: str = "") -> Callable[[IdempotencyRecord], tuple[int, dict]]:
    """The import itself: what runs once per idempotency key. `claim_held`: the caller
    holds the name's claim for this very write (a person's direct import)."""
    template_id = template.id

    def work(record: IdempotencyRecord) -> tuple[int, dict[str, Any]]:
        if not claim_held:
            claim_check(actor, group_name)
        group = PayrollGroup.objects.filter(tenant_id=actor.tenant_id, idempotency_record=record).first()
        if group is None:
            if not claim_held:  # (a person's import checked it with its claim)
                group_name_free(actor.tenant_id, group_name, own_record_id=record.id)
            try:
                with transaction.atomic():
                    group = PayrollGroup.objects.create(
                        tenant_id=actor.tenant_id, name=group_name, template=template,
                        template_version=template.version, variables=list(template.variables),
                        city=city[:40], idempotency_record=record)
            except IntegrityError:
                raise Conflict(_("A payroll group named '%(group_name)s' already exists; choose another name.")
                               % {"group_name": group_name},
                               code="group_name_taken")
        existing = set(GroupItem.objects.filter(group=group).values_list("code", flat=True))
        known = set(template.variables)
        for item in template.items.order_by("position"):
            if item.code not in existing:
                with transaction.atomic():
                    # Checked at the moment of creation, as the legacy importer did.
                    problem = formula_problem(item=item, known=known)
                    if problem:
                        raise Unprocessable(
                            _("Import stopped at item '%(name)s' (%(code)s): %(problem)s. The group '%(group_name)s' was left partly imported; this run's undo removes it.")
                                % {"name": item.name, "code": item.code, "problem": problem, "group_name": group_name},
                            code="formula_invalid", extra={"item": item.code, "group_id": str(group.id)})
                    GroupItem.objects.create(group=group, position=item.position, code=item.code, name=item.name,
                                             kind=item.kind, rate=item.rate, rate_name=item.rate_name,
                                             base=item.base, formula=item.formula)
            known.add(item.code)
        return 201, {"group_id": str(group.id), "template_id": str(template.id),
                     "template_version": template.version, "group_name": group.name,
                     "items_created": GroupItem.objects.filter(group=group).count()}

    return work
