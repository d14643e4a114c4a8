"""A group name's claim is keyed by what the name reads as (its skeleton, issue 30):
the claims held when this runs are re-keyed, keeping the name as written, so a run
that reserved its name before keeps it and finds it at its approval."""
import hashlib

from django.db import migrations, models

from config.names import name_skeleton


def _key(name: str) -> str:
    # payroll.models.group_name_key as of this migration (a migration keeps its own copy).
    key = name_skeleton(name)
    return key if len(key) <= 200 else "sha256:" + hashlib.sha256(key.encode()).hexdigest()


def rekey(apps, schema_editor):
    RecordClaim = apps.get_model("payroll", "RecordClaim")
    taken = set(RecordClaim.objects.filter(kind="group_name").values_list("tenant_id", "key"))
    for claim in RecordClaim.objects.filter(kind="group_name").order_by("id"):
        key = _key(claim.key)
        claim.name = claim.key
        if key != claim.key and (claim.tenant_id, key) not in taken:
            # (Two claims of lookalike names held at once: the later keeps its old key, which
            # no new claim can take; its run finds its name unreserved at approval, as it should.)
            taken.add((claim.tenant_id, key))
            claim.key = key
        claim.save(update_fields=["key", "name"])


def unkey(apps, schema_editor):
    RecordClaim = apps.get_model("payroll", "RecordClaim")
    for claim in RecordClaim.objects.filter(kind="group_name").exclude(name=""):
        claim.key = claim.name
        claim.save(update_fields=["key"])


class Migration(migrations.Migration):

    dependencies = [
        ("payroll", "0003_idempotency_generic"),
    ]

    operations = [
        migrations.AddField(
            model_name="recordclaim",
            name="name",
            field=models.CharField(blank=True, default="", max_length=200,
                                   help_text="a group name as its holder wrote it (the key is what it reads as)"),
        ),
        migrations.RunPython(rekey, unkey),
    ]
