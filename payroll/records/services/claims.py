"""Claims: who is about to create or change a record. A run reserves its new group's name and
the employees it will assign before its first effect, so that two runs never race for them."""
from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from config.api import Conflict
from config.names import name_visible
from config.words import words
from tenants.actors import Actor

from payroll.models import ClaimKind, Employee, PayrollGroup, RecordClaim, group_name_key

from .protocol import name_checked


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
    group_name = name_checked(group_name, _("group name"))
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
        group_name_free(tenant_id, group_name, own_record_id=own_record_id)
    return created


def group_name_free(tenant_id: int, group_name: str, *, own_record_id: int | None = None) -> None:
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


def claim_check(actor: Actor, group_name: str) -> None:
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
