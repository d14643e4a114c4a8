"""Importing the month's data: a group's monthly inputs (attendance and commission, a new version
per import) and the year-to-date openings of a customer that starts mid-year. All or nothing: a
file with any refused row changes nothing and answers 422 with every refusal (row, column,
code), so the person corrects the file once and imports it whole — a month computed from half a
file would pay the other half as if they had no overtime and no leave."""
from __future__ import annotations

import hashlib
from typing import Any

from django.db.models import Max
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from config.api import DomainError, Forbidden, NotFound, Unprocessable, strict_int
from idempotency.services import Receipt, key_checked
from tenants.actors import Actor
from tenants.models import Membership, Role

from payroll.models import Employee, IdempotencyRecord, MonthlyInputRow, MonthlyInputs, PayrollGroup, YearOpening
from payroll.reading.figures import FiguresRead, employee_header, monthly_inputs_read, year_openings_read
from payroll.reading.identities import identities_read

from .protocol import APPROVER_ROLES, id_checked, idempotent_write


def _raw_of(file: Any) -> bytes:
    if isinstance(file, (bytes, bytearray)):
        return bytes(file)
    if hasattr(file, "read"):
        return file.read()
    raise DomainError(_("Attach the file (CSV or XLSX)."), code="file_required", extra={"field": "file"})


def _actor_of(user, tenant_id: int) -> Actor:
    """The user as a member of `tenant_id`; another tenant's id reads as not found."""
    membership = Membership.objects.filter(user_id=getattr(user, "pk", None), tenant_id=tenant_id).first()
    if membership is None:
        raise NotFound(_("No such payroll group."), code="group_not_found")
    return Actor.of_member(membership)


# The payroll periods Keel reads and writes (the API's schema states the same bounds).
YEARS, MONTHS = (2000, 2100), (1, 12)


def period_checked(year: Any, month: Any) -> tuple[int, int]:
    """(year, month) from ints or digit strings; a refusal names the field."""
    checked = []
    for field, value, (low, high) in (("year", year, YEARS), ("month", month, MONTHS)):
        try:
            number = value if isinstance(value, int) and not isinstance(value, bool) else strict_int(value)
        except (TypeError, ValueError):
            number = None
        if number is None or not low <= number <= high:
            raise DomainError(_("%(field)s must be a whole number from %(low)s to %(high)s.")
                              % {"field": field, "low": low, "high": high}, code="invalid", extra={"field": field})
        checked.append(number)
    return checked[0], checked[1]


def _refused(read: FiguresRead) -> Unprocessable:
    count = len(read.refusals)
    return Unprocessable(ngettext("%(count)s refusal in the file; nothing was imported. Correct the file and "
                                  "import it again.",
                                  "%(count)s refusals in the file; nothing was imported. Correct the file and "
                                  "import it again.", count) % {"count": count},
                         code="file_refused", extra={"refusals": read.refusals, "columns": read.columns,
                                                     "unknown_columns": read.unknown_columns})


def inputs_body(inputs: MonthlyInputs, rows: list[MonthlyInputRow]) -> dict[str, Any]:
    """An import as the API and the page answer it."""
    return {"id": str(inputs.id), "group_id": str(inputs.group_id), "year": inputs.year, "month": inputs.month,
            "version": inputs.version, "filename": inputs.filename, "sha256": inputs.sha256,
            "columns": inputs.columns, "unknown_columns": [c["header"] for c in inputs.columns
                                                          if c["read_as"] == "unknown"],
            "refusals": inputs.refusals, "row_count": len(rows),
            "rows": [{"employee_id": str(r.employee_id), "values": r.values, "extra": r.extra} for r in rows],
            "created_at": inputs.created_at.isoformat() if inputs.created_at else None}


def monthly_inputs_import(*, tenant, group, year, month, file, filename: str, user, idempotency_key: str) -> Receipt:
    """Import a group's month of attendance and commission figures (CSV or XLSX; any member of
    the tenant). Every header is kept with what it was read as; unknown columns' values ride
    along in each row's `extra`. A file with refusals writes nothing (422, every refusal listed);
    a good file is the month's next version (201), the earlier versions kept. The same key with
    the same file replays the first answer."""
    tenant_id = getattr(tenant, "pk", tenant)
    key = key_checked(idempotency_key)
    group_id = id_checked(getattr(group, "pk", group), "group_id")
    actor = _actor_of(user, tenant_id)
    if not PayrollGroup.objects.filter(tenant_id=tenant_id, id=group_id).exists():
        raise NotFound(_("No such payroll group."), code="group_not_found")
    year, month = period_checked(year, month)
    raw = _raw_of(file)
    name = (filename or "").strip()[:255]
    read = monthly_inputs_read(tenant_id=tenant_id, group_id=group_id, year=year, month=month, filename=name,
                               raw=raw)
    if read.refusals:
        raise _refused(read)
    digest = hashlib.sha256(raw).hexdigest()

    def work(record: IdempotencyRecord) -> tuple[int, dict[str, Any]]:
        # The group's row lock serialises two imports of its months: each gets its own version.
        PayrollGroup.objects.select_for_update().filter(id=group_id).first()
        latest = MonthlyInputs.objects.filter(group_id=group_id, year=year, month=month).aggregate(
            v=Max("version"))["v"] or 0
        inputs = MonthlyInputs.objects.create(tenant_id=tenant_id, group_id=group_id, year=year, month=month,
                                              version=latest + 1, filename=name, sha256=digest,
                                              columns=read.columns, refusals=[], uploaded_by_id=actor.user_id)
        rows = MonthlyInputRow.objects.bulk_create(
            [MonthlyInputRow(inputs=inputs, employee_id=r.employee_id,
                             values={k: str(v) for k, v in r.values.items()}, extra=r.extra) for r in read.rows],
            batch_size=2000)
        return 201, inputs_body(inputs, rows)

    return idempotent_write(actor=actor, operation="monthly_inputs_import", key=key,
                            request={"group_id": group_id, "year": year, "month": month, "sha256": digest,
                                     "filename": name}, work=work, atomic=True)


