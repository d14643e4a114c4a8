"""Tenant-scoped reads of the payroll system of record, and the read-only pieces the
services and the approval card share (configuration, checksum, import diff)."""
from __future__ import annotations

import hashlib
import json
from decimal import Decimal
from typing import Any

from django.db.models import Count, Max, Prefetch, QuerySet, Sum
from django.utils.translation import gettext as _

from config.api import NotFound
from config.names import name_visible
from workflows.models import StateCoordinate

from .evaluator import FormulaError, item_names, item_of, known_names
from payroll.models import (
    Employee,
    GroupItem,
    PayrollGroup,
    PayrollTemplate,
    RemovedGroup,
    Snapshot,
    TemplateItem,
)

# Catalog regions → the location names employees carry.
REGION_LOCATIONS = {"SG": ["Singapore"], "HK": ["Hong Kong"], "US": ["United States", "US"]}


def import_scope(*, tenant_id: int, template_id: int) -> dict[str, Any]:
    """The employees a new group from this template is for: unassigned employees at the
    template's region, their count and monthly gross. The import itself assigns nobody;
    this is the size the approval matrix's thresholds compare."""
    template = PayrollTemplate.objects.filter(id=template_id).first()
    if template is None:
        return {}
    region = template.region
    employees = Employee.objects.filter(tenant_id=tenant_id, group__isnull=True)
    if region.startswith("CN-"):
        where = region.removeprefix("CN-")
        employees = employees.filter(location__iexact=where)
    elif region == "CN":
        where = "China"
        employees = employees.filter(currency="CNY")
    else:
        locations = REGION_LOCATIONS.get(region, [region])
        where = locations[0]
        employees = employees.filter(location__in=locations)
    totals = employees.aggregate(n=Count("id"), gross=Sum("base_salary"))
    return {"headcount": totals["n"] or 0, "monthly_gross": str(totals["gross"] or 0), "currency": template.currency,
            "location": where}


def runs_that_made(tenant_id: int, group_ids: list[int]) -> dict[int, Any]:
    """The run that set up each of these groups (its `group_id` coordinate), by group id."""
    return {int(c.value): c.run for c in StateCoordinate.objects.filter(
        tenant_id=tenant_id, key="group_id", value__in=[str(g) for g in group_ids] + list(group_ids))
        .select_related("run", "run__created_by")}


def listed_scope(*, tenant_id: int, employee_ids: list[str], currency: str) -> dict[str, Any]:
    """The size of an explicit employee list (a run started from an attachment)."""
    ids = [int(i) for i in employee_ids if str(i).isascii() and str(i).isdigit()]
    totals = Employee.objects.filter(tenant_id=tenant_id, id__in=ids).aggregate(n=Count("id"), gross=Sum("base_salary"))
    return {"headcount": totals["n"] or 0, "monthly_gross": str(totals["gross"] or 0), "currency": currency,
            "location": "the attached list", "listed": True}


# Functions a formula may call; everything else must be a declared variable or an earlier item.


# --- Catalog (global) --------------------------------------------------------------

def templates_all() -> QuerySet[PayrollTemplate]:
    return PayrollTemplate.objects.prefetch_related("items")


_catalog: tuple[tuple[Any, ...], list[PayrollTemplate]] | None = None


def template_catalog() -> list[PayrollTemplate]:
    """Every template version with its items (code, newest version first), to read only.
    A version never changes (a change is a new version), so the list is kept per process
    and read again only when the versions on record are not the ones it holds."""
    global _catalog
    mark = tuple(PayrollTemplate.objects.aggregate(n=Count("id"), last=Max("created_at")).values())
    catalog = _catalog
    if catalog is None or catalog[0] != mark:
        catalog = _catalog = (mark, list(templates_all().order_by("code", "-version")))
    return catalog[1]


def template_get(template_id: int) -> PayrollTemplate:
    try:
        return templates_all().get(pk=template_id)
    except PayrollTemplate.DoesNotExist:
        raise NotFound(_("No payroll template with id %(template_id)s; list them at /api/v1/payroll/templates/.")
                       % {"template_id": template_id},
                       code="template_not_found")


# --- Tenant data ------------------------------------------------------------------------

def groups_for(tenant_id: int) -> QuerySet[PayrollGroup]:
    return (PayrollGroup.objects.filter(tenant_id=tenant_id).select_related("template")
            .prefetch_related("items", Prefetch("employees", queryset=Employee.objects.order_by("employee_no"))))


def group_get(tenant_id: int, group_id: int) -> PayrollGroup:
    try:
        return groups_for(tenant_id).get(pk=group_id)
    except PayrollGroup.DoesNotExist:
        # Another tenant's id and a missing id answer the same: nothing leaks.
        raise NotFound(_("No such payroll group."), code="group_not_found")


