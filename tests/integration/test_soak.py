"""The short kill-soak (bench/soak.py): N = 10 concurrent runs, at least 20 SIGKILLs of
worker processes (pool children, whole workers, inside the import), the broker
flushed once. Every run completes; one group and one effect each; nothing duplicated;
no approval refused as stale between runs on disjoint records."""
import json
import sys

import pytest

from tests.support import ROOT

pytestmark = pytest.mark.long(90)  # seconds; started first (tests/fixtures.py)


@pytest.mark.timeout(1500)
def test_the_short_soak_completes_every_run_once_under_kills():
    sys.path.insert(0, str(ROOT / "bench"))
    from soak import soak

    figures = soak(runs=10, kills=20, collisions=2, seed=7, kill_interval=0.5, timeout=1200)
    print(json.dumps(figures))
    assert figures["kills"] >= 20
    assert figures["stuck"] == 0 and figures["failed"] == figures["blocked"] == figures["rolled_back"] == 0, figures
    assert figures["completed"] == figures["runs"]
    assert figures["groups_per_completed_run_min_max"] == [1, 1]
    assert figures["effects_per_effectful_node"] == 1.0
    assert figures["duplicate_effects"] == 0 and figures["stale_refusals"] == 0
    assert figures["collisions_answered"] == 2
