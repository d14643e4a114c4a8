"""What a replay's sandbox needs of payroll (workflows.sandbox; found by the replay's
autodiscovery of each app's `sandbox` module, as the admin finds `admin` modules): the
employees the run was to assign, a whole-tenant snapshot a restore reads, any group that
already had the run's group name, and the employee list a turn carried, rebuilt."""
from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from workflows.sandbox import SandboxCopy, sandbox_attachment_register, sandbox_copier_register

from payroll.models import Employee, PayrollGroup, Snapshot
from payroll.records.services import employee_copy, snapshot_copy


def payroll_copy(copy: SandboxCopy, params: dict[str, Any]) -> dict[str, Any]:
    run = copy.run
    if params.get("employee_ids"):
        params["employee_ids"] = [str(employee_copy(e, tenant_id=copy.to_tenant_id).id) for e in Employee.objects.filter(
            tenant_id=copy.from_tenant_id, id__in=[int(e) for e in params["employee_ids"]])]
    if params.get("snapshot_id") and Snapshot.objects.filter(id=int(params["snapshot_id"]), tenant_id=copy.from_tenant_id,
                                                            scope__isnull=True).exists():
        # A whole-tenant restore: the configuration its snapshot froze, under the sandbox's own ids.
        params["snapshot_id"] = str(snapshot_copy(snapshot_id=int(params["snapshot_id"]),
                                                  from_tenant_id=copy.from_tenant_id,
                                                  to_tenant_id=copy.to_tenant_id).id)
    for name in {params.get("group_name"), *(run.params.get(k) for k in ("answer",))} - {None, ""}:
        # A group that already had the name (or one that reads the same) when the run started
        # (the reason it may have asked).
        earlier = PayrollGroup.objects.filter(tenant_id=copy.from_tenant_id, created_at__lt=run.created_at)
        for group in earlier.named_like(name):
            PayrollGroup.objects.create(tenant_id=copy.to_tenant_id, name=group.name, template=group.template,
                                        template_version=group.template_version)
    return params


def employee_list_rebuild(run, attachment_name: str, initial: dict[str, Any],
                          params: dict[str, Any]) -> tuple[str, bytes] | None:
    """The employee list the first message carried, rebuilt from what the run took from it (the
    employees it listed and the new ones it proposed): the file itself is not kept."""
    if not attachment_name.lower().endswith((".csv", ".xlsx")):
        return None
    listed = Employee.objects.filter(tenant_id=run.tenant_id,
                                     id__in=[int(e) for e in initial.get("employee_ids") or []])
    rows = [{"employee_no": e.employee_no, "name": e.name} for e in listed.order_by("employee_no")]
    rows += [dict(r) for r in params.get("new_employees") or []]
    columns = list(dict.fromkeys(k for r in rows for k in r)) or ["employee_no", "name"]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns)
    writer.writeheader()
    writer.writerows(rows)
    return f"{Path(attachment_name).stem}.csv", out.getvalue().encode()


sandbox_copier_register(payroll_copy)
sandbox_attachment_register(employee_list_rebuild)
