"""The HR domain's blueprint, registered with the engine when Django starts."""
from pathlib import Path

from workflows.blueprints import blueprint_load

CANDIDATE_MATCHING = blueprint_load(Path(__file__).parent / "candidate_matching.json")
