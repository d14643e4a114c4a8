"""Blueprints are data a domain registers; each node's acceptance criteria are checked
against its receipt, recorded, and shown."""
import jsonschema
import pytest
from django.core.management import call_command
from django.test import Client

from approvals.services import approval_decide
from approvals.models import ApprovalRequest
from workflows.blueprints import BLUEPRINT_SCHEMA, BLUEPRINTS, blueprint_register
from workflows.services import run_start
from tests.helpers import drive, membership, statuses

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


@pytest.fixture
def strict_chain():
    """A two-step no-op chain whose second step asks for a criterion no tool checks."""
    blueprint_register({"name": "strict_chain", "title": "Strict chain", "params": {}, "required": [],
                        "start": {"roles": ["business", "approver", "developer", "admin"], "doors": ["runs"]},
                        "nodes": [{"key": "first", "tool": "noop", "goal": "First", "depends_on": [],
                                   "arguments": {}},
                                  {"key": "second", "tool": "noop", "goal": "Second", "depends_on": ["first"],
                                   "arguments": {}, "acceptance": ["the ledger balances"]}]})
    yield "strict_chain"
    BLUEPRINTS.pop("strict_chain")


def test_the_blueprint_schema_is_a_valid_schema():
    jsonschema.Draft202012Validator.check_schema(BLUEPRINT_SCHEMA)  # registration no longer checks it each time


def test_the_payroll_blueprint_is_registered_by_the_payroll_app_as_data():
    spec = BLUEPRINTS["payroll_group_setup"]
    assert [n["key"] for n in spec["nodes"]][:3] == ["interpret", "match", "snapshot"]
    assert all(n["acceptance"] for n in spec["nodes"])


def test_it_refuses_a_blueprint_whose_node_depends_on_a_missing_step():
    with pytest.raises(ValueError, match="depends on unknown"):
        blueprint_register({"name": "broken", "title": "Broken", "params": {}, "required": [],
                            "start": {"roles": ["business", "approver", "developer", "admin"], "doors": ["runs"]},
                            "nodes": [{"key": "a", "tool": "noop", "goal": "A", "depends_on": ["nope"],
                                       "arguments": {}}]})
    assert "broken" not in BLUEPRINTS


def test_a_criterion_the_receipt_was_not_checked_against_fails_the_step_naming_it(strict_chain):
    run = drive(run_start(membership=membership("alice"), blueprint=strict_chain, params={}))
    assert statuses(run) == {"first": "completed", "second": "failed"}
    assert run.status == "failed"
    assert "the ledger balances" in run.status_reason


def test_the_run_api_and_page_show_each_steps_criteria_and_whether_they_were_met():
    run = drive(run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                          params={"request": "set up a monthly payroll group for our Shanghai sales team with "
                                             "commission", "group_name": "Shanghai Sales"}))
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                    verdict="approved")
    drive(run)
    client = Client()
    client.login(username="alice", password="keel-demo")
    nodes = {n["key"]: n for n in client.get(f"/api/v1/runs/{run.id}/").json()["nodes"]}
    assert nodes["import"]["acceptance"] == [
        {"criterion": "the group exists", "met": True, "detail": ""},
        {"criterion": "it has the template's item count", "met": True, "detail": nodes["import"]["acceptance"][1]["detail"]},
        {"criterion": "it was built from the approved template", "met": True, "detail": ""}]
    assert nodes["restore"]["acceptance"] == [
        {"criterion": "the checksum over this run's scope equals the snapshot's", "met": None, "detail": ""}]
    page = client.get(f"/runs/{run.id}/").content.decode()
    assert "✓ the group exists" in page and "○ the checksum over this run&#x27;s scope equals the snapshot&#x27;s" in page


def test_the_registry_check_wants_a_compensation_or_a_reason_for_an_approved_effect():
    from django.core.management import call_command

    from workflows.tools import TOOLS, Tool, registry_problems

    call_command("check")  # every registered tool passes as shipped
    bare = Tool(name="test_effect", description="", input_schema={}, output_schema={}, fn=lambda ctx, a: {},
                side_effects=True, read_only=False, needs_approval=True)
    TOOLS[bare.name] = bare
    try:
        assert any("test_effect has approved side effects but no compensation" in p for p in registry_problems())
        bare.irreversible = "commits in one transaction and ends its run"
        assert not any("test_effect" in p for p in registry_problems())
    finally:
        del TOOLS[bare.name]


@pytest.fixture
def named_chain():
    """A no-op chain whose `title` param names what it makes, as a domain's group name does."""
    blueprint_register({"name": "named_chain", "title": "Named chain", "titled_by": "title",
                        "params": {"n": {"type": "integer"}, "title": {"type": "string"}}, "required": ["n"],
                        "start": {"roles": ["business", "approver", "developer", "admin"], "doors": ["runs"]},
                        "nodes": "chain"})
    yield "named_chain"
    BLUEPRINTS.pop("named_chain")


def test_the_param_a_blueprint_declares_titles_its_runs_conversation_and_activity(named_chain):
    run = run_start(membership=membership("alice"), blueprint=named_chain, params={"n": 1, "title": "Quarter close"})
    assert run.conversation.title == "Quarter close"
    assert run.activity.title == "Named chain: Quarter close"
    untitled = run_start(membership=membership("alice"), blueprint=named_chain, params={"n": 1})
    assert untitled.conversation.title == "Named chain"
    assert untitled.activity.title == "Named chain"


def test_a_param_no_blueprint_declares_as_its_title_titles_nothing():
    run = run_start(membership=membership("dora"), blueprint="noop_chain", params={"n": 1, "group_name": "Sales"})
    assert run.conversation.title == "No-op chain"
    assert run.activity.title == "No-op chain"


def test_it_refuses_a_blueprint_titled_by_a_param_it_does_not_have():
    with pytest.raises(ValueError, match="titled_by names 'group_name'"):
        blueprint_register({"name": "untitled", "title": "Untitled", "titled_by": "group_name", "params": {},
                            "required": [], "start": {"roles": ["business"], "doors": ["runs"]}, "nodes": "chain"})
    assert "untitled" not in BLUEPRINTS
