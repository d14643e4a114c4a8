"""The city rules' notes rewritten for an HR reader, in English and Chinese (no ticket numbers,
no file paths): each period loaded from the rules file takes the file's notes; a period's
"why it last changed" that only said where it was loaded from is cleared. Figures, sources
and periods staff changed are left as they are."""
import json
from pathlib import Path

from django.db import migrations
from django.utils import timezone

RULES_PATH = Path(__file__).resolve().parent.parent / "data" / "city_rules.json"
LOADED = "Loaded from payroll/data/city_rules.json."


def notes_of(period: dict) -> dict:
    """{kind: note} of a period's contributions and housing fund, and its "notes"."""
    found = {item["kind"]: item["note"] for item in period.get("contributions", []) if "note" in item}
    if "note" in period.get("housing_fund", {}):
        found["housing_fund"] = period["housing_fund"]["note"]
    return {"kinds": found, "notes": period.get("notes", [])}


def rewrite(apps, schema_editor):
    CityRulePeriod = apps.get_model("payroll", "CityRulePeriod")
    data = json.loads(RULES_PATH.read_text(encoding="utf-8"))
    for row in CityRulePeriod.objects.all():
        city = data["cities"].get(row.city) or {}
        period = next((p for p in city.get("periods", []) if p["effective_from"] == row.effective_from.isoformat()),
                      None)
        if period is None:
            continue
        wanted = notes_of(period)
        rules = dict(row.rules or {})
        rules["notes"] = wanted["notes"]
        rules["contributions"] = [{**item, "note": wanted["kinds"][item["kind"]]} if item.get("kind") in wanted["kinds"]
                                  else item for item in rules.get("contributions", [])]
        if "housing_fund" in rules and "housing_fund" in wanted["kinds"]:
            rules["housing_fund"] = {**rules["housing_fund"], "note": wanted["kinds"]["housing_fund"]}
        row.rules = rules
        if row.note == LOADED:
            row.note = ""
        row.updated_at = timezone.now()  # every process re-reads the rules at its next look-up
        row.save(update_fields=["rules", "note", "updated_at"])


class Migration(migrations.Migration):

    dependencies = [
        ("payroll", "0011_item_rate_name_group_city"),
    ]

    operations = [migrations.RunPython(rewrite, migrations.RunPython.noop)]
