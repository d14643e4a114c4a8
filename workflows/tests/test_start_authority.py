"""Who may start what: every blueprint declares the roles that may start it and
the doors it is started through; `POST /api/v1/runs/`, a conversation, a domain's own
endpoint and its events all obey that one declaration, and a refusal writes nothing."""
import pytest
from django.contrib.auth.models import User
from django.utils import translation
from jsonschema import ValidationError
from rest_framework.test import APIClient

from approvals.models import ApprovalRule
from config.api import Forbidden
from hr.models import OutboxEvent, Tan
from hr.services import Actor as HrActor
from hr.services import tan_approve
from hr.supervisor import tan_event_consume
from payroll.records import services as payroll
from tests.payroll import actor_for, template
from tenants.models import Role
from timeline.models import Conversation
from workflows.blueprints import BLUEPRINTS, Door, blueprint_register, blueprint_start_check
from workflows.models import Run
from workflows.services import run_start
from tests.helpers import membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]

PERSONA = {Role.BUSINESS: "alice", Role.APPROVER: "bob", Role.DEVELOPER: "dora", Role.ADMIN: "ada"}
REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"
CLAIM = {"category": "lodging", "city": "Beijing", "start_date": "2026-11-16", "nights": 2, "amount": "1800"}


def api(username: str) -> APIClient:
    client = APIClient()
    client.force_authenticate(User.objects.get(username=username))
    return client


def valid_params(blueprint: str, who: str) -> dict:
    """Params each registered blueprint's schema accepts, so a refusal is the role's or the door's."""
    tenant_id = membership("ada").tenant_id
    if blueprint in ("payroll_month", "payroll_month_reopen"):
        month = _a_month()
        return {"month_id": str(month.id), **({"reason": "a walk"} if blueprint == "payroll_month_reopen" else {})}
    if blueprint == "payroll_tenant_restore":
        body = payroll.snapshot_create(actor=actor_for("bob"), label=f"walk {who}", idempotency_key=f"s-{who}").body
        return {"snapshot_id": str(body["snapshot_id"])}
    return {
        "payroll_group_setup": {"request": REQUEST, "group_name": f"Walk {who}"},
        "payroll_direct_import": {"template_id": str(template().id), "group_name": f"Direct {who}"},
        "candidate_matching": {"tan_id": str(Tan.objects.filter(tenant_id=tenant_id).first().id)},
        "expense_claim": CLAIM,
        "noop_chain": {"n": 2},
        "noop_fanout": {"n": 2},
    }[blueprint]


def _a_month():
    from payroll.models import PayrollGroup, PayrollMonth
    from tests.payroll import month_group

    group = PayrollGroup.objects.filter(name="Month walk").first() or month_group(name="Month walk")
    return PayrollMonth.objects.get_or_create(tenant=group.tenant, group=group, year=2026, month=11)[0]


def written() -> tuple[int, int]:
    return Run.objects.count(), Conversation.objects.count()


def test_every_blueprint_declares_who_may_start_it_and_a_new_one_cannot_forget():
    assert set(BLUEPRINTS) == {"payroll_group_setup", "payroll_direct_import", "payroll_tenant_restore",
                               "payroll_month", "payroll_month_reopen", "candidate_matching", "expense_claim",
                               "noop_chain", "noop_fanout"}
    for spec in BLUEPRINTS.values():
        assert spec["start"]["roles"] and spec["start"]["doors"], spec["name"]
    with pytest.raises(ValidationError, match="'start' is a required property"):
        blueprint_register({"name": "forgetful", "title": "Forgetful", "params": {}, "required": [],
                            "nodes": "chain"})
    with pytest.raises(ValidationError):  # "replay" is the engine's, never declared
        blueprint_register({"name": "sneaky", "title": "Sneaky", "params": {}, "required": [], "nodes": "chain",
                            "start": {"roles": ["business"], "doors": ["replay"]}})
    assert "forgetful" not in BLUEPRINTS and "sneaky" not in BLUEPRINTS


@pytest.mark.parametrize("blueprint", sorted(BLUEPRINTS))
@pytest.mark.parametrize("role", list(Role))
def test_runs_api_starts_a_blueprint_exactly_where_its_declaration_allows(blueprint, role):
    who = PERSONA[role]
    start = BLUEPRINTS[blueprint]["start"]
    allowed = role in start["roles"] and Door.RUNS in start["doors"]
    params = valid_params(blueprint, who)
    before = written()
    response = api(who).post("/api/v1/runs/", {"blueprint": blueprint, "params": params}, format="json")
    if allowed:
        assert response.status_code == 201, response.content
        assert Run.objects.get(id=int(response.json()["id"])).created_by.username == who
        return
    assert response.status_code == 403, response.content
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["code"] == ("role_required" if role not in start["roles"] else "start_elsewhere")
    assert written() == before  # no run, no conversation


@pytest.mark.parametrize("door", [Door.CONVERSATION, Door.ENDPOINT, Door.EVENT])
def test_every_other_door_obeys_the_same_declaration(door):
    for blueprint, spec in BLUEPRINTS.items():
        for role in Role:
            allowed = role in spec["start"]["roles"] and door in spec["start"]["doors"]
            before = written()
            try:
                run_start(membership=membership(PERSONA[role]), blueprint=blueprint, door=door,
                          params=valid_params(blueprint, f"{door}-{role}"))
            except Forbidden:
                assert not allowed, (blueprint, role)
                assert written() == before
            else:
                assert allowed, (blueprint, role)


