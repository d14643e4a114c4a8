"""/api/v1/payroll/ and /payroll/ pages: bad input, tenancy, replay over HTTP."""
import json

import pytest

from payroll.records import services
from payroll.models import Employee, PayrollGroup, PayrollTemplate
from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from config.api import Forbidden
from tests.payroll import LEGACY_CODE, actor_for, api, page, state_of, template
from workflows.models import Run
from tests.helpers import drive, membership, no_broker

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def post(client, path: str, body, key: str | None = "k1", raw: bool = False):
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
    data = body if raw else json.dumps(body)
    return client.post(path, data, content_type="application/json", **headers)


def demo_objects() -> dict[str, str]:
    """One of each demo object: a group, an employee, a snapshot."""
    bob = actor_for("bob")
    group = services.template_import(actor=bob, template_id=template().id, group_name="G", idempotency_key="g")
    snapshot = services.snapshot_create(actor=bob, label="s", idempotency_key="s")
    employee = Employee.objects.filter(tenant_id=bob.tenant_id).first()
    return {"groups": group.body["group_id"], "snapshots": snapshot.body["snapshot_id"], "employees": str(employee.id)}


def test_it_lists_the_catalog_with_string_ids():
    results = api("alice").get("/api/v1/payroll/templates/").json()["results"]
    assert len(results) == PayrollTemplate.objects.count() >= 13
    assert all(isinstance(t["id"], str) and t["id"].isdigit() for t in results)
    detail = api("alice").get(f"/api/v1/payroll/templates/{results[0]['id']}/").json()
    assert detail["items"] and {"code", "kind", "rate", "formula", "name_zh"} <= set(detail["items"][0])


def test_bob_imports_through_the_api_and_a_replay_is_byte_identical():
    t = template()
    first = post(api("bob"), "/api/v1/payroll/groups/", {"template_id": str(t.id), "name": "Shanghai staff"})
    assert first.status_code == 201, first.content
    body = first.json()
    assert body["group_name"] == "Shanghai staff" and isinstance(body["group_id"], str)
    again = post(api("ada"), "/api/v1/payroll/groups/", {"template_id": t.id, "name": "Shanghai staff"})
    assert again.status_code == 201 and again.content == first.content
    assert again["Idempotency-Replayed"] == "true"
    assert PayrollGroup.objects.count() == 1
    group = api("alice").get(f"/api/v1/payroll/groups/{body['group_id']}/").json()
    assert group["template_id"] == str(t.id) and len(group["items"]) == body["items_created"]
    assert [g["id"] for g in api("alice").get("/api/v1/payroll/groups/").json()["results"]] == [body["group_id"]]


def test_it_refuses_alice_importing_with_403_and_changes_nothing():
    before = state_of()
    response = post(api("alice"), "/api/v1/payroll/groups/", {"template_id": str(template().id), "name": "G"})
    assert response.status_code == 403 and "approver" in response.json()["detail"]
    assert state_of() == before


def test_it_answers_malformed_json_with_400_and_changes_nothing():
    before = state_of()
    response = post(api("bob"), "/api/v1/payroll/groups/", '{"template_id": ', raw=True)
    assert response.status_code == 400 and "JSON parse error" in response.json()["detail"]
    response = post(api("bob"), "/api/v1/payroll/groups/", "[1, 2]", raw=True)
    assert response.status_code == 400 and "Invalid request" in response.json()["detail"]
    assert state_of() == before


def test_it_answers_missing_fields_and_non_numeric_ids_with_400():
    before = state_of()
    response = post(api("bob"), "/api/v1/payroll/groups/", {"name": "G"})
    assert response.status_code == 400 and "template_id" in response.json()["detail"]
    response = post(api("bob"), "/api/v1/payroll/groups/", {"template_id": "12ab", "name": "G"})
    assert response.status_code == 400 and "not an id" in response.json()["detail"]
    assert state_of() == before


def test_it_answers_an_unknown_template_with_404_and_changes_nothing():
    before = state_of()
    response = post(api("bob"), "/api/v1/payroll/groups/", {"template_id": "999", "name": "G"})
    assert response.status_code == 404 and "No payroll template" in response.json()["detail"]
    assert api("bob").get("/api/v1/payroll/templates/999/").status_code == 404
    assert state_of() == before


def test_it_requires_the_idempotency_key_header():
    before = state_of()
    for path, body in (("/api/v1/payroll/groups/", {"template_id": str(template().id), "name": "G"}),
                       ("/api/v1/payroll/snapshots/", {"label": "x"})):
        response = post(api("bob"), path, body, key=None)
        assert response.status_code == 400 and "Idempotency-Key" in response.json()["detail"]
    assert state_of() == before


def test_it_refuses_a_reused_key_with_a_different_body_with_422_and_changes_nothing():
    assert post(api("bob"), "/api/v1/payroll/snapshots/", {"label": "one"}, key="same").status_code == 201
    before = state_of()
    response = post(api("bob"), "/api/v1/payroll/snapshots/", {"label": "two"}, key="same")
    assert response.status_code == 422 and "different request" in response.json()["detail"]
    assert state_of() == before


