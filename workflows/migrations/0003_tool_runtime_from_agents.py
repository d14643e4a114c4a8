"""The tool runtime (ToolCall, StateCoordinate, CoordinateConsumption, ProvenanceBlock)
moved from agents to workflows: the engine owns its execution half. State only —
the tables keep their names (Meta.db_table) and their rows."""
import django.db.models.deletion
from django.db import migrations, models

import config.ids


class Migration(migrations.Migration):
    dependencies = [
        ("workflows", "0002_alter_node_options_node_position"),
        ("tenants", "0001_initial"),
        ("agents", "0003_anchor_exploration_message_ledgerentry_memoryitem"),
    ]

    state_operations = [
        migrations.CreateModel(
            name="ToolCall",
            fields=[
                ("id", config.ids.BusinessIdField(default=config.ids.new_id, editable=False, primary_key=True,
                                                  serialize=False)),
                ("tool", models.CharField(max_length=60)),
                ("arguments", models.JSONField(default=dict, help_text="fully resolved arguments")),
                ("result", models.JSONField(blank=True, null=True)),
                ("status", models.CharField(choices=[("started", "Started"), ("succeeded", "Succeeded"),
                                                     ("failed", "Failed")], default="started", max_length=20)),
                ("error", models.TextField(blank=True)),
                ("idempotency_key", models.CharField(max_length=120)),
                ("approval_id", models.BigIntegerField(blank=True, null=True)),
                ("started_at", models.DateTimeField(auto_now_add=True)),
                ("ended_at", models.DateTimeField(blank=True, null=True)),
                ("latency_ms", models.FloatField(default=0)),
                ("node", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="tool_calls",
                                           to="workflows.node")),
                ("run", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="tool_calls",
                                          to="workflows.run")),
                ("tenant", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                             to="tenants.tenant")),
            ],
            options={"db_table": "agents_toolcall", "ordering": ["started_at"],
                     "constraints": [models.UniqueConstraint(fields=("node", "idempotency_key"),
                                                             name="tool_call_key_unique")]},
        ),
        migrations.CreateModel(
            name="StateCoordinate",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("key", models.CharField(max_length=60)),
                ("value", models.JSONField()),
                ("producer", models.CharField(max_length=60)),
                ("receipt_ref", models.CharField(max_length=200)),
                ("plan_version", models.IntegerField(default=1)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("call", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="produced",
                                           to="workflows.toolcall")),
                ("run", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="coordinates",
                                          to="workflows.run")),
                ("tenant", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                             to="tenants.tenant")),
            ],
            options={"db_table": "agents_statecoordinate", "ordering": ["created_at"],
                     "constraints": [models.UniqueConstraint(fields=("run", "key", "plan_version"),
                                                             name="coordinate_unique")]},
        ),
        migrations.CreateModel(
            name="CoordinateConsumption",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("at", models.DateTimeField(auto_now_add=True)),
                ("call", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="consumed",
                                           to="workflows.toolcall")),
                ("coordinate", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE,
                                                 related_name="consumptions", to="workflows.statecoordinate")),
            ],
            options={"db_table": "agents_coordinateconsumption",
                     "constraints": [models.UniqueConstraint(fields=("coordinate", "call"),
                                                             name="consumption_unique")]},
        ),
        migrations.CreateModel(
            name="ProvenanceBlock",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("key", models.CharField(max_length=60)),
                ("supplied", models.TextField()),
                ("expected", models.TextField()),
                ("reason", models.TextField()),
                ("at", models.DateTimeField(auto_now_add=True)),
                ("node", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                           to="workflows.node")),
                ("run", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE,
                                          related_name="provenance_blocks", to="workflows.run")),
                ("tenant", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                             to="tenants.tenant")),
            ],
            options={"db_table": "agents_provenanceblock"},
        ),
    ]

    operations = [migrations.SeparateDatabaseAndState(state_operations=state_operations)]
