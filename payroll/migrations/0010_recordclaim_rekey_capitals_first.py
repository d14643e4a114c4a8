"""Group-name claims re-keyed by the skeleton that maps capitals before folding case
(config.names.name_skeleton: "SaIes" reads "Sales"); a claim keeps the name as written."""
import hashlib

from django.db import migrations

from config.names import name_skeleton


def _key(name: str) -> str:
    # payroll.models.group_name_key as of this migration (a migration keeps its own copy).
    key = name_skeleton(name)
    return key if len(key) <= 200 else "sha256:" + hashlib.sha256(key.encode()).hexdigest()


def rekey(apps, schema_editor):
    RecordClaim = apps.get_model("payroll", "RecordClaim")
    claims = RecordClaim.objects.filter(kind="group_name").exclude(name="")
    taken = set(RecordClaim.objects.filter(kind="group_name").values_list("tenant_id", "key"))
    for claim in claims.order_by("id"):
        key = _key(claim.name)
        if key != claim.key and (claim.tenant_id, key) not in taken:
            # (Two claims that now read as one: the later keeps its old key, which no new
            # claim can take; its run finds its name unreserved at approval, as it should.)
            taken.add((claim.tenant_id, key))
            claim.key = key
            claim.save(update_fields=["key"])


class Migration(migrations.Migration):

    dependencies = [
        ("payroll", "0009_city_rules_load"),
    ]

    operations = [
        migrations.RunPython(rekey, migrations.RunPython.noop),
    ]