@pytest.mark.parametrize("blueprint, params, words", [
    ("payroll_tenant_restore", None, "the roles that may: Tenant admin"),
    ("payroll_direct_import", None, "the roles that may: Approver, Tenant admin"),
    ("candidate_matching", None, "the roles that may: Approver, Tenant admin"),
    ("noop_fanout", {"n": 1000}, "the roles that may: Developer, Tenant admin"),
])
def test_the_issues_probes_as_a_business_user_are_refused_and_say_whom_to_ask(blueprint, params, words):
    before = written()
    response = api("alice").post("/api/v1/runs/", {"blueprint": blueprint,
                                                   "params": params or valid_params(blueprint, "alice")},
                                 format="json")
    assert response.status_code == 403 and words in response.json()["detail"]
    assert "Ask one of them to start it." in response.json()["detail"]
    assert written() == before


def test_an_admin_is_sent_to_the_restore_endpoint_and_a_tan_already_approved_starts_nothing_more():
    tan = Tan.objects.filter(tenant_id=membership("ada").tenant_id).first()
    tan_approve(actor=HrActor(tenant_id=tan.tenant_id, user_id=membership("bob").user_id, role=Role.APPROVER),
                tan_id=tan.id)
    before = written()
    restore = api("ada").post("/api/v1/runs/", {"blueprint": "payroll_tenant_restore",
                                                "params": valid_params("payroll_tenant_restore", "ada")},
                              format="json").json()
    assert restore["code"] == "start_elsewhere"
    assert "POST /api/v1/payroll/snapshots/{snapshot_id}/restore/" in restore["detail"]
    matching = api("bob").post("/api/v1/runs/", {"blueprint": "candidate_matching",
                                                 "params": {"tan_id": str(tan.id)}}, format="json")
    assert matching.status_code == 403 and "POST /api/v1/hr/tans/{tan_id}/approve/" in matching.json()["detail"]
    assert written() == before


def test_the_schema_documents_the_refusal():
    responses = api("dora").get("/api/schema/?format=json").json()["paths"]["/api/v1/runs/"]["post"]["responses"]
    assert "403" in responses and "role" in responses["403"]["description"]


def test_the_fanout_is_bounded():
    response = api("dora").post("/api/v1/runs/", {"blueprint": "noop_fanout", "params": {"n": 5000}},
                                format="json")
    assert response.status_code == 400 and not Run.objects.exists()


def test_the_refusal_reads_in_chinese_too():
    with translation.override("zh-hans"), pytest.raises(Forbidden) as refused:
        blueprint_start_check("payroll_tenant_restore", role=Role.BUSINESS, door=Door.RUNS)
    assert "整个租户恢复" in refused.value.message and "Your role" not in refused.value.message


def test_a_domain_that_names_no_door_is_held_to_the_runs_rule():
    with pytest.raises(Forbidden):
        run_start(membership=membership("ada"), blueprint="payroll_tenant_restore",
                  params=valid_params("payroll_tenant_restore", "ada"))
    assert not Run.objects.exists()


# --- The existing doors still open --------------------------------------------------------

def test_an_admin_still_asks_for_a_restore_through_its_endpoint():
    sid = payroll.snapshot_create(actor=actor_for("bob"), label="before", idempotency_key="b").body["snapshot_id"]
    response = api("ada").post(f"/api/v1/payroll/snapshots/{sid}/restore/", HTTP_IDEMPOTENCY_KEY="restore-1")
    assert response.status_code == 202, response.content
    assert Run.objects.get(id=int(response.json()["run_id"])).blueprint == "payroll_tenant_restore"
    assert api("alice").post(f"/api/v1/payroll/snapshots/{sid}/restore/",
                             HTTP_IDEMPOTENCY_KEY="restore-2").status_code == 403


def test_an_approvers_direct_import_over_the_limits_still_becomes_a_run():
    ApprovalRule.objects.filter(tool="import_template").update(limits={"headcount": "0"})
    response = api("bob").post("/api/v1/payroll/groups/", {"template_id": str(template().id), "name": "Big Group"},
                               format="json", HTTP_IDEMPOTENCY_KEY="direct-1")
    assert response.status_code == 202, response.json()
    assert Run.objects.get(id=int(response.json()["run_id"])).blueprint == "payroll_direct_import"


def test_approving_a_tan_still_starts_candidate_matching():
    tan = Tan.objects.filter(tenant_id=membership("ada").tenant_id).first()
    tan_approve(actor=HrActor(tenant_id=tan.tenant_id, user_id=membership("ada").user_id, role=Role.ADMIN),
                tan_id=tan.id)
    run_id = tan_event_consume(OutboxEvent.objects.get(tan=tan).id)
    assert Run.objects.get(id=run_id).blueprint == "candidate_matching"


@pytest.mark.usefixtures("builtin_llm")
@pytest.mark.parametrize("text, blueprint", [
    (REQUEST, "payroll_group_setup"),
    ("Please file an expense claim: lodging in Beijing, 2 nights from 2026-11-16, 1,800 yuan in total",
     "expense_claim"),
])
def test_a_business_users_chat_still_starts_its_run(text, blueprint):
    client = api("alice")
    conversation = client.post("/api/v1/conversations/", {"title": "t"}, format="json").json()["id"]
    body = client.post(f"/api/v1/conversations/{conversation}/messages/", {"text": text}, format="json").json()
    assert Run.objects.get(id=int(body["run_id"])).blueprint == blueprint
