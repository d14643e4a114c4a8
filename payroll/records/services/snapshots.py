"""Snapshots: taking one (the whole tenant, or exactly the records a run will touch), restoring
one (a run's compensation, scoped; the whole tenant only through its own approved run), and
copying one into a sandbox tenant; who is told when a restore moves or removes their records."""
from __future__ import annotations

from typing import Any

from django.db import transaction
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from approvals.models import ApprovalRequest, ApprovalStatus
from config.api import Conflict, Forbidden, Unprocessable
from config.ids import new_id
from config.words import ngettext_noop, words
from idempotency.services import Receipt, key_checked
from tenants.actors import Actor
from tenants.models import Membership, Role
from timeline.services import event_append
from workflows.blueprints import Door
from workflows.models import Run
from workflows.services import run_start

from payroll.models import Employee, GroupItem, IdempotencyRecord, PayrollGroup, RemovedGroup, Snapshot
from payroll.records.selectors import (
    runs_that_made,
    checksum_of,
    configuration_checksum,
    configuration_of,
    scope_configuration_of,
    scope_normalised,
    snapshot_get,
)

from .protocol import authorise, id_checked, idempotent_write, name_checked


def snapshot_create(*, actor: Actor, label: str, idempotency_key: str,
                    scope: dict[str, Any] | None = None) -> Receipt:
    """Freeze payroll configuration with its checksum: the tenant's whole configuration,
    or (`scope`) exactly the records one run will touch. Every role may do it."""
    key = key_checked(idempotency_key)
    authorise(actor, tool=None, arguments=None, what=_("take a snapshot"))
    label = name_checked(label, _("snapshot label"))
    scope = scope_normalised(scope) if scope is not None else None

    def work(record: IdempotencyRecord) -> tuple[int, dict[str, Any]]:
        configuration = (configuration_of(tenant_id=actor.tenant_id) if scope is None
                         else scope_configuration_of(tenant_id=actor.tenant_id, scope=scope))
        snapshot = Snapshot.objects.create(tenant_id=actor.tenant_id, label=label, configuration=configuration,
                                           checksum=checksum_of(configuration), created_by_id=actor.user_id,
                                           scope=scope)
        return 201, {"snapshot_id": str(snapshot.id), "checksum": snapshot.checksum, "label": snapshot.label}

    request = {"label": label} if scope is None else {"label": label, "scope": scope}
    return idempotent_write(actor=actor, operation="snapshot_create", key=key, request=request, work=work, atomic=True)


