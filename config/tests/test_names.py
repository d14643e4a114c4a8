"""Names as people read them: each class of lookalike reads as one name (UTS #39's
confusables), and names a person tells apart stay apart."""
import pytest

from config.names import name_skeleton

SALES = name_skeleton("Sales")


@pytest.mark.parametrize("lookalike", [
    "SaIes",  # a capital I for a small l
    "Sa1es",  # the digit one for l
    "Ѕаlеѕ",  # Cyrillic dze, a and ie for Latin letters
    "SALES", "sales",  # case
    "Ｓａｌｅｓ",  # fullwidth forms (NFKC)
    "Sa\u200bles",  # an invisible character inside
    " Sales ",  # space around
])
def test_a_lookalike_of_sales_is_the_same_name(lookalike):
    assert name_skeleton(lookalike) == SALES


@pytest.mark.parametrize("one, other", [
    ("Team 0", "Team O"),  # the digit zero for a capital O
    ("Team 0", "team o"),
    ("IT Team", "it team"),  # a capital I folds as its lower case does
    ("Farm", "Farrn"),  # r n for m
    ("Grоup", "Group"),  # a Cyrillic o
])
def test_each_confusable_class_reads_as_one_name(one, other):
    assert name_skeleton(one) == name_skeleton(other)


@pytest.mark.parametrize("one, other", [("Sales", "Sale"), ("P1 Group 01", "P1 Group 02"), ("上海销售", "上海工程")])
def test_names_a_person_tells_apart_stay_apart(one, other):
    assert name_skeleton(one) != name_skeleton(other)


def test_a_claim_keyed_before_capitals_were_mapped_is_re_keyed(demo):
    import importlib

    from django.apps import apps

    from payroll.models import RecordClaim, group_name_key
    from tenants.models import Tenant

    migration = importlib.import_module("payroll.migrations.0010_recordclaim_rekey_capitals_first")
    tenant = Tenant.objects.get(slug="demo")
    claim = RecordClaim.objects.create(tenant=tenant, kind="group_name", key="saies", name="SaIes", holder="x")
    migration.rekey(apps, None)
    claim.refresh_from_db()
    assert claim.key == group_name_key("Sales") == group_name_key("SaIes")
