"""MemoryItem moved from agents to memory (state only: the table keeps its name and rows)."""
import django.db.models.deletion
from django.db import migrations, models

import config.ids


class Migration(migrations.Migration):
    initial = True
    dependencies = [
        ("agents", "0004_tool_runtime_to_workflows"),
        ("approvals", "0003_matrix_reminders"),
        ("tenants", "0001_initial"),
        ("workflows", "0003_tool_runtime_from_agents"),
    ]

    state_operations = [
        migrations.CreateModel(
            name="MemoryItem",
            fields=[
                ("id", config.ids.BusinessIdField(default=config.ids.new_id, editable=False, primary_key=True,
                                                  serialize=False)),
                ("layer", models.CharField(choices=[("L2", "L2"), ("L3", "L3")], max_length=2)),
                ("kind", models.CharField(help_text="e.g. template_approved, template_preference", max_length=40)),
                ("text", models.TextField(help_text="the statement, in words; no business ids")),
                ("signature", models.JSONField(default=dict, help_text="what kind of request it is about")),
                ("data", models.JSONField(default=dict,
                                          help_text="program values (e.g. the template) — never shown to the model")),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("approval", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE,
                                               related_name="+", to="approvals.approvalrequest")),
                ("evidence", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE,
                                               related_name="distilled", to="memory.memoryitem")),
                ("tenant", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                             to="tenants.tenant")),
                ("tool_call", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                                                related_name="+", to="workflows.toolcall")),
            ],
            options={"db_table": "agents_memoryitem", "ordering": ["created_at"],
                     "constraints": [models.UniqueConstraint(fields=("tenant", "layer", "kind", "approval"),
                                                             name="memory_receipt_unique")]},
        ),
    ]

    operations = [migrations.SeparateDatabaseAndState(state_operations=state_operations)]
