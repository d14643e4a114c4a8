"""The services: idempotency, authority, the stepped import, snapshot and restore."""
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.utils import timezone

from config.api import Conflict, DomainError, Forbidden, NotFound, Unprocessable
from payroll.records import services
from payroll.models import (
    Employee,
    GroupItem,
    IdempotencyRecord,
    IdempotencyState,
    PayrollGroup,
    PayrollTemplate,
)
from tests.payroll import LEGACY_CODE, actor_for, state_of, template, tenant, tenant_restore
from payroll.records.selectors import scope_checksum

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def test_it_seeds_a_bilingual_catalog_and_employees_idempotently():
    before = (PayrollTemplate.objects.count(), Employee.objects.count(),
              sorted(PayrollTemplate.objects.values_list("id", flat=True)))
    call_command("seed_demo", verbosity=0)
    assert (PayrollTemplate.objects.count(), Employee.objects.count(),
            sorted(PayrollTemplate.objects.values_list("id", flat=True))) == before
    assert PayrollTemplate.objects.exclude(code=LEGACY_CODE).count() >= 12
    assert all(t.name_zh for t in PayrollTemplate.objects.all())
    assert "legacy" in template(LEGACY_CODE).name.lower()
    assert 35 <= Employee.objects.filter(tenant=tenant("demo")).count() <= 45
    assert 1 <= Employee.objects.filter(tenant=tenant("other")).count() <= 5
    assert len(set(Employee.objects.filter(tenant=tenant("demo")).values_list("location", flat=True))) >= 4


def test_it_imports_a_template_into_a_group_with_its_items():
    t = template()
    receipt = services.template_import(actor=actor_for("bob"), template_id=t.id, group_name="Shanghai staff",
                                       idempotency_key="k1")
    group = PayrollGroup.objects.get()
    assert receipt.status_code == 201 and not receipt.replayed
    assert receipt.body == {"group_id": str(group.id), "template_id": str(t.id), "template_version": 1,
                            "group_name": "Shanghai staff", "items_created": t.items.count()}
    assert list(group.items.values_list("code", flat=True)) == list(t.items.values_list("code", flat=True))
    assert group.tenant == tenant("demo")


def test_it_replays_the_identical_receipt_with_no_second_group():
    t = template()
    first = services.template_import(actor=actor_for("bob"), template_id=t.id, group_name="G", idempotency_key="k")
    again = services.template_import(actor=actor_for("ada"), template_id=str(t.id), group_name="G",
                                     idempotency_key="k")
    assert again.replayed and again.body == first.body and again.status_code == first.status_code
    assert PayrollGroup.objects.count() == 1
    stored = IdempotencyRecord.objects.get(key="k")
    assert stored.state == IdempotencyState.DONE and stored.response_body.startswith('{"group_id":')


def test_it_refuses_a_reused_key_with_a_different_request_and_changes_nothing():
    t = template()
    services.template_import(actor=actor_for("bob"), template_id=t.id, group_name="G", idempotency_key="k")
    before = state_of()
    with pytest.raises(Unprocessable) as refused:
        services.template_import(actor=actor_for("bob"), template_id=t.id, group_name="Other name",
                                 idempotency_key="k")
    assert "different request" in refused.value.message
    assert state_of() == before


def test_it_answers_409_while_the_first_request_with_the_key_is_running():
    t = template()
    services.template_import(actor=actor_for("bob"), template_id=t.id, group_name="G", idempotency_key="k")
    IdempotencyRecord.objects.filter(key="k").update(state=IdempotencyState.IN_PROGRESS,
                                                     expires_at=timezone.now() + timedelta(seconds=30))
    with pytest.raises(Conflict) as refused:
        services.template_import(actor=actor_for("bob"), template_id=t.id, group_name="G", idempotency_key="k")
    assert refused.value.code == "idempotency_in_progress"


def test_it_takes_over_an_expired_lease_and_resumes_the_partial_group():
    """A worker died after the group and two items committed: the next caller finishes that group."""
    t = template()
    record = IdempotencyRecord.objects.create(
        tenant=tenant("demo"), operation="template_import", key="k", lease_token="dead",
        request_hash=services._request_hash("template_import", {"template_id": t.id, "group_name": "G"}),
        expires_at=timezone.now() - timedelta(seconds=1))
    partial = PayrollGroup.objects.create(tenant=tenant("demo"), name="G", template=t, template_version=1,
                                          variables=t.variables, idempotency_record=record)
    for item in t.items.all()[:2]:
        GroupItem.objects.create(group=partial, position=item.position, code=item.code, name=item.name,
                                 kind=item.kind, rate=item.rate, base=item.base, formula=item.formula)
    receipt = services.template_import(actor=actor_for("bob"), template_id=t.id, group_name="G", idempotency_key="k")
    assert receipt.body["group_id"] == str(partial.id) and not receipt.replayed
    assert PayrollGroup.objects.count() == 1 and partial.items.count() == t.items.count()


