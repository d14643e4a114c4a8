"""Names as people read them: a group name is stored in one form,
refused when it hides a character nobody sees, and compared by what it reads as."""
import json

import pytest

from approvals.models import ApprovalRequest
from config.api import DomainError
from config.names import name_skeleton, name_visible
from payroll.records import services
from payroll.models import PayrollGroup, RecordClaim, group_name_key
from payroll.agent.previews import import_argument, import_preconditions
from payroll.records.selectors import import_diff
from tests.payroll import actor_for, api, state_of, template
from timeline.models import Conversation
from workflows.models import Node, Run
from workflows.services import node_input_answer, run_start
from tests.helpers import drive, membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]

PLAIN = "P1 Group 01"
# The probe's three twins: a trailing zero-width space, a leading BOM, a right-to-left override.
TWINS = ["P1 Group 01\u200b", "\ufeffP1 Group 01", "\u202eP1 Group 01"]
CYRILLIC = "\u0420" + "1 Gr" + "\u043e" + "up 01"  # Cyrillic ER and O: reads "P1 Group 01"
REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"


def create(name: str, key: str, username: str = "bob"):
    return api(username).post("/api/v1/payroll/groups/", json.dumps({"template_id": str(template().id), "name": name}),
                              content_type="application/json", HTTP_IDEMPOTENCY_KEY=key)


def start(group_name: str):
    return run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                     params={"request": REQUEST, "group_name": group_name})


def test_the_four_lookalikes_of_the_probe_make_one_group():
    assert create(PLAIN, "k0").status_code == 201
    before = state_of()
    for i, twin in enumerate(TWINS, start=1):
        response = create(twin, f"k{i}")
        assert response.status_code == 400, (twin, response.content)
        body = response.json()
        assert body["code"] == "invalid_name" and "group name" in body["detail"], body
        assert body["character"] in {"U+200B", "U+FEFF", "U+202E"}
    assert state_of() == before
    assert list(PayrollGroup.objects.values_list("name", flat=True)) == [PLAIN]


@pytest.mark.parametrize("blank", ["\u200b", "\u200b\u200d\u200c", "\ufeff", "\u2060\u00ad", "\u202e\u2066",
                                   "\u3164", "\u115f\u1160", "\u2800", " \u200b ", "\u180e"])
def test_a_name_made_only_of_invisible_characters_is_refused(blank):
    before = state_of()
    response = create(blank, "k")
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "invalid_name"
    assert "only of invisible characters" in response.json()["detail"]
    assert state_of() == before
    with pytest.raises(DomainError, match="only of invisible characters"):
        services.snapshot_create(actor=actor_for("alice"), label=blank, idempotency_key="s")


@pytest.mark.parametrize("hidden", ["\x00", "\t", "\x85", "\u200e", "\u200f", "\u061c", "\u2069", "\u202a",
                                    "\u2028", "\ufe0f", "\U000e0041", "\ue000", "\u034f"])
def test_a_name_that_hides_a_control_or_invisible_character_anywhere_is_refused(hidden):
    with pytest.raises(DomainError) as refused:
        services.template_import(actor=actor_for("bob"), template_id=template().id,
                                 group_name=f"Team{hidden}North", idempotency_key="k")
    assert refused.value.status_code == 400 and refused.value.code == "invalid_name"
    assert f"U+{ord(hidden):04X}" in refused.value.message and "position 5" in refused.value.message
    assert not PayrollGroup.objects.exists()


def test_a_cyrillic_lookalike_is_the_same_name():
    assert create(PLAIN, "k0").status_code == 201
    for i, twin in enumerate([CYRILLIC, "p1 group 01", "P1   Group\u00a001", "Pl Group Ol"], start=1):
        response = create(twin, f"k{i}")
        assert response.status_code == 409, (twin, response.content)
        assert response.json()["code"] == "group_name_taken"
        assert PLAIN in response.json()["detail"]
    assert PayrollGroup.objects.count() == 1


def test_a_fullwidth_name_is_stored_as_people_read_it():
    response = create("\uff30\uff11\u3000\uff27\uff52\uff4f\uff55\uff50", "k")
    assert response.status_code == 201, response.content
    assert response.json()["group_name"] == "P1 Group"
    assert PayrollGroup.objects.get().name == "P1 Group"
    assert create("P1 Group", "k2").status_code == 409


def test_a_lookalike_of_a_name_another_run_reserved_is_refused():
    demo = actor_for("bob").tenant_id
    services.records_claim(tenant_id=demo, run_id=None, holder="run 1 of alice", group_name=PLAIN)
    with pytest.raises(services.NameTaken) as taken:
        services.records_claim(tenant_id=demo, run_id=None, holder="run 2 of dora", group_name=CYRILLIC)
    assert taken.value.code == "group_name_taken" and "run 1 of alice" in taken.value.message
    assert RecordClaim.objects.count() == 1
    # and a person's direct import of a lookalike waits for nobody: it is refused as reserved
    assert create("p1 GROUP 01", "k").status_code == 409


