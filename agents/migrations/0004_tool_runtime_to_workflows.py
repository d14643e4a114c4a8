"""The tool runtime's models now live in workflows (see workflows 0003). State only:
the memory's link to a tool call follows the model; no table changes."""
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0003_anchor_exploration_message_ledgerentry_memoryitem"),
        ("workflows", "0003_tool_runtime_from_agents"),
    ]

    state_operations = [
        migrations.AlterField(
            model_name="memoryitem", name="tool_call",
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                                    related_name="+", to="workflows.toolcall"),
        ),
        migrations.DeleteModel(name="CoordinateConsumption"),
        migrations.DeleteModel(name="ProvenanceBlock"),
        migrations.DeleteModel(name="StateCoordinate"),
        migrations.DeleteModel(name="ToolCall"),
    ]

    operations = [migrations.SeparateDatabaseAndState(state_operations=state_operations)]
