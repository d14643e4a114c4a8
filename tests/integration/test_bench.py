"""Every benchmark runs at a smoke size and prints its JSON line: a benchmark that no longer runs
fails here, not on the day someone needs its figures. The figures themselves are not judged
(a smoke size measures nothing worth judging)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support import ROOT, free_port, pg_database_create, pg_database_drop, template

pytestmark = pytest.mark.long(90)  # seconds; started first (tests/fixtures.py)

BENCH = ROOT / "bench"
# Each script's arguments for a run of seconds; a script missing here fails the test below.
SMOKE = {
    "approve_resume": ["--n", "1"],
    "chat_load": ["--users", "2", "--rounds", "1", "--single", "1", "--profiled", "2"],
    "dag_hop": ["--n", "2", "--rounds", "1"],
    "fanout": ["--n", "5"],
    "first_page": ["--venv", str(ROOT / ".venv")],
    "hop_profile": ["--n", "12"],
    "pairs": ["--old", "HEAD", "--pairs", "1", "push_latency", "--", "--n", "2"],
    "parked": ["--runs", "2", "--n", "2", "--rounds", "1"],
    "payroll_month": ["--smoke"],
    "push_latency": ["--n", "2"],
    "soak": ["--runs", "2", "--kills", "1", "--collisions", "1", "--workers", "1", "--timeout", "120"],
    "timeline_page": ["--rounds", "1", "--frames", "10,20"],
}


def scripts() -> set[str]:
    """The benchmarks: the bench/ modules that run as a script (the others are their libraries)."""
    return {path.stem for path in BENCH.glob("*.py") if 'if __name__ == "__main__"' in path.read_text()}


def test_every_benchmark_has_a_smoke_size():
    assert scripts() == set(SMOKE)


@pytest.mark.parametrize("bench", sorted(SMOKE))
def test_the_benchmark_prints_its_json_line(bench):
    args, env = list(SMOKE[bench]), dict(os.environ)
    if bench == "first_page":  # its server on a port nobody else's test uses
        args += ["--port", str(free_port())]
    if bench in ("timeline_page", "payroll_month"):  # its own copy of the seeded database, not the test database
        env["DATABASE_URL"] = pg_database_create(template=template("production"))
    old_tree = _pairs_tree() if bench == "pairs" else None
    old_tree_kept = old_tree is not None and old_tree.exists()  # somebody's own: left alone
    try:
        done = subprocess.run([sys.executable, BENCH / f"{bench}.py", *args], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300)
    finally:
        if bench in ("timeline_page", "payroll_month"):
            pg_database_drop(env["DATABASE_URL"])
        if old_tree is not None and not old_tree_kept and old_tree.exists():
            subprocess.run(["git", "worktree", "remove", "--force", old_tree], cwd=ROOT, check=True)
    assert done.returncode == 0, f"{bench} exited with {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert isinstance(figures, dict), figures
    if bench == "first_page":  # the clone it served from, kept for a look at its log
        shutil.rmtree(Path(figures["clone"]).parent)


def _pairs_tree() -> Path:
    """Where pairs.py checks out the old revision (HEAD here): its worktree() names it so."""
    sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True, capture_output=True,
                         text=True).stdout.strip()
    return Path(tempfile.gettempdir()) / f"keel-bench-{sha}"
