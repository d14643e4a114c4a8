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

import hashlib
import json
import logging
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from approvals.authority import approval_covers
from config.api import Conflict, DomainError, Forbidden, NotFound, Unprocessable
from tenants.models import Role

from .models import (
    Employee,
    GroupItem,
    IdempotencyRecord,
    IdempotencyState,
    PayrollGroup,
    Snapshot,
)
from .selectors import (
    checksum_of,
    configuration_checksum,
    configuration_of,
    formula_problem,
    import_diff,
    snapshot_get,
    template_get,
)

__all__ = [
    "Actor", "Receipt", "snapshot_create", "template_import", "snapshot_restore", "employees_assign",
    "import_diff", "configuration_checksum",
]

log = logging.getLogger(__name__)

# How long a claim is trusted before another caller may assume its worker died.
def idempotency_lease() -> timedelta:
    """How long a claimed key stays another caller's before a retry may take it over
    (the claimer died): a minute by default; the recovery tests shorten it."""
    return timedelta(seconds=float(os.environ.get("KEEL_IDEMPOTENCY_LEASE_SECONDS", "60")))
MAX_KEY_LENGTH = 200
MAX_NAME_LENGTH = 200
APPROVER_ROLES = frozenset({Role.APPROVER, Role.ADMIN})


@dataclass(frozen=True)
class Actor:
    tenant_id: int
    user_id: int | None          # the person (or the user on whose behalf the agent runs)
    role: str | None             # the membership role of a person; None when the agent writes
    approval_id: int | None = None  # the agent: the decided approval that authorises this write


@dataclass(frozen=True)
class Receipt:
    status_code: int
    body: dict
    replayed: bool


class KeyRequired(DomainError):
    status_code = 400
    code = "idempotency_key_required"


# --- Authority -------------------------------------------------------------------------------

def _authorise(actor: Actor, *, tool: str | None, arguments: dict[str, Any] | None, what: str) -> None:
    """A person needs an approver role; the agent needs a decided approval (tool=None: neither)."""
    if tool is None:
        return
    if actor.role is not None:
        if actor.role not in APPROVER_ROLES:
            raise Forbidden(f"Only an approver or a tenant admin may {what}; ask one to do it or to approve it.",
                            code="role_required")
        return
    approval_covers(tenant_id=actor.tenant_id, approval_id=actor.approval_id, tool=tool, arguments=arguments or {})


# --- Idempotency -------------------------------------------------------------------------------

def _key_checked(key: str | None) -> str:
    key = (key or "").strip()
    if not key:
        raise KeyRequired("Send an Idempotency-Key header (any unique string, e.g. a UUID) with every write, "
                          "and the same key when you retry it.")
    if len(key) > MAX_KEY_LENGTH:
        raise KeyRequired(f"The Idempotency-Key may be at most {MAX_KEY_LENGTH} characters.",
                          code="idempotency_key_too_long")
    return key


