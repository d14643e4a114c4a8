"""The compensation of a payroll run: its own effects undone by their receipts, and only if
the records it touched are as it left them."""
from __future__ import annotations

import json
from typing import Any

from django.utils.translation import gettext as _

from idempotency.models import IdempotencyState
from idempotency.services import Receipt, key_checked
from tenants.actors import Actor

from payroll.models import Employee, GroupItem, IdempotencyRecord, PayrollGroup
from payroll.records.selectors import checksum_of, item_as_dict, scope_checksum, snapshot_get

from .claims import ScopeChanged
from .protocol import authorise, id_checked, idempotent_write


def run_effects_undo(*, actor: Actor, snapshot_id: int, import_keys: list[str], assign_keys: list[str],
                     idempotency_key: str) -> Receipt:
    """Undo exactly one run's effects, by its receipts: the groups its imports created
    (under `import_keys`) and the assignments it changed (under `assign_keys`), each put
    back as its receipt says it was. Never anything else in the tenant.

    Before deleting, the records are compared (a checksum over this scope) with what the
    receipts say the run left; if someone changed them meanwhile, nothing is deleted and
    ScopeChanged says what differs."""
    key = key_checked(idempotency_key)
    snapshot_id = id_checked(snapshot_id, "snapshot_id")
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
    authorise(actor, tool="undo_run_effects", arguments={"snapshot_id": snapshot_id},
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

    return idempotent_write(actor=actor, operation="run_effects_undo", key=key,
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
    if len(moved) == 1:  # a reason code in English (logs, the developer view)
        return "1 employee this run assigned was moved to another group"
    return f"{len(moved)} employees this run assigned were moved to another group"