def year_openings_import(*, actor: Actor, year, file, filename: str, idempotency_key: str,
                         replace: bool = False) -> Receipt:
    """Import the year-to-date figures of the previous payroll system (an approver or a tenant
    admin), once per employee and year: an employee who already has the year's opening is
    refused (row and column) unless a tenant admin imports with `replace`. All or nothing."""
    key = key_checked(idempotency_key)
    if actor.role not in APPROVER_ROLES:
        raise Forbidden(_("Only an approver or a tenant admin may import year-to-date figures."),
                        code="role_required")
    if replace and actor.role != Role.ADMIN:
        raise Forbidden(_("Only a tenant admin may replace year-to-date figures already imported."),
                        code="admin_required")
    year, _month = period_checked(year, 1)
    raw = _raw_of(file)
    name = (filename or "").strip()[:200]
    read = year_openings_read(tenant_id=actor.tenant_id, filename=name, raw=raw)
    if not replace:
        held = set(YearOpening.objects.filter(tenant_id=actor.tenant_id, year=year,
                                              employee_id__in=[r.employee_id for r in read.rows])
                   .values_list("employee_id", flat=True))
        header = employee_header(read)
        for row in read.rows:
            if row.employee_id in held:
                read.refuse(row.line, header, "opening_exists",
                            _("This employee's figures for %(year)s are already imported; a tenant admin may "
                              "replace them.") % {"year": year})
        read.keeping(read.rows)
    if read.refusals:
        raise _refused(read)
    digest = hashlib.sha256(raw).hexdigest()
    who = Membership.objects.filter(user_id=actor.user_id).values_list("user__username", flat=True).first() or ""

    def work(record: IdempotencyRecord) -> tuple[int, dict[str, Any]]:
        written = []
        for row in read.rows:
            figures = {name: row.values.get(name, 0) for name in (
                "cumulative_income", "cumulative_contributions", "cumulative_special_additional_deductions",
                "cumulative_tax_withheld")}
            opening, _created = YearOpening.objects.update_or_create(
                employee_id=row.employee_id, year=year,
                defaults={"tenant_id": actor.tenant_id, "months_employed": int(row.values["months_employed"]),
                          "source": f"{name}, {who}"[:300], **figures})
            written.append(opening)
        return 201, {"year": year, "imported": len(written), "replace": bool(replace), "filename": name,
                     "sha256": digest, "columns": read.columns, "unknown_columns": read.unknown_columns,
                     "employee_ids": [str(o.employee_id) for o in written]}

    return idempotent_write(actor=actor, operation="year_openings_import", key=key,
                            request={"year": year, "sha256": digest, "replace": bool(replace)}, work=work,
                            atomic=True)


def employee_identities_import(*, actor: Actor, file, filename: str, idempotency_key: str) -> Receipt:
    """Write the ID type and number, bank account and bank name an HR export gives for the
    tenant's employees (a tenant admin: the only role that reads them unmasked). All or nothing.
    The receipt names who was updated, never a number: receipts are stored and replayed."""
    key = key_checked(idempotency_key)
    if actor.role != Role.ADMIN:
        raise Forbidden(_("Only a tenant admin may import ID and bank details."), code="admin_required")
    raw = _raw_of(file)
    name = (filename or "").strip()[:200]
    read = identities_read(tenant_id=actor.tenant_id, filename=name, raw=raw)
    if read.refusals:
        raise _refused(read)
    digest = hashlib.sha256(raw).hexdigest()

    def work(record: IdempotencyRecord) -> tuple[int, dict[str, Any]]:
        for row in read.rows:
            Employee.objects.filter(tenant_id=actor.tenant_id, id=row.employee_id).update(**row.values)
        return 200, {"updated": len(read.rows), "employee_ids": [str(r.employee_id) for r in read.rows],
                     "filename": name, "columns": read.columns, "unknown_columns": read.unknown_columns}

    return idempotent_write(actor=actor, operation="employee_identities_import", key=key,
                            request={"sha256": digest}, work=work, atomic=True)


__all__ = ["employee_identities_import", "inputs_body", "monthly_inputs_import", "period_checked", "year_openings_import"]