def _request_hash(operation: str, request: dict[str, Any]) -> str:
    canonical = json.dumps({"operation": operation, "request": request}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _replay(record: IdempotencyRecord) -> Receipt:
    return Receipt(status_code=record.response_status or 200, body=json.loads(record.response_body), replayed=True)


def _claim(*, tenant_id: int, operation: str, key: str, request_hash: str) -> IdempotencyRecord | Receipt:
    """The record this caller now holds, or the stored receipt to replay."""
    for _ in range(3):  # the row may vanish between our insert and our read (a failed first try)
        token = uuid.uuid4().hex
        try:
            with transaction.atomic():
                return IdempotencyRecord.objects.create(
                    tenant_id=tenant_id, operation=operation, key=key, request_hash=request_hash,
                    state=IdempotencyState.IN_PROGRESS, lease_token=token,
                    expires_at=timezone.now() + idempotency_lease())
        except IntegrityError:
            pass  # someone holds (or held) this key: read what they left
        existing = IdempotencyRecord.objects.filter(tenant_id=tenant_id, operation=operation, key=key).first()
        if existing is None:
            continue
        if existing.request_hash != request_hash:
            raise Unprocessable("This Idempotency-Key was already used for a different request. "
                                "Use a new key for a new request.", code="idempotency_key_reused")
        if existing.state == IdempotencyState.DONE:
            return _replay(existing)
        now = timezone.now()
        if existing.state == IdempotencyState.IN_PROGRESS and existing.expires_at and existing.expires_at > now:
            raise Conflict("A request with this Idempotency-Key is still in progress; retry it in a moment.",
                           code="idempotency_in_progress")
        # Failed part-way, or its worker died: take it over, compare-and-set on the
        # lease so exactly one of several late callers wins.
        taken = IdempotencyRecord.objects.filter(pk=existing.pk, state=existing.state,
                                                 lease_token=existing.lease_token).update(
            state=IdempotencyState.IN_PROGRESS, lease_token=token, expires_at=now + idempotency_lease(),
            updated_at=now)
        if not taken:
            raise Conflict("A request with this Idempotency-Key is still in progress; retry it in a moment.",
                           code="idempotency_in_progress")
        existing.refresh_from_db()
        log.info("idempotency takeover %s:%s", operation, key)
        return existing
    raise Conflict("A request with this Idempotency-Key is still in progress; retry it in a moment.",
                   code="idempotency_in_progress")


def _complete(record: IdempotencyRecord, status_code: int, body: dict[str, Any]) -> Receipt:
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    stored = IdempotencyRecord.objects.filter(pk=record.pk, lease_token=record.lease_token).update(
        state=IdempotencyState.DONE, response_status=status_code, response_body=text, expires_at=None,
        updated_at=timezone.now())
    if not stored:
        # Our lease expired and another caller took over; the effect is done either way.
        log.warning("idempotency lease lost before the receipt was stored: %s:%s", record.operation, record.key)
    # Return what we stored, parsed back, so the first answer and every replay render the same bytes.
    return Receipt(status_code=status_code, body=json.loads(text), replayed=False)


def _release(record: IdempotencyRecord) -> None:
    """After a failed attempt: let a retry run again (and resume any partial state)."""
    mine = IdempotencyRecord.objects.filter(pk=record.pk, lease_token=record.lease_token)
    if PayrollGroup.objects.filter(idempotency_record_id=record.pk).exists():
        mine.update(state=IdempotencyState.FAILED, expires_at=None, updated_at=timezone.now())
    else:
        mine.delete()  # nothing was written: as if the request never came


def _idempotent(*, actor: Actor, operation: str, key: str, request: dict[str, Any],
                work: Callable[[IdempotencyRecord], tuple[int, dict[str, Any]]], atomic: bool) -> Receipt:
    """Run `work` once per (tenant, operation, key); `atomic` commits the work with its receipt."""
    claimed = _claim(tenant_id=actor.tenant_id, operation=operation, key=key,
                     request_hash=_request_hash(operation, request))
    if isinstance(claimed, Receipt):
        return claimed
    record = claimed
    try:
        if atomic:
            with transaction.atomic():
                status_code, body = work(record)
                return _complete(record, status_code, body)
        status_code, body = work(record)
    except BaseException:
        _release(record)
        raise
    return _complete(record, status_code, body)


# --- Helpers for arguments ----------------------------------------------------------------------

def _id_checked(value: Any, what: str) -> int:
    """Ids arrive as strings (the API's spelling) or ints; anything else is a 400."""
    if isinstance(value, bool):
        value = None
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        raise DomainError(f"The {what} must be a numeric id (a string of digits), not {value!r}.", code="invalid_id")
    if number <= 0 or number >= 2**63:
        raise DomainError(f"The {what} {value!r} is out of range.", code="invalid_id")
    return number


def _name_checked(value: str, what: str) -> str:
    value = (value or "").strip()
    if not value:
        raise DomainError(f"Give the {what}; it may not be empty.", code="invalid")
    if len(value) > MAX_NAME_LENGTH:
        raise DomainError(f"The {what} may be at most {MAX_NAME_LENGTH} characters.", code="invalid")
    return value


# --- Services -----------------------------------------------------------------------------------

def snapshot_create(*, actor: Actor, label: str, idempotency_key: str) -> Receipt:
    """Freeze the tenant's payroll configuration with its checksum. Every role may do it."""
    key = _key_checked(idempotency_key)
    _authorise(actor, tool=None, arguments=None, what="take a snapshot")
    label = _name_checked(label, "snapshot label")

    def work(record: IdempotencyRecord) -> tuple[int, dict[str, Any]]:
        configuration = configuration_of(tenant_id=actor.tenant_id)
        snapshot = Snapshot.objects.create(tenant_id=actor.tenant_id, label=label, configuration=configuration,
                                           checksum=checksum_of(configuration), created_by_id=actor.user_id)
        return 201, {"snapshot_id": str(snapshot.id), "checksum": snapshot.checksum, "label": snapshot.label}

    return _idempotent(actor=actor, operation="snapshot_create", key=key, request={"label": label},
                       work=work, atomic=True)


def template_import(*, actor: Actor, template_id: int, group_name: str, idempotency_key: str) -> Receipt:
    """Import a catalog template into a new payroll group, committed in steps.

    The group row commits first, then each item in its own transaction, as a real
    import would; an item whose formula names an undeclared variable stops the
    import there (422) and leaves the partial group, linked to this key so that a
    retry with the same key resumes it instead of starting a second group.
    """
    key = _key_checked(idempotency_key)
    template_id = _id_checked(template_id, "template_id")
    group_name = _name_checked(group_name, "group name")
    _authorise(actor, tool="import_template", arguments={"template_id": template_id, "group_name": group_name},
               what="import a payroll template")
    template = template_get(template_id)

    def work(record: IdempotencyRecord) -> tuple[int, dict[str, Any]]:
        group = PayrollGroup.objects.filter(tenant_id=actor.tenant_id, idempotency_record=record).first()
        if group is None:
            try:
                with transaction.atomic():
                    group = PayrollGroup.objects.create(
                        tenant_id=actor.tenant_id, name=group_name, template=template,
                        template_version=template.version, variables=list(template.variables),
                        idempotency_record=record)
            except IntegrityError:
                raise Conflict(f"A payroll group named '{group_name}' already exists; choose another name.",
                               code="group_name_taken")
        existing = set(GroupItem.objects.filter(group=group).values_list("code", flat=True))
        known = set(template.variables)
        for item in template.items.order_by("position"):
            if item.code not in existing:
                with transaction.atomic():
                    # Checked at the moment of creation, as the legacy importer did.
                    problem = formula_problem(formula=item.formula, base=item.base, known=known)
                    if problem:
                        raise Unprocessable(
                            f"Import stopped at item '{item.name}' ({item.code}): {problem}. The group "
                            f"'{group_name}' was left partly imported; restore a snapshot to remove it.",
                            code="formula_invalid", extra={"item": item.code, "group_id": str(group.id)})
                    GroupItem.objects.create(group=group, position=item.position, code=item.code, name=item.name,
                                             kind=item.kind, rate=item.rate, base=item.base, formula=item.formula)
            known.add(item.code)
        return 201, {"group_id": str(group.id), "template_id": str(template.id),
                     "template_version": template.version, "group_name": group.name,
                     "items_created": GroupItem.objects.filter(group=group).count()}

    return _idempotent(actor=actor, operation="template_import", key=key,
                       request={"template_id": template_id, "group_name": group_name}, work=work, atomic=False)


def snapshot_restore(*, actor: Actor, snapshot_id: int, idempotency_key: str) -> Receipt:
    """Put the tenant's groups, items and employee assignments back exactly as in the snapshot."""
    key = _key_checked(idempotency_key)
    snapshot_id = _id_checked(snapshot_id, "snapshot_id")
    _authorise(actor, tool="restore_snapshot", arguments={"snapshot_id": snapshot_id},
               what="restore a payroll snapshot")
    snapshot = snapshot_get(actor.tenant_id, snapshot_id)

    def work(record: IdempotencyRecord) -> tuple[int, dict[str, Any]]:
        tenant_id = actor.tenant_id
        configuration = snapshot.configuration
        kept = [int(g["id"]) for g in configuration["groups"]]
        # Groups created after the snapshot go (their items cascade, employees are unassigned).
        PayrollGroup.objects.filter(tenant_id=tenant_id).exclude(id__in=kept).delete()
        Employee.objects.filter(tenant_id=tenant_id, group__isnull=False).update(group=None)
        GroupItem.objects.filter(group__tenant_id=tenant_id).delete()
        for g in configuration["groups"]:
            fields = {"name": g["name"], "template_id": None if g["template_id"] is None else int(g["template_id"]),
                      "template_version": g["template_version"], "variables": g["variables"]}
            updated = PayrollGroup.objects.filter(id=int(g["id"]), tenant_id=tenant_id).update(**fields)
            if not updated:
                PayrollGroup.objects.create(id=int(g["id"]), tenant_id=tenant_id, **fields)
            GroupItem.objects.bulk_create([
                GroupItem(group_id=int(g["id"]), position=i["position"], code=i["code"], name=i["name"],
                          kind=i["kind"], rate=i["rate"], base=i["base"], formula=i["formula"])
                for i in g["items"]])
        by_group: dict[int, list[int]] = {}
        for a in configuration["assignments"]:
            by_group.setdefault(int(a["group_id"]), []).append(int(a["employee_id"]))
        for group_id, employee_ids in by_group.items():
            Employee.objects.filter(tenant_id=tenant_id, id__in=employee_ids).update(group_id=group_id)
        return 200, {"snapshot_id": str(snapshot.id), "checksum": configuration_checksum(tenant_id=tenant_id)}

    return _idempotent(actor=actor, operation="snapshot_restore", key=key, request={"snapshot_id": snapshot_id},
                       work=work, atomic=True)


def employees_assign(*, actor: Actor, group_id: int, employee_ids: list[int], idempotency_key: str) -> Receipt:
    """Assign employees to a payroll group. A person needs an approver role; the agent needs no approval."""
    key = _key_checked(idempotency_key)
    group_id = _id_checked(group_id, "group_id")
    ids = sorted({_id_checked(e, "employee id") for e in employee_ids or []})
    if actor.role is not None and actor.role not in APPROVER_ROLES:
        raise Forbidden("Only an approver or a tenant admin may assign employees to a payroll group.",
                        code="role_required")
    if not ids:
        raise DomainError("Give at least one employee id.", code="invalid")
    if not PayrollGroup.objects.filter(tenant_id=actor.tenant_id, id=group_id).exists():
        raise NotFound("No such payroll group.", code="group_not_found")
    found = set(Employee.objects.filter(tenant_id=actor.tenant_id, id__in=ids).values_list("id", flat=True))
    missing = [str(i) for i in ids if i not in found]
    if missing:
        raise NotFound(f"No such employee: {', '.join(missing)}.", code="employee_not_found")

    def work(record: IdempotencyRecord) -> tuple[int, dict[str, Any]]:
        Employee.objects.filter(tenant_id=actor.tenant_id, id__in=ids).update(group_id=group_id)
        return 200, {"group_id": str(group_id), "employee_ids": [str(i) for i in ids], "assigned": len(ids)}

    return _idempotent(actor=actor, operation="employees_assign", key=key,
                       request={"group_id": group_id, "employee_ids": ids}, work=work, atomic=True)