def removed_group(tenant_id: int, group_id: int) -> RemovedGroup | None:
    """What is known of a group of this tenant that a restore deleted (None: never was one)."""
    return (RemovedGroup.objects.filter(tenant_id=tenant_id, group_id=group_id)
            .select_related("removed_by", "removed_by_run", "made_by_run").first())


def employees_for(tenant_id: int) -> QuerySet[Employee]:
    return Employee.objects.filter(tenant_id=tenant_id).select_related("group")


def employee_get(tenant_id: int, employee_id: int) -> Employee:
    try:
        return employees_for(tenant_id).get(pk=employee_id)
    except Employee.DoesNotExist:
        raise NotFound(_("No such employee."), code="employee_not_found")


def snapshots_for(tenant_id: int) -> QuerySet[Snapshot]:
    return Snapshot.objects.filter(tenant_id=tenant_id)


def snapshot_get(tenant_id: int, snapshot_id: int) -> Snapshot:
    try:
        return snapshots_for(tenant_id).get(pk=snapshot_id)
    except Snapshot.DoesNotExist:
        raise NotFound(_("No such snapshot."), code="snapshot_not_found")


# --- Configuration and checksum ---------------------------------------------------------

def rate_text(rate: Decimal | None) -> str | None:
    # One spelling for a rate whatever the database hands back (0.08 vs 0.080000).
    return None if rate is None else format(Decimal(rate).quantize(Decimal("0.000001")), "f")


def item_as_dict(item: GroupItem | TemplateItem) -> dict[str, Any]:
    # rate_name only where set, so a configuration without it keeps the checksum it had.
    return {"position": item.position, "code": item.code, "name": item.name, "kind": item.kind,
            "rate": rate_text(item.rate), "base": item.base, "formula": item.formula,
            **({"rate_name": item.rate_name} if item.rate_name else {})}


def group_as_dict(group: PayrollGroup) -> dict[str, Any]:
    return {
        "id": str(group.id), "name": group.name,
        "template_id": None if group.template_id is None else str(group.template_id),
        "template_version": group.template_version, "variables": list(group.variables),
        **({"city": group.city} if group.city else {}),
        "items": [item_as_dict(i) for i in GroupItem.objects.filter(group=group).order_by("position", "code")],
    }


def configuration_of(*, tenant_id: int) -> dict[str, Any]:
    """The tenant's groups, their items and employee assignments, in canonical order."""
    groups = [group_as_dict(g) for g in PayrollGroup.objects.filter(tenant_id=tenant_id).order_by("id")]
    # Only assignments: an employee hired later, in no group, does not change the configuration.
    assignments = [{"employee_id": str(e_id), "group_id": str(g_id)} for e_id, g_id in
                   Employee.objects.filter(tenant_id=tenant_id, group__isnull=False).order_by("id")
                   .values_list("id", "group_id")]
    return {"groups": groups, "assignments": assignments}