def test_it_requires_an_idempotency_key_and_changes_nothing():
    before = state_of()
    for key in ("", "   ", None):
        with pytest.raises(DomainError) as refused:
            services.template_import(actor=actor_for("bob"), template_id=template().id, group_name="G",
                                     idempotency_key=key)
        assert refused.value.status_code == 400 and "Idempotency-Key" in refused.value.message
    assert state_of() == before


def test_it_refuses_a_business_user_importing_or_restoring_and_changes_nothing():
    snapshot = services.snapshot_create(actor=actor_for("alice"), label="before", idempotency_key="s")
    before = state_of()
    with pytest.raises(Forbidden):
        services.template_import(actor=actor_for("alice"), template_id=template().id, group_name="G",
                                 idempotency_key="k")
    with pytest.raises(Forbidden):
        services.snapshot_restore(actor=actor_for("alice"), snapshot_id=snapshot.body["snapshot_id"],
                                  idempotency_key="r")
    assert state_of() == before


def test_it_refuses_the_agent_without_a_decided_approval_and_changes_nothing():
    before = state_of()
    with pytest.raises(Forbidden) as refused:
        services.template_import(actor=actor_for("bob", as_agent=True), template_id=template().id,
                                 group_name="G", idempotency_key="k")
    assert refused.value.code == "approval_required"
    assert state_of() == before


def test_it_lets_the_agent_snapshot_without_an_approval():
    receipt = services.snapshot_create(actor=actor_for("alice", as_agent=True), label="agent", idempotency_key="s")
    assert receipt.status_code == 201 and receipt.body["label"] == "agent"


def test_it_answers_an_unknown_template_with_404_and_changes_nothing():
    before = state_of()
    with pytest.raises(NotFound) as refused:
        services.template_import(actor=actor_for("bob"), template_id=12345, group_name="G", idempotency_key="k")
    assert "No payroll template with id 12345" in refused.value.message
    with pytest.raises(DomainError) as refused:
        services.template_import(actor=actor_for("bob"), template_id="abc", group_name="G", idempotency_key="k")
    assert refused.value.status_code == 400 and "numeric id" in refused.value.message
    assert state_of() == before


def test_it_refuses_a_second_group_with_the_same_name_and_keeps_the_first():
    services.template_import(actor=actor_for("bob"), template_id=template().id, group_name="G", idempotency_key="a")
    before = state_of()
    with pytest.raises(Conflict) as refused:
        services.template_import(actor=actor_for("bob"), template_id=template().id, group_name="G",
                                 idempotency_key="b")
    assert refused.value.code == "group_name_taken"
    assert state_of() == before


def test_it_answers_404_for_another_tenants_snapshot_and_changes_nothing():
    theirs = services.snapshot_create(actor=actor_for("oscar"), label="theirs", idempotency_key="s")
    before = state_of()
    with pytest.raises(NotFound):
        services.snapshot_restore(actor=actor_for("ada"), snapshot_id=theirs.body["snapshot_id"], idempotency_key="r")
    assert state_of() == before


def test_the_snapshot_import_restore_round_trip_gives_back_the_checksum():
    bob = actor_for("bob")
    demo_id = bob.tenant_id
    base = services.snapshot_create(actor=bob, label="empty", idempotency_key="s0")
    first = services.template_import(actor=bob, template_id=template().id, group_name="Shanghai", idempotency_key="i1")
    employees = list(Employee.objects.filter(tenant_id=demo_id).values_list("id", flat=True)[:5])
    services.employees_assign(actor=bob, group_id=first.body["group_id"], employee_ids=employees, idempotency_key="a1")
    snap = services.snapshot_create(actor=bob, label="one group", idempotency_key="s1")
    assert snap.body["checksum"] == services.configuration_checksum(tenant_id=demo_id) != base.body["checksum"]

    services.template_import(actor=bob, template_id=template("cn-bj-monthly-salaried").id, group_name="Beijing",
                             idempotency_key="i2")
    GroupItem.objects.filter(group_id=first.body["group_id"], code="pension_ee").update(rate=Decimal("0.09"))
    Employee.objects.filter(id=employees[0]).update(group=None)
    assert services.configuration_checksum(tenant_id=demo_id) != snap.body["checksum"]

    # Whole-tenant restore is a tenant admin's request, and a second person's approval.
    with pytest.raises(Forbidden):
        services.snapshot_restore(actor=bob, snapshot_id=snap.body["snapshot_id"], idempotency_key="r1")
    assert tenant_restore(snap.body["snapshot_id"], key="r1").status == "completed"
    assert services.configuration_checksum(tenant_id=demo_id) == snap.body["checksum"]
    assert list(PayrollGroup.objects.filter(tenant_id=demo_id).values_list("name", flat=True)) == ["Shanghai"]
    assert Employee.objects.filter(group_id=first.body["group_id"]).count() == 5
    assert tenant_restore(base.body["snapshot_id"], key="r0").status == "completed"
    assert services.configuration_checksum(tenant_id=demo_id) == base.body["checksum"]
    assert not PayrollGroup.objects.filter(tenant_id=demo_id).exists()