def test_a_run_asks_for_another_name_when_its_name_reads_as_an_existing_group():
    assert create(PLAIN, "k0").status_code == 201
    run = drive(start(CYRILLIC))
    assert run.status == "awaiting_input"
    question = Node.objects.get(run=run, key="snapshot").question
    assert "already exists" in question["text"] and PLAIN in question["text"]
    node_input_answer(membership=membership("alice"), run_id=run.id, answer="P1 Group 02")
    assert drive(run).status == "awaiting_approval"


@pytest.mark.parametrize("name", TWINS + ["\u200b\u200b"])
def test_a_run_whose_name_hides_an_invisible_character_is_refused_at_the_door(name):
    runs, conversations = Run.objects.count(), Conversation.objects.count()
    response = api("alice").post("/api/v1/runs/", json.dumps(
        {"blueprint": "payroll_group_setup", "params": {"request": REQUEST, "group_name": name}}),
        content_type="application/json")
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "invalid_name" and "group name" in body["detail"], body
    assert body["field"] == "params.group_name"
    assert (Run.objects.count(), Conversation.objects.count()) == (runs, conversations)


def test_a_run_stores_its_name_as_people_read_it():
    run = start("\uff30\uff11  Group")  # fullwidth, a run of spaces
    assert run.params["group_name"] == "P1 Group"
    assert run.conversation.title == "P1 Group"


def test_the_card_checks_and_shows_names_by_what_they_read_as():
    run = drive(start("Shanghai Sales"))
    assert run.status == "awaiting_approval"
    arguments = ApprovalRequest.objects.get(run=run).arguments
    assert import_preconditions(run.tenant_id, run.id, arguments) == ""
    assert import_preconditions(run.tenant_id, run.id, {**arguments, "group_name": "Other"}) != ""
    services.template_import(actor=actor_for("bob"), template_id=template().id, group_name="Pl Group Ol",
                             idempotency_key="k")
    problems = import_diff(tenant_id=run.tenant_id, template_id=template().id, group_name=CYRILLIC)["problems"]
    assert any("already exists" in p["message"] for p in problems)
    # A name stored before names were checked cannot hide a character on the card.
    assert import_argument(run.tenant_id, "group_name", "\u202eP1 Group 01")[1] == "“⟨U+202E⟩P1 Group 01”"


def test_the_skeleton_folds_case_space_and_confusables_but_not_different_names():
    key = name_skeleton(PLAIN)
    assert all(name_skeleton(n) == key for n in [CYRILLIC, "p1 group 01", " P1  GROUP 01 ", *TWINS])
    assert name_skeleton("P1 Group 02") != key and name_skeleton("上海销售") != name_skeleton("上海工程")
    assert group_name_key(PLAIN) == key and len(group_name_key("\ufdfa" * 200)) <= 200
    assert name_visible("a\u200bb") == "a⟨U+200B⟩b"


def test_a_new_employee_of_an_attached_export_is_named_as_people_read_it():
    from payroll.reading.attachments import AttachmentError, employee_list_parse

    tenant_id = actor_for("alice").tenant_id
    parsed = employee_list_parse(tenant_id=tenant_id, filename="export.csv",
                                 raw="employee_no,name\nN-7001,\uff2c\uff49\uff4e  Xiaoyu\n".encode())
    assert parsed.new_employees[0]["name"] == "Lin Xiaoyu"
    with pytest.raises(AttachmentError) as refused:
        employee_list_parse(tenant_id=tenant_id, filename="export.csv",
                            raw="employee_no,name\nN-7001,Lin Xiaoyu\nN-7002,\u202euyoaiX niL\n".encode())
    assert refused.value.extra["line"] == 3 and "U+202E" in refused.value.message
    assert "employee name" in refused.value.message


def test_claims_held_before_the_upgrade_are_rekeyed_and_still_found():
    import importlib

    from django.apps import apps

    migration = importlib.import_module("payroll.migrations.0004_recordclaim_name_skeleton_key")
    run = drive(start("Shanghai Sales"))
    arguments = ApprovalRequest.objects.get(run=run).arguments
    claim = RecordClaim.objects.get(run=run, kind="group_name")
    RecordClaim.objects.filter(id=claim.id).update(key="Shanghai Sales", name="")  # as the old code wrote it
    other = RecordClaim.objects.create(tenant_id=run.tenant_id, kind="group_name", key="SHANGHAI SALES", holder="x")
    assert import_preconditions(run.tenant_id, run.id, arguments) != ""
    migration.rekey(apps, None)
    claim.refresh_from_db()
    other.refresh_from_db()
    assert (claim.key, claim.name) == (group_name_key("Shanghai Sales"), "Shanghai Sales")
    assert (other.key, other.name) == ("SHANGHAI SALES", "SHANGHAI SALES")  # a lookalike held at once keeps its key
    assert import_preconditions(run.tenant_id, run.id, arguments) == ""