def test_it_refuses_an_oversized_body_with_413_and_changes_nothing():
    before = state_of()
    response = post(api("bob"), "/api/v1/payroll/groups/", {"template_id": str(template().id), "name": "G",
                                                             "padding": "x" * 100_000})
    assert response.status_code == 413 and "at most" in response.json()["detail"]
    assert state_of() == before


def test_it_refuses_the_legacy_import_with_422_naming_the_item():
    response = post(api("bob"), "/api/v1/payroll/groups/", {"template_id": str(template(LEGACY_CODE).id),
                                                             "name": "Legacy"})
    assert response.status_code == 422
    assert response.json()["item"] == "grade_allowance" and "Grade allowance" in response.json()["detail"]


def test_snapshots_and_restore_over_the_api():
    bob = api("bob")
    snap = post(bob, "/api/v1/payroll/snapshots/", {"label": "before"}, key="s1")
    assert snap.status_code == 201
    sid = snap.json()["snapshot_id"]
    assert post(bob, "/api/v1/payroll/groups/", {"template_id": str(template().id), "name": "G"}, key="i1").status_code == 201
    assert post(api("alice"), f"/api/v1/payroll/snapshots/{sid}/restore/", None, key="r1").status_code == 403
    assert post(bob, f"/api/v1/payroll/snapshots/{sid}/restore/", None, key="r1").status_code == 403  # admins only
    # An admin asks; the restore waits for a second person, and nothing is deleted yet.
    with no_broker():
        asked = post(api("ada"), f"/api/v1/payroll/snapshots/{sid}/restore/", None, key="r1")
        assert asked.status_code == 202 and asked.json()["status"] == "approval_required"
        again = post(api("ada"), f"/api/v1/payroll/snapshots/{sid}/restore/", None, key="r1")
        assert again.status_code == 202 and again.json()["run_id"] == asked.json()["run_id"]
        run = drive(Run.objects.get(id=int(asked.json()["run_id"])))
        assert run.status == "awaiting_approval" and PayrollGroup.objects.filter(name="G").exists()
        approval = ApprovalRequest.objects.get(run=run, status="pending")
        assert approval.diff["groups_deleted"] == ["G"] and "“G” is deleted" in approval.diff["lines"][0]["text"]
        with pytest.raises(Forbidden):  # ada asked; ada may not approve it
            approval_decide(membership=membership("ada"), approval_id=approval.id, verdict="approved")
        approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="approved")
        assert drive(run).status == "completed"
    assert not PayrollGroup.objects.exists()
    assert services.configuration_checksum(tenant_id=run.tenant_id) == snap.json()["checksum"]
    detail = bob.get(f"/api/v1/payroll/snapshots/{sid}/").json()
    assert detail["configuration"] == {"groups": [], "assignments": []}
    assert [s["id"] for s in bob.get("/api/v1/payroll/snapshots/").json()["results"]] == [sid]


def test_it_answers_oscar_404_for_every_demo_object_by_api_and_page():
    ids = demo_objects()
    oscar_api, oscar_page = api("oscar"), page("oscar")
    for kind, object_id in ids.items():
        response = oscar_api.get(f"/api/v1/payroll/{kind}/{object_id}/")
        assert response.status_code == 404, kind
        assert oscar_page.get(f"/payroll/{kind}/{object_id}/").status_code == 404, kind
        # ... and alice, in demo, sees each of them.
        assert api("alice").get(f"/api/v1/payroll/{kind}/{object_id}/").status_code == 200, kind
        assert page("alice").get(f"/payroll/{kind}/{object_id}/").status_code == 200, kind
    before = state_of()
    response = post(oscar_api, f"/api/v1/payroll/snapshots/{ids['snapshots']}/restore/", None, key="x")
    assert response.status_code in (403, 404)  # oscar is a business user: refused before the lookup
    assert state_of() == before
    for listing in ("groups", "employees", "snapshots"):
        seen = {o["id"] for o in oscar_api.get(f"/api/v1/payroll/{listing}/").json()["results"]}
        assert ids[listing] not in seen
    home = oscar_page.get("/payroll/").content.decode()
    assert "Zhang Wei" not in home and ">G<" not in home


def test_the_pages_show_groups_items_employees_and_the_catalog_to_every_role():
    demo_objects()
    for username in ("alice", "bob", "dora", "ada"):
        home = page(username).get("/payroll/")
        assert home.status_code == 200
        text = home.content.decode()
        assert "Pension insurance (employee)" in text and "Zhang Wei" in text and 'href="/payroll/"' in text
    catalog = page("alice").get("/payroll/templates/").content.decode()
    assert "Shanghai monthly salaried staff" in catalog and "上海月薪员工" in catalog and "legacy" in catalog
    assert "Singapore" in catalog and "US semi-monthly" in catalog


def test_anonymous_visitors_are_sent_to_log_in():
    from django.test import Client

    assert Client().get("/payroll/").status_code == 302
    assert Client().get("/api/v1/payroll/groups/").status_code in (401, 403)


def test_the_schema_lists_the_payroll_paths():
    paths = page("dora").get("/api/schema/", HTTP_ACCEPT="application/json").json()["paths"]
    assert {"/api/v1/payroll/groups/", "/api/v1/payroll/snapshots/{snapshot_id}/restore/"} <= set(paths)
