"""/api/v1/payroll/months/: start (202; 409 naming the first), read, payslips with masking,
files for closed months only (409 otherwise), inputs import, reopen (admins), tenancy."""
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from payroll.models import PayrollMonth
from payroll.records.month_files import bank_file_totals, tax_declaration_totals
from tests.helpers import drive, membership
from tests.payroll import api, month_group, month_inputs
from workflows.models import Run

from .test_month import NOVEMBER

pytestmark = pytest.mark.django_db
URL = "/api/v1/payroll/months/"


@pytest.fixture
def group(demo):
    return month_group()


def started(group, username="alice"):
    response = api(username).post(URL, {"group": str(group.id), "year": 2026, "month": 11}, format="json")
    assert response.status_code == 202, response.content
    return response.json()


def test_a_start_answers_202_and_a_second_start_409_with_the_first(group):
    first = started(group)
    again = api("bob").post(URL, {"group": str(group.id), "year": 2026, "month": 11}, format="json")
    assert again.status_code == 409 and again["Content-Type"].startswith("application/problem+json")
    assert again.json()["code"] == "month_exists" and again.json()["id"] == first["id"]
    assert again.json()["run_id"] == first["run_id"]
    assert PayrollMonth.objects.filter(group=group).count() == 1


@pytest.mark.parametrize("body, field", [({"group": "x", "year": 2026, "month": 11}, "group"),
                                         ({"year": 2026, "month": 11}, "group"),
                                         ({"group": "1", "year": 2026, "month": 13}, "month")])
def test_bad_input_is_a_problem_naming_the_field_and_starts_nothing(group, body, field):
    if body.get("group") == "1":
        body = {**body, "group": str(group.id)}
    response = api("alice").post(URL, body, format="json")
    assert response.status_code == 400 and field in response.content.decode()
    assert not PayrollMonth.objects.exists() and not Run.objects.filter(blueprint="payroll_month").exists()


def test_another_tenants_group_and_month_are_not_found(group):
    assert api("oscar").post(URL, {"group": str(group.id), "year": 2026, "month": 11},
                             format="json").status_code == 404
    month_id = started(group)["id"]
    assert api("oscar").get(f"{URL}{month_id}/").status_code == 404
    assert api("oscar").get(f"{URL}{month_id}/payslips/").status_code == 404
    assert api("oscar").get(URL).json()["results"] == []


def test_the_month_closes_and_its_files_download_only_then(group):
    month_inputs(group, 2026, 11, NOVEMBER)
    body = started(group)
    run = drive(Run.objects.get(id=int(body["run_id"])))
    detail = api("alice").get(f"{URL}{body['id']}/").json()
    assert detail["status"] == "awaiting_approval" and detail["inputs_version"] == 1 and detail["employees"] == 3
    assert detail["files"] == {"bank": None, "tax": None}
    early = api("alice").get(f"{URL}{body['id']}/bank-file/?format=csv")
    assert early.status_code == 409 and early.json()["code"] == "month_not_closed"
    assert api("alice").get(f"{URL}{body['id']}/tax-declaration/").status_code == 409

    # Masked for alice; the approver deciding it reads the numbers; the admin always does.
    alice = api("alice").get(f"{URL}{body['id']}/payslips/").json()["results"]
    assert alice[0]["employee"]["bank_account"] == "•••• 0001" and alice[0]["employee"]["id_number"] == "•••• 0001"
    bob = api("bob").get(f"{URL}{body['id']}/payslips/").json()["results"]
    assert bob[0]["employee"]["bank_account"] == "6222 0000 0000 0001"
    assert api("ada").get(f"{URL}{body['id']}/payslips/").json()["results"][0]["employee"]["id_number"] \
        == "310101199001010001"

    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(
        run=run, status="pending").id, verdict="approved")
    drive(run)
    detail = api("alice").get(f"{URL}{body['id']}/").json()
    assert detail["status"] == "closed" and detail["files"]["tax"]["sha256"]
    bob = api("bob").get(f"{URL}{body['id']}/payslips/").json()["results"]
    assert bob[0]["employee"]["bank_account"] == "•••• 0001"  # decided: no longer deciding
    net = sum(Decimal(p["net"]) for p in bob)
    csv = api("alice").get(f"{URL}{body['id']}/bank-file/?format=csv")
    assert csv.status_code == 200 and csv["X-Checksum-SHA256"] == detail["files"]["bank"]["csv"]["sha256"]
    assert bank_file_totals(csv.content, fmt="csv").total == net
    xlsx = api("alice").get(f"{URL}{body['id']}/bank-file/?format=xlsx")
    assert bank_file_totals(xlsx.content, fmt="xlsx").total == net
    tax = api("alice").get(f"{URL}{body['id']}/tax-declaration/")
    assert tax_declaration_totals(tax.content).tax == Decimal(detail["totals"]["tax"])
    assert api("alice").get(f"{URL}{body['id']}/bank-file/?format=pdf").status_code == 400
    listed = api("alice").get(f"{URL}?group={group.id}&year=2026").json()["results"]
    assert [m["id"] for m in listed] == [body["id"]]

    # Reopen: an admin asks (202, a run), alice may not.
    assert api("alice").post(f"{URL}{body['id']}/reopen/", {"reason": "wrong"}, format="json").status_code == 403
    assert api("ada").post(f"{URL}{body['id']}/reopen/", {"reason": ""}, format="json").status_code == 400
    reopen = api("ada").post(f"{URL}{body['id']}/reopen/", {"reason": "sales were wrong"}, format="json")
    assert reopen.status_code == 202 and Run.objects.get(id=int(reopen.json()["run_id"])).blueprint \
        == "payroll_month_reopen"


def test_the_months_inputs_import_through_the_month(group):
    body = started(group)
    csv = "工号,销售额,工作日加班小时\nE-001,5000,2\nE-002,0,-1\n".encode()
    refused = api("alice").post(f"{URL}{body['id']}/inputs/", {"file": SimpleUploadedFile("nov.csv", csv)},
                                format="multipart", HTTP_IDEMPOTENCY_KEY="k1")
    assert refused.status_code == 422
    assert [(r["row"], r["column"]) for r in refused.json()["refusals"]] == [(3, "工作日加班小时")]  # the negative hour
    good = "工号,销售额,工作日加班小时\nE-001,5000,2\n".encode()
    ok = api("alice").post(f"{URL}{body['id']}/inputs/", {"file": SimpleUploadedFile("nov.csv", good)},
                           format="multipart", HTTP_IDEMPOTENCY_KEY="k2")
    assert ok.status_code == 201, ok.content


@pytest.mark.parametrize("given", ["abc", "²", "9223372036854775808", "0"])
def test_a_months_list_filtered_by_what_is_no_group_id_is_a_400_saying_so(group, given):
    answer = api("alice").get(URL, {"group": given})
    assert answer.status_code == 400 and answer.json()["code"] == "invalid_id", answer.content
    assert "group" in answer.json()["detail"]
