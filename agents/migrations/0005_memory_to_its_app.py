"""MemoryItem now lives in the memory app (memory 0001). State only."""
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0004_tool_runtime_to_workflows"),
        ("memory", "0001_initial"),
    ]

    operations = [migrations.SeparateDatabaseAndState(state_operations=[migrations.DeleteModel(name="MemoryItem")])]
