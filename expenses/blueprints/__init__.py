"""The expense domain's blueprint, registered with the engine when Django starts."""
from pathlib import Path

from workflows.blueprints import blueprint_load

EXPENSE_CLAIM = blueprint_load(Path(__file__).parent / "expense_claim.json")