def checksum_of(configuration: dict[str, Any]) -> str:
    canonical = json.dumps(configuration, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def configuration_checksum(*, tenant_id: int) -> str:
    """sha256 of the canonical serialisation of the tenant's payroll configuration."""
    return checksum_of(configuration_of(tenant_id=tenant_id))


def scope_normalised(scope: dict[str, Any]) -> dict[str, Any]:
    return {"group_name": (scope.get("group_name") or "").strip(),
            "employee_ids": sorted({str(int(e)) for e in scope.get("employee_ids") or []}, key=int)}


def scope_configuration_of(*, tenant_id: int, scope: dict[str, Any]) -> dict[str, Any]:
    """Exactly the records one run touches, never the whole tenant: the group of the
    name it will create (absent before its import) and where each employee it will
    assign is now. Two runs on disjoint names and employees have disjoint scopes."""
    scope = scope_normalised(scope)
    groups = [group_as_dict(g) for g in PayrollGroup.objects.filter(tenant_id=tenant_id, name=scope["group_name"])
              .order_by("id")]
    assignments = [{"employee_id": str(e_id), "group_id": None if g_id is None else str(g_id)} for e_id, g_id in
                   Employee.objects.filter(tenant_id=tenant_id, id__in=[int(e) for e in scope["employee_ids"]])
                   .order_by("id").values_list("id", "group_id")]
    return {"scope": scope, "groups": groups, "assignments": assignments}


def scope_checksum(*, tenant_id: int, scope: dict[str, Any]) -> str:
    """sha256 over the records of one run's scope (see scope_configuration_of)."""
    return checksum_of(scope_configuration_of(tenant_id=tenant_id, scope=scope))


# --- Formulas -------------------------------------------------------------------------------

def formula_problem(*, item: Any, known: set[str]) -> str | None:
    """Why an item (a TemplateItem's fields) cannot be created with the names known so far (the
    template's variables and the items before it, besides the employee data, the city rules'
    parameters and the sums every formula may read: payroll.records.evaluator), or None."""
    try:
        names = item_names(item_of(item))
    except FormulaError as err:
        return str(err).removeprefix(f"item '{item.code}': ").removeprefix(f"item '{item.code}' ")
    allowed = known_names(known, [])
    unknown = sorted(set(names) - set(allowed))
    if unknown:
        return f"its formula names '{unknown[0]}', which is not known (known: {', '.join(allowed)})"
    return None


# --- Import diff --------------------------------------------------------------------------------

def import_diff(*, tenant_id: int, template_id: int, group_name: str) -> dict[str, Any]:
    """What importing `template_id` as `group_name` would change, without changing it.

    Lists the group and the items the import creates, and the problems that would
    stop it (a group of that name already exists; an item the import would refuse).
    """
    template = template_get(template_id)
    group_name = group_name.strip()
    problems: list[dict[str, str]] = []
    existing = PayrollGroup.objects.filter(tenant_id=tenant_id).named_like(group_name).values_list("name", flat=True)
    for other in existing[:1]:  # the same name, or one that reads the same (config.names)
        problems.append({"item": "", "message": f"A payroll group named '{name_visible(other)}' already exists."})
    known = set(template.variables)
    items = []
    for item in template.items.order_by("position"):
        problem = formula_problem(item=item, known=known)
        if problem:
            problems.append({"item": item.code, "message": f"Item '{item.name}' ({item.code}): {problem}."})
        known.add(item.code)
        items.append({"change": "create", **item_as_dict(item), "name_zh": item.name_zh})
    return {
        "template": {"id": str(template.id), "code": template.code, "version": template.version,
                     "name": template.name, "name_zh": template.name_zh},
        "groups": [{"change": "create", "name": group_name, "template_id": str(template.id),
                    "template_version": template.version}],
        "items": items,
        "problems": problems,
        # Over what this import touches only: another run's import elsewhere in the
        # tenant does not make this card stale.
        "checksum_before": scope_checksum(tenant_id=tenant_id, scope={"group_name": group_name}),
    }


def restore_diff(*, tenant_id: int, snapshot: Snapshot) -> dict[str, Any]:
    """What restoring the whole tenant to `snapshot` would change, without changing it:
    groups deleted (created since, whoever created them), groups brought back or put back
    as they were, and employees whose group changes. `lines` is what an approver reads."""
    now = configuration_of(tenant_id=tenant_id)
    then = snapshot.configuration
    now_groups = {g["id"]: g for g in now["groups"]}
    then_groups = {g["id"]: g for g in then["groups"]}
    now_assigned = {a["employee_id"]: a["group_id"] for a in now["assignments"]}
    then_assigned = {a["employee_id"]: a["group_id"] for a in then["assignments"]}
    moved = sorted({e for e in set(now_assigned) | set(then_assigned) if now_assigned.get(e) != then_assigned.get(e)},
                   key=int)
    members = {gid: sum(1 for g in now_assigned.values() if g == gid) for gid in now_groups}
    deleted = [now_groups[g] for g in sorted(set(now_groups) - set(then_groups), key=int)]
    returned = [then_groups[g] for g in sorted(set(then_groups) - set(now_groups), key=int)]
    changed = [then_groups[g] for g in sorted(set(now_groups) & set(then_groups), key=int)
               if checksum_of(now_groups[g]) != checksum_of(then_groups[g])]
    lines = ([{"sign": "−", "text": f"Group “{g['name']}” is deleted ({len(g['items'])} items, "
                                    f"{members[g['id']]} employees taken out of it)"} for g in deleted]
             + [{"sign": "+", "text": f"Group “{g['name']}” comes back ({len(g['items'])} items)"} for g in returned]
             + [{"sign": "~", "text": f"Group “{g['name']}” is put back as it was"} for g in changed])
    if moved:
        lines.append({"sign": "~", "text": f"{len(moved)} employee{'s' if len(moved) != 1 else ''} change group"})
    if not lines:
        lines.append({"sign": "=", "text": "Nothing: the tenant is already as the snapshot froze it"})
    return {"heading": f"Exactly what restoring “{snapshot.label}” will change, for the whole tenant",
            "lines": lines, "groups_deleted": [g["name"] for g in deleted],
            "groups_returned": [g["name"] for g in returned], "groups_changed": [g["name"] for g in changed],
            "employees_moved": len(moved), "checksum_before": checksum_of(now), "checksum_after": snapshot.checksum}
