"""Provenance from the first message. The group's name, the employee ids of an
attachment, the requirements, the match and the snapshot are coordinates with producers, and
an admin follows the chain from the imported group back to the words the user typed."""
import pytest
from django.urls import reverse

from agents.orchestrator import message_post
from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from timeline.services import conversation_create
from workflows.models import CoordinateConsumption, Run, StateCoordinate
from workflows.provenance import chain_reaches_origin, coordinate_chain, run_origin
from workflows.services import run_start
from tests.helpers import drive, membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]

TYPED = "set up a monthly payroll group for our Shanghai sales team with commission"


@pytest.fixture
def completed_from_a_message():
    m = membership("alice")
    conv = conversation_create(tenant_id=m.tenant_id, user_id=m.user_id, title="test")
    csv = "employee_no,name\nD-0001,\nD-0003,\n"
    result = message_post(membership=m, conversation_id=conv.id, text=TYPED, attachment=("team.csv", csv.encode()))
    run = drive(Run.objects.get(id=int(result["run_id"])))
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                    verdict="approved")
    run = drive(run)
    assert run.status == "completed", run.status_reason
    return run


def _keys(chain, into=None):
    into = into if into is not None else set()
    into.add((chain["key"], chain["producer"]))
    for c in chain["inputs"]:
        _keys(c, into)
    return into


def test_every_value_the_import_used_is_a_coordinate_traced_to_the_message_the_user_typed(completed_from_a_message):
    run = completed_from_a_message
    state = {c.key: c for c in StateCoordinate.objects.filter(run=run)}
    assert state["requested_group_name"].value == "Shanghai Sales"
    assert len(state["employee_ids"].value) == 2 and state["employee_ids"].producer == "interpret_request"
    # The match consumed the interpretation (the developer view's "Consumed by" is no longer empty).
    requirements_consumers = {link.call.tool for link in CoordinateConsumption.objects.filter(
        coordinate=state["requirements"]).select_related("call")}
    assert requirements_consumers == {"match_salary_template"}
    assert {link.call.tool for link in CoordinateConsumption.objects.filter(
        coordinate=state["employee_ids"]).select_related("call")} == {"snapshot_payroll_groups", "assign_employees"}

    chain = coordinate_chain(state["group_id"])
    assert _keys(chain) >= {("group_id", "import_template"), ("template_id", "match_salary_template"),
                            ("requirements", "interpret_request"), ("snapshot_id", "snapshot_payroll_groups"),
                            ("group_name", "snapshot_payroll_groups"),
                            ("requested_group_name", "interpret_request"), ("employee_ids", "interpret_request")}
    assert chain_reaches_origin(chain)
    origin = run_origin(run)
    assert origin["kind"] == "message" and origin["text"] == TYPED and origin["user"] == "alice"
    assert origin["attachment"] == {"name": "team.csv", "rows": 2}
    # Three hops: group_id ← template_id ← requirements ← the message.
    template = next(c for c in chain["inputs"] if c["key"] == "template_id")
    requirements = next(c for c in template["inputs"] if c["key"] == "requirements")
    assert requirements["origin"]["text"] == TYPED and requirements["arguments"]["request"] == TYPED


def test_the_admin_follows_the_chain_from_the_imported_group_to_the_words_typed(client, completed_from_a_message):
    run = completed_from_a_message
    group = StateCoordinate.objects.get(run=run, key="group_id")
    client.force_login(membership("dora").user)
    html = client.get(reverse("admin:workflows_statecoordinate_change", args=[group.pk])).content.decode()
    assert 'data-testid="upstream-group_id"' in html and 'data-testid="upstream-requirements"' in html
    assert 'data-testid="upstream-requested_group_name"' in html
    assert f'<q data-testid="origin-text">{TYPED}</q>' in html
    assert "with the attachment team.csv (2 rows)" in html
    # Another tenant's admin does not see it at all.
    client.force_login(membership("oscar").user)
    assert client.get(reverse("admin:workflows_statecoordinate_change", args=[group.pk])).status_code in (302, 404)


def test_a_run_started_through_the_api_is_rooted_in_its_start():
    run = drive(run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                          params={"request": TYPED, "group_name": "Shanghai Sales"}))
    chain = coordinate_chain(StateCoordinate.objects.get(run=run, key="snapshot_id"))
    assert chain_reaches_origin(chain)
    origin = next(c for c in chain["inputs"] if c["key"] == "requested_group_name")["origin"]
    assert origin["kind"] == "event" and origin["user"] == "alice" and origin["type"] == "run.started"
