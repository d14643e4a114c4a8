"""Load payroll/data/city_rules.json into CityRulePeriod: the file was the rules' home until
issue 34 made them data staff change; from here on the database is, and the file is the seed
(and what payroll.rules reads where the table is empty). Validated first with the same parser
the look-ups use, so a malformed file stops the migration instead of loading a wrong figure."""
import json
from pathlib import Path

from django.db import migrations

RULES_PATH = Path(__file__).resolve().parent.parent / "data" / "city_rules.json"
PERIOD_COLUMNS = ("effective_from", "effective_to", "source", "verified")


def load(apps, schema_editor):
    from payroll.records.rules import rules_parse  # a pure function of the file's data: no models

    CityRulePeriod = apps.get_model("payroll", "CityRulePeriod")
    data = json.loads(RULES_PATH.read_text(encoding="utf-8"))
    rules_parse(data)
    for key, city in data["cities"].items():
        for period in city["periods"]:
            CityRulePeriod.objects.update_or_create(
                city=key, effective_from=period["effective_from"],
                defaults={"name": city["name"], "name_zh": city["name_zh"], "aliases": city.get("aliases", []),
                          "effective_to": period.get("effective_to"), "source": period["source"],
                          "verified": bool(period.get("verified", False)),
                          "rules": {k: v for k, v in period.items() if k not in PERIOD_COLUMNS},
                          "note": "Loaded from payroll/data/city_rules.json."})


def unload(apps, schema_editor):
    apps.get_model("payroll", "CityRulePeriod").objects.all().delete()


class Migration(migrations.Migration):

    dependencies = [
        ("payroll", "0008_city_rule_period"),
    ]

    operations = [migrations.RunPython(load, unload)]