def snapshot_restore(*, actor: Actor, snapshot_id: int, idempotency_key: str,
                     tenant_checksum: str | None = None) -> Receipt:
    """Put the tenant's groups, items and employee assignments back exactly as in the snapshot.

    Whole-tenant: it deletes every group created since, whoever created it. So a tenant
    admin asks for it, and a second person approves it: the admin's request starts a
    small run (blueprint payroll_tenant_restore, 202) whose restore waits at the gate with
    the exact list of what goes and what comes back. The agent then writes it under that
    approval, and only if the tenant is still as the approver saw it (`tenant_checksum`).
    It is never a run's compensation (that is run_effects_undo)."""
    key = key_checked(idempotency_key)
    snapshot_id = id_checked(snapshot_id, "snapshot_id")
    if actor.role is not None and actor.role != Role.ADMIN:
        raise Forbidden(_("Restoring a whole-tenant snapshot deletes everyone's later work; only a tenant admin may ask for it."),
                        code="admin_required")
    snapshot = snapshot_get(actor.tenant_id, snapshot_id)
    if snapshot.scope is not None:
        raise Unprocessable(_("This snapshot holds one run's records only; it cannot restore the tenant."),
                            code="scoped_snapshot")
    if actor.role is not None:
        return _tenant_restore_request(actor=actor, snapshot=snapshot, key=key)
    authorise(actor, tool="restore_tenant_snapshot",
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

    return idempotent_write(actor=actor, operation="snapshot_restore", key=key,
                       request={"snapshot_id": snapshot_id, "tenant_checksum": tenant_checksum}, work=work, atomic=True)


def _people(employees: list[tuple[str, str]]) -> Any:
    """"Li Na (D-0003), …" as words (each reader's separators), the first eight and how many more."""
    shown = [words(gettext_noop("%(name)s (%(number)s)"), name=name, number=number) for number, name in employees[:8]]
    more = len(employees) - len(shown)
    return words(gettext_noop("%(names)s and %(more)s more"), names=shown, more=more) if more > 0 else shown


def moved_tell(*, actor: Actor, group_id: int, previous: dict[int, int | None]) -> None:
    """Employees moved out of a group another conversation's run set up: that conversation is
    told who (by name and number), from which group into which, by whose approval of whose run,
    with a link to it — in the assignment's transaction, so once, exactly when the move commits.
    The same person's other conversation is told too: the walk that moved Li Na out of alice's
    first group left that conversation believing she was still in it."""
    by_group: dict[int, list[int]] = {}
    for eid, gid in previous.items():
        if gid is not None and gid != group_id:
            by_group.setdefault(gid, []).append(eid)
    if not by_group or not actor.run_id:
        return
    mover = Run.objects.filter(id=actor.run_id).select_related("created_by").first()
    if mover is None:
        return
    into = PayrollGroup.objects.filter(id=group_id).values_list("name", flat=True).first() or ""
    names = dict(PayrollGroup.objects.filter(id__in=list(by_group)).values_list("id", "name"))
    people = {e.id: (e.employee_no, e.name) for e in Employee.objects.filter(
        id__in=[e for ids in by_group.values() for e in ids])}
    who = mover.created_by.get_full_name() or mover.created_by.username
    approval = (ApprovalRequest.objects.filter(run_id=mover.id, status=ApprovalStatus.APPROVED, decided_by__isnull=False)
                .select_related("decided_by").order_by("-decided_at").first())
    for gid, run in runs_that_made(actor.tenant_id, list(by_group)).items():
        if run.id == mover.id or not run.conversation_id or run.conversation_id == mover.conversation_id:
            continue  # the moving run's own conversation hears it from its own card and news
        moved = sorted(people[e] for e in by_group[gid] if e in people)
        values = {"people": _people(moved), "name": names.get(gid, ""), "into": into, "who": who,
                  "count": len(moved)}
        if approval is not None:
            key = ngettext_noop("%(people)s was moved from your group “%(name)s” to “%(into)s” by %(approver)s's "
                                "approval of %(who)s's run.",
                                "%(people)s were moved from your group “%(name)s” to “%(into)s” by %(approver)s's "
                                "approval of %(who)s's run.", "count")
            values["approver"] = approval.decided_by.get_full_name() or approval.decided_by.username
        else:
            key = ngettext_noop("%(people)s was moved from your group “%(name)s” to “%(into)s” by %(who)s's run.",
                                "%(people)s were moved from your group “%(name)s” to “%(into)s” by %(who)s's run.",
                                "count")
        event_append(conversation_id=run.conversation_id, run_id=run.id, type="record.changed", data={
            "words": words(key, **values),
            "link": {"href": reverse("run", args=[mover.id]), "label": words(gettext_noop("Open that run"))},
            "group": str(gid), "by_run": str(mover.id), "employees": [n for n, _name in moved]})


def _removed_tell(*, actor: Actor, gone: list[tuple[int, str]]) -> None:
    """Nobody's records change behind their back: each group a restore deleted is
    remembered (its page then says who removed it, by which run), and whoever's run had made
    it is told in that run's conversation, with a link to the restore run. Written in the
    restore's own transaction, so the news is posted exactly when the deletion commits."""
    if not gone:
        return
    restore = Run.objects.filter(id=actor.run_id).select_related("created_by").first() if actor.run_id else None
    who = restore.created_by if restore is not None else None
    who_name = (who.get_full_name() or who.username) if who is not None else "?"
    made = runs_that_made(actor.tenant_id, [gid for gid, _name in gone])
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

    return idempotent_write(actor=actor, operation="snapshot_restore_request", key=key,
                       request={"snapshot_id": snapshot.id}, work=work, atomic=True)
