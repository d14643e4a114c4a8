"""The only writers of the payroll system of record. The API and the agent's tools
both call these, so idempotency and authority live here, once (DESIGN.md §4).

Every write goes: authority → arguments → idempotency claim → work → receipt.
The claim is a committed "in progress" row, unique per (tenant, operation, key):
whoever inserts it does the work; everyone else reads it and replays the stored
receipt (same request, done), is refused 422 (different request), is refused 409
(still running), or takes the row over (its lease expired, or the work failed
part-way) and resumes.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from approvals.authority import approval_covers
from approvals.matrix import approval_route
from config.api import Conflict, DomainError, Forbidden, NotFound, Unprocessable, strict_int, strict_moment
from config.ids import new_id
from config.names import name_normalised, name_visible
from config.words import Stored, words
from idempotency.models import IdempotencyState

# Receipt, KeyRequired and idempotency_lease are part of this module's interface, as before.
from idempotency.services import (  # noqa: F401
    KeyRequired,
    Receipt,
    idempotency_lease,
    idempotent,
    key_checked,
    request_hash,
)
from tenants.actors import Actor
from tenants.models import Membership, Role
from timeline.models import Activity
from timeline.services import (
    activity_close,
    activity_open,
    conversation_create,
    event_append,
    frame_record,
)
from workflows.blueprints import Door
from workflows.models import Run, StateCoordinate
from workflows.services import run_start

from .models import (
    ClaimKind,
    DeductionKind,
    Employee,
    EmployeePay,
    GroupItem,
    IdempotencyRecord,
    PayrollGroup,
    RecordClaim,
    RemovedGroup,
    Snapshot,
    group_name_key,
)
from .previews import import_scope
from .selectors import (
    checksum_of,
    configuration_checksum,
    configuration_of,
    formula_problem,
    import_diff,
    item_as_dict,
    scope_checksum,
    scope_configuration_of,
    scope_normalised,
    snapshot_get,
    template_get,
)

__all__ = [
    "Actor", "Receipt", "snapshot_create", "template_import", "snapshot_restore", "employees_assign",
    "import_diff", "configuration_checksum",
]

log = logging.getLogger(__name__)

MAX_KEY_LENGTH = 200
MAX_NAME_LENGTH = 200
APPROVER_ROLES = frozenset({Role.APPROVER, Role.ADMIN})


# --- Authority -------------------------------------------------------------------------------

def _authorise(actor: Actor, *, tool: str | None, arguments: dict[str, Any] | None, what: str) -> None:
    """A person needs an approver role; the agent needs a decided approval (tool=None: neither)."""
    if tool is None:
        return
    if actor.role is not None:
        if actor.role not in APPROVER_ROLES:
            raise Forbidden(_("Only an approver or a tenant admin may %(what)s; ask one to do it or to approve it.")
                            % {"what": what},
                            code="role_required")
        return
    approval_covers(tenant_id=actor.tenant_id, approval_id=actor.approval_id, tool=tool, arguments=arguments or {})


# --- Idempotency: the generic protocol (idempotency.services) over payroll's table -------------

_key_checked = key_checked


def _request_hash(operation: str, request: dict[str, Any]) -> str:
    return request_hash(operation, request)


def _group_left(record: IdempotencyRecord) -> bool:
    """A failed import that left its group behind: a retry with the key resumes it."""
    return PayrollGroup.objects.filter(idempotency_record_id=record.pk).exists()


def _idempotent(*, actor: Actor, operation: str, key: str, request: dict[str, Any],
                work: Callable[[IdempotencyRecord], tuple[int, dict[str, Any]]], atomic: bool) -> Receipt:
    """Run `work` once per (tenant, operation, key); `atomic` commits the work with its receipt."""
    return idempotent(IdempotencyRecord, tenant_id=actor.tenant_id, operation=operation, key=key, request=request,
                      work=work, atomic=atomic, keeps_partial=_group_left)


# --- Helpers for arguments ----------------------------------------------------------------------

def _id_checked(value: Any, what: str) -> int:
    """Ids arrive as strings (the API's spelling) or ints; anything else is a 400."""
    if isinstance(value, bool):
        value = None
    try:
        number = strict_int(value)  # ASCII digits only: int() reads "١٢" as 12
    except (TypeError, ValueError):
        raise DomainError(_("The %(what)s must be a numeric id (a string of digits), not %(value)s.")
                          % {"what": what, "value": repr(value)},
                          code="invalid_id")
    if number <= 0 or number >= 2**63:
        raise DomainError(_("The %(what)s %(value)s is out of range.") % {"what": what, "value": repr(value)},
                          code="invalid_id")
    return number


def _name_checked(value: str, what: Stored) -> str:
    """A name as people read it (config.names): NFKC, refused with no readable character or
    any invisible one, at most MAX_NAME_LENGTH characters."""
    return name_normalised(value, field=what, max_length=MAX_NAME_LENGTH)


def group_name_normalised(value: str) -> str:
    """A new group's name as it is stored (see _name_checked); DomainError (400) when it is not one."""
    return _name_checked(value, words(gettext_noop("group name")))  # words: a run's question quotes the refusal


# --- Services -----------------------------------------------------------------------------------

def snapshot_create(*, actor: Actor, label: str, idempotency_key: str,
                    scope: dict[str, Any] | None = None) -> Receipt:
    """Freeze payroll configuration with its checksum: the tenant's whole configuration,
    or (`scope`) exactly the records one run will touch. Every role may do it."""
    key = _key_checked(idempotency_key)
    _authorise(actor, tool=None, arguments=None, what=_("take a snapshot"))
    label = _name_checked(label, _("snapshot label"))
    scope = scope_normalised(scope) if scope is not None else None

    def work(record: IdempotencyRecord) -> tuple[int, dict[str, Any]]:
        configuration = (configuration_of(tenant_id=actor.tenant_id) if scope is None
                         else scope_configuration_of(tenant_id=actor.tenant_id, scope=scope))
        snapshot = Snapshot.objects.create(tenant_id=actor.tenant_id, label=label, configuration=configuration,
                                           checksum=checksum_of(configuration), created_by_id=actor.user_id,
                                           scope=scope)
        return 201, {"snapshot_id": str(snapshot.id), "checksum": snapshot.checksum, "label": snapshot.label}

    request = {"label": label} if scope is None else {"label": label, "scope": scope}
    return _idempotent(actor=actor, operation="snapshot_create", key=key, request=request, work=work, atomic=True)


# --- Claims: who is about to create or change a record --------------------------------------------

class NameTaken(Conflict):
    code = "group_name_taken"


class EmployeeHeld(Conflict):
    code = "employee_held"


class ScopeChanged(Conflict):
    code = "scope_changed"


def records_claim(*, tenant_id: int, run_id: int | None, holder: str, group_name: str,
                  employee_ids: list[int] | None = None, own_record_id: int | None = None) -> list[int]:
    """Reserve a new group's name and the employees it will assign, all or none.

    The unique (tenant, kind, key) index serialises concurrent claimants: the second
    to insert waits for the first to commit, then fails. A group name's key is what it
    reads as (group_name_key), so a lookalike ("Р1 Grоup 01" in Cyrillic, a different
    case) collides as the same name does. Claiming again what this run already holds is
    a no-op (a redelivered step). Raises NameTaken (the name, or one that reads the same,
    exists or another holds it) or EmployeeHeld (naming who holds the employee)."""
    group_name = _name_checked(group_name, _("group name"))
    wanted = ([(ClaimKind.GROUP_NAME, group_name_key(group_name), group_name)]
              + [(ClaimKind.EMPLOYEE, str(int(e)), "") for e in employee_ids or []])
    created = []
    with transaction.atomic():
        for kind, key, name in wanted:
            try:
                with transaction.atomic():
                    created.append(RecordClaim.objects.create(tenant_id=tenant_id, kind=kind, key=key, name=name,
                                                              run_id=run_id, holder=holder).id)
                continue
            except IntegrityError:
                pass
            existing = RecordClaim.objects.filter(tenant_id=tenant_id, kind=kind, key=key).first()
            if existing is not None and run_id is not None and existing.run_id == run_id:
                continue
            by = existing.holder if existing else "another request"
            if kind == ClaimKind.GROUP_NAME:
                held = existing.name if existing else ""
                # Words: the API says them in the caller's language, a run's question in its reader's.
                if not held or held == group_name:
                    message = words(gettext_noop("The name “%(name)s” is being used for a new group by %(by)s."),
                                    name=group_name, by=by)
                else:
                    message = words(gettext_noop("The name “%(name)s” reads the same as “%(held)s”, which is being "
                                                 "used for a new group by %(by)s."),
                                    name=group_name, held=name_visible(held), by=by)
                raise NameTaken(message, extra={"held_by": by})
            employee = Employee.objects.filter(tenant_id=tenant_id, id=int(key)).first()
            who = f"{employee.employee_no} ({employee.name})" if employee else key
            raise EmployeeHeld(f"Employee {who} is being assigned by {by}.", extra={
                "held_by": by, "employee": key, "who": who,
                "run": str(existing.run_id) if existing is not None and existing.run_id else ""})
        _group_name_free(tenant_id, group_name, own_record_id=own_record_id)
    return created


def _group_name_free(tenant_id: int, group_name: str, *, own_record_id: int | None = None) -> None:
    """No group of the tenant has this name or one that reads the same (NameTaken). A group
    that our own earlier attempt left (a resumed import, `own_record_id`) is ours."""
    existing = PayrollGroup.objects.filter(tenant_id=tenant_id)
    if own_record_id is not None:
        existing = existing.exclude(idempotency_record_id=own_record_id)
    other = existing.named_like(group_name).values_list("name", flat=True).first()
    if other is None:
        return
    if other == group_name:
        raise NameTaken(words(gettext_noop("A payroll group named “%(name)s” already exists."), name=group_name))
    raise NameTaken(words(gettext_noop("A payroll group named “%(existing)s” already exists; “%(name)s” reads the "
                                       "same."), existing=name_visible(other), name=group_name))


def records_release(*, tenant_id: int, run_id: int | None = None, claim_ids: list[int] | None = None) -> int:
    """Give back a run's claims (it ended for good), or a direct write's own claims."""
    claims = RecordClaim.objects.filter(tenant_id=tenant_id)
    claims = claims.filter(run_id=run_id) if run_id is not None else claims.filter(id__in=claim_ids or [])
    return claims.delete()[0]


def _claim_check(actor: Actor, group_name: str) -> None:
    """A name reserved by someone else may not be imported: that run's approval card
    must never become one that is bound to fail."""
    claim = RecordClaim.objects.filter(tenant_id=actor.tenant_id, kind=ClaimKind.GROUP_NAME,
                                       key=group_name_key(group_name)).first()
    if claim is None or (actor.run_id is not None and claim.run_id == actor.run_id):
        return
    if not claim.name or claim.name == group_name:
        message = _("The name “%(name)s” is reserved for a new group by %(by)s; choose another name.") % {
            "name": group_name, "by": claim.holder}
    else:
        message = _("The name “%(name)s” reads the same as “%(held)s”, which is reserved for a new group by "
                    "%(by)s; choose another name.") % {"name": group_name, "held": name_visible(claim.name),
                                                       "by": claim.holder}
    raise NameTaken(message, code="group_name_reserved", extra={"held_by": claim.holder})


def template_import(*, actor: Actor, template_id: int, group_name: str, idempotency_key: str,
                    city: str = "") -> Receipt:
    """Import a catalog template into a new payroll group, committed in steps.

    The group row commits first, then each item in its own transaction, as a real
    import would; an item whose formula names an undeclared variable stops the
    import there (422) and leaves the partial group, linked to this key so that a
    retry with the same key resumes it instead of starting a second group. `city`: the city
    whose rules the group computes under (blank: its template's region's).
    """
    key = _key_checked(idempotency_key)
    template_id = _id_checked(template_id, "template_id")
    group_name = _name_checked(group_name, _("group name"))
    _authorise(actor, tool="import_template", arguments={"template_id": template_id, "group_name": group_name},
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

        return _idempotent(actor=actor, operation="template_import", key=key, request=request, work=work,
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

    receipt = _idempotent(actor=actor, operation="template_import", key=key, request=request, work=work, atomic=False)
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
    return _idempotent(actor=actor, operation="template_import", key=key,
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
            _claim_check(actor, group_name)
        group = PayrollGroup.objects.filter(tenant_id=actor.tenant_id, idempotency_record=record).first()
        if group is None:
            if not claim_held:  # (a person's import checked it with its claim)
                _group_name_free(actor.tenant_id, group_name, own_record_id=record.id)
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


def snapshot_restore(*, actor: Actor, snapshot_id: int, idempotency_key: str,
                     tenant_checksum: str | None = None) -> Receipt:
    """Put the tenant's groups, items and employee assignments back exactly as in the snapshot.

    Whole-tenant: it deletes every group created since, whoever created it. So a tenant
    admin asks for it, and a second person approves it: the admin's request starts a
    small run (blueprint payroll_tenant_restore, 202) whose restore waits at the gate with
    the exact list of what goes and what comes back. The agent then writes it under that
    approval, and only if the tenant is still as the approver saw it (`tenant_checksum`).
    It is never a run's compensation (that is run_effects_undo)."""
    key = _key_checked(idempotency_key)
    snapshot_id = _id_checked(snapshot_id, "snapshot_id")
    if actor.role is not None and actor.role != Role.ADMIN:
        raise Forbidden(_("Restoring a whole-tenant snapshot deletes everyone's later work; only a tenant admin may ask for it."),
                        code="admin_required")
    snapshot = snapshot_get(actor.tenant_id, snapshot_id)
    if snapshot.scope is not None:
        raise Unprocessable(_("This snapshot holds one run's records only; it cannot restore the tenant."),
                            code="scoped_snapshot")
    if actor.role is not None:
        return _tenant_restore_request(actor=actor, snapshot=snapshot, key=key)
    _authorise(actor, tool="restore_tenant_snapshot",
               arguments={"snapshot_id": snapshot_id, "tenant_checksum": tenant_checksum},
               what=_("restore the whole tenant"))

    def work(record: IdempotencyRecord) -> tuple[int, dict[str, Any]]:
        tenant_id = actor.tenant_id
        if configuration_checksum(tenant_id=tenant_id) != tenant_checksum:
            raise Conflict(_("The tenant's payroll configuration changed after the approver saw what this restore deletes; nothing was restored."),
                           code="configuration_changed")
        configuration = snapshot.configuration
        kept = [int(g["id"]) for g in configuration["groups"]]
        # Groups created after the snapshot go (their items cascade, employees are unassigned).
        going = PayrollGroup.objects.filter(tenant_id=tenant_id).exclude(id__in=kept)
        gone = list(going.values_list("id", "name"))
        going.delete()
        _removed_tell(actor=actor, gone=gone)
        Employee.objects.filter(tenant_id=tenant_id, group__isnull=False).update(group=None)
        GroupItem.objects.filter(group__tenant_id=tenant_id).delete()
        _configuration_write(tenant_id, configuration)
        return 200, {"snapshot_id": str(snapshot.id), "checksum": configuration_checksum(tenant_id=tenant_id)}

    return _idempotent(actor=actor, operation="snapshot_restore", key=key,
                       request={"snapshot_id": snapshot_id, "tenant_checksum": tenant_checksum}, work=work, atomic=True)


def _runs_that_made(tenant_id: int, group_ids: list[int]) -> dict[int, Run]:
    """The run that set up each of these groups (its `group_id` coordinate), by group id."""
    return {int(c.value): c.run for c in StateCoordinate.objects.filter(
        tenant_id=tenant_id, key="group_id", value__in=[str(g) for g in group_ids] + list(group_ids))
        .select_related("run")}


def _moved_tell(*, actor: Actor, group_id: int, previous: dict[int, int | None]) -> None:
    """Employees moved out of a group someone else's run set up: that run's conversation is told
    (how many, into which group, by whose run, a link to it), in the assignment's transaction."""
    by_group: dict[int, int] = {}
    for gid in previous.values():
        if gid is not None and gid != group_id:
            by_group[gid] = by_group.get(gid, 0) + 1
    if not by_group or not actor.run_id:
        return
    mover = Run.objects.filter(id=actor.run_id).select_related("created_by").first()
    into = PayrollGroup.objects.filter(id=group_id).values_list("name", flat=True).first() or ""
    names = dict(PayrollGroup.objects.filter(id__in=list(by_group)).values_list("id", "name"))
    for gid, run in _runs_that_made(actor.tenant_id, list(by_group)).items():
        if mover is None or run.id == mover.id or run.created_by_id == mover.created_by_id or not run.conversation_id:
            continue  # nobody else to tell
        who = mover.created_by.get_full_name() or mover.created_by.username
        event_append(conversation_id=run.conversation_id, run_id=run.id, type="record.changed", data={
            "words": words(gettext_noop("%(count)s employees of the payroll group “%(name)s” that this conversation "
                                        "set up were moved to “%(into)s” by %(who)s's run."),
                           count=by_group[gid], name=names.get(gid, ""), into=into, who=who),
            "link": {"href": reverse("run", args=[mover.id]), "label": words(gettext_noop("Open that run"))},
            "group": str(gid), "by_run": str(mover.id)})


def _removed_tell(*, actor: Actor, gone: list[tuple[int, str]]) -> None:
    """Nobody's records change behind their back (issue 32): each group a restore deleted is
    remembered (its page then says who removed it, by which run), and whoever's run had made
    it is told in that run's conversation, with a link to the restore run. Written in the
    restore's own transaction, so the news is posted exactly when the deletion commits."""
    if not gone:
        return
    restore = Run.objects.filter(id=actor.run_id).select_related("created_by").first() if actor.run_id else None
    who = restore.created_by if restore is not None else None
    who_name = (who.get_full_name() or who.username) if who is not None else "?"
    made = _runs_that_made(actor.tenant_id, [gid for gid, _name in gone])
    for gid, name in gone:
        run = made.get(gid)
        RemovedGroup.objects.update_or_create(tenant_id=actor.tenant_id, group_id=gid, defaults={
            "name": name, "removed_by_run": restore, "removed_by": who, "made_by_run": run})
        if run is None or restore is None or run.conversation_id is None or run.created_by_id == restore.created_by_id:
            continue  # nobody else to tell: the restorer's own run tells its own conversation
        event_append(conversation_id=run.conversation_id, run_id=run.id, type="record.removed", data={
            "words": words(gettext_noop("The payroll group “%(name)s” that this conversation set up was deleted by "
                                        "%(who)s's whole-tenant restore: the tenant went back to a snapshot taken "
                                        "before the group existed."), name=name, who=who_name),
            "link": {"href": reverse("run", args=[restore.id]), "label": words(gettext_noop("Open the restore run"))},
            "group": str(gid), "by_run": str(restore.id)})


def _configuration_write(tenant_id: int, configuration: dict[str, Any]) -> None:
    """Write a snapshot's groups, their items and the assignments (over a tenant cleared of them)."""
    for g in configuration["groups"]:
        fields = {"name": g["name"], "template_id": None if g["template_id"] is None else int(g["template_id"]),
                  "template_version": g["template_version"], "variables": g["variables"], "city": g.get("city", "")}
        updated = PayrollGroup.objects.filter(id=int(g["id"]), tenant_id=tenant_id).update(**fields)
        if not updated:
            PayrollGroup.objects.create(id=int(g["id"]), tenant_id=tenant_id, **fields)
        GroupItem.objects.bulk_create([
            GroupItem(group_id=int(g["id"]), position=i["position"], code=i["code"], name=i["name"],
                      kind=i["kind"], rate=i["rate"], rate_name=i.get("rate_name", ""), base=i["base"],
                      formula=i["formula"])
            for i in g["items"]])
    by_group: dict[int, list[int]] = {}
    for a in configuration["assignments"]:
        by_group.setdefault(int(a["group_id"]), []).append(int(a["employee_id"]))
    for group_id, employee_ids in by_group.items():
        Employee.objects.filter(tenant_id=tenant_id, id__in=employee_ids).update(group_id=group_id)


def employee_copy(employee: Employee, *, tenant_id: int) -> Employee:
    """A copy of an employee in another tenant (a replay's sandbox), in no group."""
    return Employee.objects.create(tenant_id=tenant_id, employee_no=employee.employee_no, name=employee.name,
                                   department=employee.department, location=employee.location,
                                   base_salary=employee.base_salary, currency=employee.currency)


@transaction.atomic
def snapshot_copy(*, snapshot_id: int, from_tenant_id: int, to_tenant_id: int) -> Snapshot:
    """For a replay's sandbox (an empty tenant): the configuration a whole-tenant snapshot
    froze, written into `to_tenant` under ids of its own, and a snapshot of it there."""
    snapshot = snapshot_get(from_tenant_id, snapshot_id)
    groups = {g["id"]: str(new_id()) for g in snapshot.configuration["groups"]}
    employees = {str(e.id): str(employee_copy(e, tenant_id=to_tenant_id).id) for e in Employee.objects.filter(
        tenant_id=from_tenant_id, id__in=[int(a["employee_id"]) for a in snapshot.configuration["assignments"]])}
    _configuration_write(to_tenant_id, {
        "groups": [{**g, "id": groups[g["id"]]} for g in snapshot.configuration["groups"]],
        "assignments": [{"employee_id": employees[a["employee_id"]], "group_id": groups[a["group_id"]]}
                        for a in snapshot.configuration["assignments"] if a["employee_id"] in employees]})
    configuration = configuration_of(tenant_id=to_tenant_id)
    return Snapshot.objects.create(tenant_id=to_tenant_id, label=snapshot.label, configuration=configuration,
                                   checksum=checksum_of(configuration))


def _tenant_restore_request(*, actor: Actor, snapshot: Snapshot, key: str) -> Receipt:
    """An admin asks: the restore becomes a run that waits for a second person (202).
    The same key again answers the same 202 and starts nothing new."""
    membership = Membership.objects.select_related("user").get(user_id=actor.user_id, tenant_id=actor.tenant_id)

    def work(record: IdempotencyRecord) -> tuple[int, dict[str, Any]]:
        run = run_start(membership=membership, blueprint="payroll_tenant_restore", door=Door.ENDPOINT,
                        params={"snapshot_id": str(snapshot.id)})
        event_append(conversation_id=run.conversation_id, run_id=run.id, type="payroll.direct_write",
                     data={"by": membership.user.username, "role": membership.role, "operation": "restore",
                           "snapshot": snapshot.label, "outcome": "approval_required"})
        return 202, {"run_id": str(run.id), "status": "approval_required", "snapshot_id": str(snapshot.id),
                     "detail": "A whole-tenant restore deletes everyone's later work: a second person must "
                               "approve it on the approver's desk."}

    return _idempotent(actor=actor, operation="snapshot_restore_request", key=key,
                       request={"snapshot_id": snapshot.id}, work=work, atomic=True)


def employees_assign(*, actor: Actor, group_id: int, employee_ids: list[int], idempotency_key: str) -> Receipt:
    """Assign employees to a payroll group. A person needs an approver role; the agent needs no approval."""
    key = _key_checked(idempotency_key)
    group_id = _id_checked(group_id, "group_id")
    ids = sorted({_id_checked(e, "employee id") for e in employee_ids or []})
    if actor.role is not None and actor.role not in APPROVER_ROLES:
        raise Forbidden(_("Only an approver or a tenant admin may assign employees to a payroll group."),
                        code="role_required")
    if not ids:
        raise DomainError(_("Give at least one employee id."), code="invalid")
    if not PayrollGroup.objects.filter(tenant_id=actor.tenant_id, id=group_id).exists():
        raise NotFound(_("No such payroll group."), code="group_not_found")
    found = set(Employee.objects.filter(tenant_id=actor.tenant_id, id__in=ids).values_list("id", flat=True))
    missing = [str(i) for i in ids if i not in found]
    if missing:
        raise NotFound(_("No such employee: %(choices)s.") % {"choices": ', '.join(missing)}, code="employee_not_found")

    def work(record: IdempotencyRecord) -> tuple[int, dict[str, Any]]:
        # Where each employee was: the receipt is what an undo puts back, and nothing else.
        previous = dict(Employee.objects.select_for_update().filter(tenant_id=actor.tenant_id, id__in=ids)
                        .values_list("id", "group_id"))
        Employee.objects.filter(tenant_id=actor.tenant_id, id__in=ids).update(group_id=group_id)
        _moved_tell(actor=actor, group_id=group_id, previous=previous)
        return 200, {"group_id": str(group_id), "employee_ids": [str(i) for i in ids], "assigned": len(ids),
                     "previous": {str(e): (None if g is None else str(g)) for e, g in previous.items()}}

    return _idempotent(actor=actor, operation="employees_assign", key=key,
                       request={"group_id": group_id, "employee_ids": ids}, work=work, atomic=True)


def employees_create(*, actor: Actor, group_id: int, employees: list[dict[str, Any]], idempotency_key: str) -> Receipt:
    """Create the employees an approved run proposed (an attached HR export's rows that the
    tenant did not have), once per key: a number the tenant has by now is reused, never
    duplicated. Currency from the group's template; the pay a row carries (base salary,
    allowances, special additional deductions) becomes the employee's EmployeePay, in the
    same transaction, and `base_salary` follows it; a row without pay leaves the salary 0."""
    key = _key_checked(idempotency_key)
    group_id = _id_checked(group_id, "group_id")
    rows = [{"employee_no": str(e.get("employee_no") or "").strip()[:40], "name": str(e.get("name") or "").strip()[:200],
             "department": str(e.get("department") or "").strip()[:100],
             "location": str(e.get("location") or "").strip()[:100]} for e in employees or []]
    pays = [pay_checked(e["pay"]) if isinstance(e, dict) and e.get("pay") else None for e in employees or []]
    if not rows or any(not r["employee_no"] or not r["name"] for r in rows):
        raise DomainError(_("Each new employee needs a number and a name."), code="invalid")
    group = PayrollGroup.objects.filter(tenant_id=actor.tenant_id, id=group_id).select_related("template").first()
    if group is None:
        raise NotFound(_("No such payroll group."), code="group_not_found")
    currency = group.template.currency if group.template_id else "CNY"

    def work(record: IdempotencyRecord) -> tuple[int, dict[str, Any]]:
        ids, created, paid = [], [], []
        for row, pay in zip(rows, pays):
            employee, made = Employee.objects.get_or_create(
                tenant_id=actor.tenant_id, employee_no=row["employee_no"],
                defaults={"name": row["name"], "department": row["department"] or "—",
                          "location": row["location"] or "—", "base_salary": 0, "currency": currency})
            ids.append(str(employee.id))
            if made:
                created.append(str(employee.id))
            if pay is not None and _pay_write(employee, pay, source=f"HR export, approved ({key[:120]})"):
                paid.append(str(employee.id))
        return 201, {"employee_ids": ids, "created": created, "paid": paid}

    request: dict[str, Any] = {"group_id": group_id, "employees": rows}
    if any(pays):  # the same hash as before for an export without pay
        request["pay"] = [_pay_json(p) if p else None for p in pays]
    return _idempotent(actor=actor, operation="employees_create", key=key, request=request, work=work, atomic=True)


# --- Pay ----------------------------------------------------------------------------------------

MAX_PAY = Decimal("1e10")


def _money(value: Any, what: str) -> Decimal:
    try:
        amount = Decimal(str(value).strip().replace(",", ""))
    except (InvalidOperation, ValueError):
        amount = None
    if amount is None or not amount.is_finite() or amount < 0 or amount >= MAX_PAY:
        raise DomainError(_("%(what)s is not an amount: “%(value)s”.") % {"what": what, "value": str(value)[:40]},
                          code="invalid")
    return amount.quantize(Decimal("0.01"))


def pay_checked(pay: dict[str, Any]) -> dict[str, Any]:
    """A pay as given (an export's row, an answer, the API) checked: amounts as Decimals,
    allowances by name, deductions by DeductionKind (their sum is the total when no total
    is given), an optional effective date (default: the first of this month)."""
    if not isinstance(pay, dict):
        raise DomainError(_("A pay needs a base salary."), code="invalid")
    base = _money(pay.get("base_salary"), "base_salary")
    allowances = {str(name).strip()[:60]: _money(v, str(name)[:60])
                  for name, v in (pay.get("allowances") or {}).items() if str(name).strip()}
    kinds = {}
    for kind, v in (pay.get("deductions_breakdown") or {}).items():
        if kind not in DeductionKind.values:
            raise DomainError(_("“%(value)s” is not a kind of special additional deduction.") % {"value": str(kind)[:40]},
                              code="invalid")
        kinds[kind] = _money(v, kind)
    total = pay.get("special_additional_deductions")
    total = _money(total, "special_additional_deductions") if total not in (None, "") else sum(
        kinds.values(), Decimal("0.00"))
    effective = pay.get("effective_from")
    if effective:
        try:
            effective = date.fromisoformat(str(effective)[:10])
        except ValueError:
            raise DomainError(_("“%(value)s” is not a date (YYYY-MM-DD).") % {"value": str(effective)[:40]},
                              code="invalid") from None
    else:
        effective = timezone.localdate().replace(day=1)
    return {"base_salary": base, "allowances": allowances, "special_additional_deductions": total,
            "deductions_breakdown": kinds, "effective_from": effective}


def _pay_json(pay: dict[str, Any]) -> dict[str, Any]:
    return {"base_salary": str(pay["base_salary"]), "allowances": {k: str(v) for k, v in pay["allowances"].items()},
            "special_additional_deductions": str(pay["special_additional_deductions"]),
            "deductions_breakdown": {k: str(v) for k, v in pay["deductions_breakdown"].items()},
            "effective_from": pay["effective_from"].isoformat()}


def _pay_same(row: EmployeePay | None, pay: dict[str, Any]) -> bool:
    if row is None:
        return False
    return (Decimal(row.base_salary) == pay["base_salary"]
            and {k: Decimal(str(v)) for k, v in (row.allowances or {}).items()} == pay["allowances"]
            and Decimal(row.special_additional_deductions) == pay["special_additional_deductions"]
            and {k: Decimal(str(v)) for k, v in (row.deductions_breakdown or {}).items()} == pay["deductions_breakdown"])


def _pay_write(employee: Employee, pay: dict[str, Any], *, source: str) -> bool:
    """A new EmployeePay row when `pay` differs from the one in force on its date (False: the
    same pay, nothing written). The employee's base_salary follows the newest pay."""
    if _pay_same(employee.pay_on(pay["effective_from"]), pay):
        return False
    EmployeePay.objects.create(
        employee=employee, effective_from=pay["effective_from"], base_salary=pay["base_salary"],
        allowances={k: str(v) for k, v in pay["allowances"].items()},
        special_additional_deductions=pay["special_additional_deductions"],
        deductions_breakdown={k: str(v) for k, v in pay["deductions_breakdown"].items()}, source=source[:200])
    latest = employee.pay_history.order_by("-effective_from", "-created_at").first()
    Employee.objects.filter(id=employee.id).update(base_salary=latest.base_salary)
    return True


def employee_pay_record(*, actor: Actor, employee_pay: list[dict[str, Any]], idempotency_key: str,
                        source: str) -> Receipt:
    """Record the pay of the tenant's employees ({"employee_id", "pay"} each), once per key: a
    new EmployeePay row for each whose pay differs from the one in force (the approved step that
    assigns an export's employees; a person's answer to a run's question). A person needs an
    approver role; the agent writes only what an approval covered or a person answered."""
    key = _key_checked(idempotency_key)
    if actor.role is not None and actor.role not in APPROVER_ROLES:
        raise Forbidden(_("Only an approver or a tenant admin may change an employee's pay."), code="role_required")
    entries = [(_id_checked(e.get("employee_id"), "employee id"), pay_checked(e.get("pay"))) for e in employee_pay or []]
    found = {e.id: e for e in Employee.objects.filter(tenant_id=actor.tenant_id, id__in=[i for i, _ in entries])}
    missing = [str(i) for i, _ in entries if i not in found]
    if missing:
        raise NotFound(_("No such employee: %(choices)s.") % {"choices": ", ".join(missing)}, code="employee_not_found")

    def work(record: IdempotencyRecord) -> tuple[int, dict[str, Any]]:
        written = [str(i) for i, pay in entries if _pay_write(found[i], pay, source=source)]
        return 200, {"employee_ids": [str(i) for i, _ in entries], "written": written}

    return _idempotent(actor=actor, operation="employee_pay_record", key=key,
                       request={"employee_pay": [{"employee_id": i, "pay": _pay_json(p)} for i, p in entries]},
                       work=work, atomic=True)


def run_effects_undo(*, actor: Actor, snapshot_id: int, import_keys: list[str], assign_keys: list[str],
                     idempotency_key: str) -> Receipt:
    """Undo exactly one run's effects, by its receipts: the groups its imports created
    (under `import_keys`) and the assignments it changed (under `assign_keys`), each put
    back as its receipt says it was. Never anything else in the tenant.

    Before deleting, the records are compared (a checksum over this scope) with what the
    receipts say the run left; if someone changed them meanwhile, nothing is deleted and
    ScopeChanged says what differs."""
    key = _key_checked(idempotency_key)
    snapshot_id = _id_checked(snapshot_id, "snapshot_id")
    snapshot = snapshot_get(actor.tenant_id, snapshot_id)
    scope = snapshot.scope or {}
    tenant_id = actor.tenant_id
    groups_q = PayrollGroup.objects.filter(tenant_id=tenant_id, idempotency_record__operation="template_import",
                                           idempotency_record__key__in=import_keys)
    assign_records = list(IdempotencyRecord.objects.filter(tenant_id=tenant_id, operation="employees_assign",
                                                           key__in=assign_keys, state=IdempotencyState.DONE))
    if not groups_q.exists() and not assign_records:
        # Nothing of this run reached the system of record: nothing to undo, nothing to authorise.
        return Receipt(status_code=200, body={"snapshot_id": str(snapshot.id), "groups_deleted": [],
                                              "employees_restored": 0, "checksum": scope_checksum(
                                                  tenant_id=tenant_id, scope=scope)}, replayed=False)
    _authorise(actor, tool="undo_run_effects", arguments={"snapshot_id": snapshot_id},
               what=_("undo a run's changes"))

    def work(record: IdempotencyRecord) -> tuple[int, dict[str, Any]]:
        groups = list(groups_q.select_for_update(of=("self",)).select_related("template"))
        assigned: dict[int, tuple[int, int | None]] = {}
        for r in assign_records:
            body = json.loads(r.response_body)
            previous = body.get("previous", {})
            for e in body["employee_ids"]:
                prev = previous.get(e)
                assigned[int(e)] = (int(body["group_id"]), None if prev is None else int(prev))
        problem = _undo_scope_problem(tenant_id, scope, groups, assigned)
        if problem:
            raise ScopeChanged(f"Someone changed this run's records since it wrote them ({problem}); nothing was "
                               "deleted. Look at them, then retry the undo or leave them as they are.")
        group_ids = {g.id for g in groups}
        existing = set(PayrollGroup.objects.filter(tenant_id=tenant_id).values_list("id", flat=True))
        for employee_id, (group_id, prev) in sorted(assigned.items()):
            back = prev if prev is not None and prev in existing and prev not in group_ids else None
            Employee.objects.filter(tenant_id=tenant_id, id=employee_id, group_id=group_id).update(group_id=back)
        deleted = [g.name for g in groups]
        PayrollGroup.objects.filter(id__in=group_ids).delete()
        return 200, {"snapshot_id": str(snapshot.id), "groups_deleted": deleted, "employees_restored": len(assigned),
                     "checksum": scope_checksum(tenant_id=tenant_id, scope=scope)}

    return _idempotent(actor=actor, operation="run_effects_undo", key=key,
                       request={"snapshot_id": snapshot_id, "import_keys": sorted(import_keys),
                                "assign_keys": sorted(assign_keys)}, work=work, atomic=True)


def _undo_scope_problem(tenant_id: int, scope: dict[str, Any], groups: list[PayrollGroup],
                        assigned: dict[int, tuple[int, int | None]]) -> str:
    """What differs between this run's records now and what its receipts say it left, or ""."""
    expected, actual = [], []
    for group in groups:
        items = {i.code: item_as_dict(i) for i in GroupItem.objects.filter(group=group)}
        template_items = ({i.code: item_as_dict(i) for i in group.template.items.all()}
                          if group.template_id else {})
        ours = sorted(e for e, (g, _) in assigned.items() if g == group.id)
        members = sorted(Employee.objects.filter(group=group).values_list("id", flat=True))
        # What the import wrote: the template's items (all, or the first ones of a
        # partial import), under the reserved name, and only our assignments.
        expected.append({"name": scope.get("group_name", group.name),
                         "items": [template_items.get(code) for code in sorted(items)], "employees": ours})
        actual.append({"name": group.name, "items": [items[code] for code in sorted(items)], "employees": members})
    moved = sorted(e for e, (g, _) in assigned.items()
                   if not Employee.objects.filter(tenant_id=tenant_id, id=e, group_id=g).exists())
    if checksum_of({"groups": expected, "moved": []}) == checksum_of({"groups": actual, "moved": moved}):
        return ""
    for exp, act in zip(expected, actual):
        if exp["name"] != act["name"]:
            return f"the group was renamed to “{act['name']}”"
        if exp["items"] != act["items"]:
            return f"the items of group “{act['name']}” were edited"
        if exp["employees"] != act["employees"]:
            return f"other employees were put into group “{act['name']}”"
    return f"{len(moved)} employee(s) this run assigned were moved to another group"


# --- City rules ------------------------------------------------------------------------------

def _figure_text(value: Decimal) -> str:
    """A figure as the rules keep it: plain decimal text, no exponent, no trailing zeros."""
    text = format(Decimal(value), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def city_rules_may_change(user) -> bool:
    """The city rules are global: only Keel's staff (Django's is_staff) change them, never a
    tenant's admin, whose change would move every other tenant's payroll."""
    return bool(getattr(user, "is_authenticated", False) and getattr(user, "is_staff", False))


def city_rule_period_change(*, user, period_id: int, version: str, rates: dict[str, dict[str, Decimal]],
                            bases: dict[str, dict[str, Decimal]], source: dict[str, Any], verified: bool,
                            note: str):
    """Change one period's figures (staff only: the rules are global, every tenant's trial reads
    them). `rates`: {kind or "housing_fund": {employee_rate, employer_rate}} in percent; `bases`:
    {"social_base" | "housing_fund_base" | a kind with its own base: {floor, cap}} in yuan.
    The changed period is validated as a look-up validates it (payroll.rules.period_checked),
    then written compare-and-set on `version` (the updated_at the form was rendered with): a
    change someone else saved meanwhile is a 409, never overwritten; the same change submitted
    twice writes once. Records who and when on the row."""
    from .models import CityRulePeriod
    from .rules import HOUSING_FUND, RulesFileError, period_checked

    if not city_rules_may_change(user):
        raise Forbidden(_("Only Keel's staff may change the city rules: every tenant's payroll reads them."),
                        code="staff_required")
    row = CityRulePeriod.objects.filter(id=period_id).first()
    if row is None:
        raise NotFound(_("No such city rules period."), code="rules_period_not_found")
    figures = json.loads(json.dumps(row.rules))  # a deep copy of plain JSON
    for contribution in figures.get("contributions", []):
        kind = contribution.get("kind")
        for field, value in rates.get(kind, {}).items():
            contribution[field] = _figure_text(value)
        if kind in bases and "base" in contribution:
            contribution["base"] = {k: _figure_text(v) for k, v in bases[kind].items()}
    fund = figures.setdefault("housing_fund", {})
    for field, value in rates.get(HOUSING_FUND, {}).items():
        fund[field] = _figure_text(value)
    for name in ("social_base", "housing_fund_base"):
        if name in bases:
            figures[name] = {k: _figure_text(v) for k, v in bases[name].items()}
    source = {"authority": str(source.get("authority", "")).strip(), "title": str(source.get("title", "")).strip(),
              "year": source.get("year"), "url": str(source.get("url") or "").strip()}
    if not source["url"]:
        del source["url"]
    note = (note or "").strip()[:2000]
    changed = {"rules": figures, "source": source, "verified": bool(verified), "note": note}
    try:
        period_checked(row.city, {"name": row.name, "name_zh": row.name_zh},
                       {**figures, "effective_from": row.effective_from.isoformat(),
                        "effective_to": row.effective_to.isoformat() if row.effective_to else None,
                        "source": source, "verified": bool(verified)})
    except RulesFileError as err:
        raise Unprocessable(_("These figures are refused: %(detail)s") % {"detail": str(err)},
                            code="invalid_rules") from None
    if all(getattr(row, name) == value for name, value in changed.items()):
        return row  # nothing to change (or a repeated submit of a change already made)
    now = timezone.now()
    written = CityRulePeriod.objects.filter(id=row.id, updated_at=_version_parse(version)).update(
        **changed, updated_by=user, updated_at=now)
    if not written:
        # Someone saved this period since the form was rendered: theirs stands until this
        # person has seen it. (The same figures submitted twice are caught above.)
        raise Conflict(_("Someone changed these rules since you opened the page; reload it and make your "
                         "change again."), code="rules_changed")
    log.info("city rules %s from %s changed by %s", row.city, row.effective_from, user.get_username())
    row.refresh_from_db()
    return row


def _version_parse(version: str):
    try:
        return strict_moment(version or "")
    except ValueError:
        return None
