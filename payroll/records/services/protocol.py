"""What every payroll write goes through before its work: authority (a person's role, or the
agent's decided approval), its arguments checked, and the idempotency protocol
(idempotency.services) over payroll's own table."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from approvals.authority import approval_covers
from config.api import DomainError, Forbidden, strict_int
from config.names import name_normalised
from config.words import Stored, words
from idempotency.services import Receipt, idempotent, request_hash
from tenants.actors import Actor
from tenants.models import Role

from payroll.models import IdempotencyRecord, PayrollGroup


MAX_KEY_LENGTH = 200
MAX_NAME_LENGTH = 200
APPROVER_ROLES = frozenset({Role.APPROVER, Role.ADMIN})


def authorise(actor: Actor, *, tool: str | None, arguments: dict[str, Any] | None, what: str) -> None:
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


def _request_hash(operation: str, request: dict[str, Any]) -> str:
    return request_hash(operation, request)


def _group_left(record: IdempotencyRecord) -> bool:
    """A failed import that left its group behind: a retry with the key resumes it."""
    return PayrollGroup.objects.filter(idempotency_record_id=record.pk).exists()


def idempotent_write(*, actor: Actor, operation: str, key: str, request: dict[str, Any],
                work: Callable[[IdempotencyRecord], tuple[int, dict[str, Any]]], atomic: bool) -> Receipt:
    """Run `work` once per (tenant, operation, key); `atomic` commits the work with its receipt."""
    return idempotent(IdempotencyRecord, tenant_id=actor.tenant_id, operation=operation, key=key, request=request,
                      work=work, atomic=atomic, keeps_partial=_group_left)


def id_checked(value: Any, what: str) -> int:
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


def name_checked(value: str, what: Stored) -> str:
    """A name as people read it (config.names): NFKC, refused with no readable character or
    any invisible one, at most MAX_NAME_LENGTH characters."""
    return name_normalised(value, field=what, max_length=MAX_NAME_LENGTH)


def group_name_normalised(value: str) -> str:
    """A new group's name as it is stored (see name_checked); DomainError (400) when it is not one."""
    return name_checked(value, words(gettext_noop("group name")))  # words: a run's question quotes the refusal