def test_changing_one_items_rate_changes_the_checksum():
    bob = actor_for("bob")
    receipt = services.template_import(actor=bob, template_id=template().id, group_name="G", idempotency_key="k")
    before = services.configuration_checksum(tenant_id=bob.tenant_id)
    item = GroupItem.objects.get(group_id=receipt.body["group_id"], code="base_pay")
    item.rate = Decimal("0.05")
    item.save()
    assert services.configuration_checksum(tenant_id=bob.tenant_id) != before
    item.rate = Decimal("1.000000")
    item.save()
    assert services.configuration_checksum(tenant_id=bob.tenant_id) == before


def test_the_legacy_import_leaves_a_partial_group_that_a_restore_removes():
    bob = actor_for("bob")
    legacy = template(LEGACY_CODE)
    snap = services.snapshot_create(actor=bob, label="before legacy", idempotency_key="s")
    with pytest.raises(Unprocessable) as refused:
        services.template_import(actor=bob, template_id=legacy.id, group_name="Legacy", idempotency_key="L")
    assert "Grade allowance" in refused.value.message and "legacy_grade_factor" in refused.value.message
    partial = PayrollGroup.objects.get(tenant_id=bob.tenant_id, name="Legacy")
    assert list(partial.items.values_list("code", flat=True)) == ["base_pay", "pension_ee"]
    assert partial.items.count() < legacy.items.count()
    assert services.configuration_checksum(tenant_id=bob.tenant_id) != snap.body["checksum"]
    # A retry with the same key resumes the same partial group and stops at the same item.
    with pytest.raises(Unprocessable):
        services.template_import(actor=bob, template_id=legacy.id, group_name="Legacy", idempotency_key="L")
    assert PayrollGroup.objects.filter(tenant_id=bob.tenant_id).count() == 1

    assert tenant_restore(snap.body["snapshot_id"]).status == "completed"
    assert not PayrollGroup.objects.filter(tenant_id=bob.tenant_id).exists()
    assert not GroupItem.objects.filter(group__tenant_id=bob.tenant_id).exists()
    assert services.configuration_checksum(tenant_id=bob.tenant_id) == snap.body["checksum"]


def test_the_diff_lists_exactly_the_group_and_items_the_import_creates():
    bob = actor_for("bob")
    t = template("cn-sales-commission")
    diff = services.import_diff(tenant_id=bob.tenant_id, template_id=t.id, group_name="Sales")
    # The checksum covers what this import touches (the new name), not the whole tenant.
    assert diff["problems"] == [] and diff["checksum_before"] == scope_checksum(
        tenant_id=bob.tenant_id, scope={"group_name": "Sales"})
    before_groups = set(PayrollGroup.objects.values_list("id", flat=True))
    services.template_import(actor=bob, template_id=t.id, group_name="Sales", idempotency_key="k")
    created = PayrollGroup.objects.exclude(id__in=before_groups)
    assert [{"name": g.name, "template_id": str(g.template_id), "template_version": g.template_version}
            for g in created] == [{k: g[k] for k in ("name", "template_id", "template_version")}
                                  for g in diff["groups"]]
    from payroll.records.selectors import item_as_dict

    assert [item_as_dict(i) for i in created.get().items.all()] == [
        {k: v for k, v in i.items() if k not in ("change", "name_zh")} for i in diff["items"]]


def test_the_diff_of_the_legacy_template_names_the_item_that_will_fail():
    diff = services.import_diff(tenant_id=tenant("demo").id, template_id=template(LEGACY_CODE).id, group_name="L")
    assert [p["item"] for p in diff["problems"]] == ["grade_allowance"]
    assert PayrollGroup.objects.count() == 0


def test_it_assigns_only_the_tenants_own_employees():
    bob = actor_for("bob")
    group = services.template_import(actor=bob, template_id=template().id, group_name="G", idempotency_key="k")
    oscars = Employee.objects.filter(tenant=tenant("other")).first()
    before = state_of()
    with pytest.raises(NotFound):
        services.employees_assign(actor=bob, group_id=group.body["group_id"], employee_ids=[oscars.id],
                                  idempotency_key="a")
    with pytest.raises(Forbidden):
        mine = Employee.objects.filter(tenant=tenant("demo")).first()
        services.employees_assign(actor=actor_for("alice"), group_id=group.body["group_id"], employee_ids=[mine.id],
                                  idempotency_key="a")
    assert state_of() == before
