"""Interleaved old/new pairs: run one benchmark alternately on an older revision and on
this checkout (old, new, old, new …), so a machine that drifts hits both alike, and print
every ratio the two have in common, pair by pair, with the median of new ÷ old.

    .venv/bin/python bench/pairs.py --old e0e35d7 --pairs 3 dag_hop -- --n 50 --rounds 3

The older revision is checked out once into a git worktree beside the temp folder and run
with this checkout's Python (the benchmarks start their own deployment). Only keys ending in
`_ratio` are compared: absolute times move with the machine, ratios measured in the same run
do not.
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def worktree(rev: str) -> Path:
    sha = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, check=True, capture_output=True,
                         text=True).stdout.strip()
    path = Path(tempfile.gettempdir()) / f"keel-bench-{sha}"
    if not path.exists():
        subprocess.run(["git", "worktree", "add", "--detach", str(path), sha], cwd=ROOT, check=True,
                       capture_output=True)
    return path


def run_once(tree: Path, bench: str, args: list[str]) -> dict:
    out = subprocess.run([sys.executable, f"bench/{bench}.py", *args], cwd=tree, capture_output=True, text=True,
                         timeout=3600)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode or not lines:
        raise SystemExit(f"{bench} failed in {tree} ({out.returncode}):\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    return json.loads(lines[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--old", required=True, help="the revision to compare against")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("bench", help="dag_hop, fanout, approve_resume, parked …")
    parser.add_argument("args", nargs="*", help="the benchmark's own arguments, after --")
    opts = parser.parse_args()
    old_tree = worktree(opts.old)
    pairs = []
    for i in range(opts.pairs):
        old, new = run_once(old_tree, opts.bench, opts.args), run_once(ROOT, opts.bench, opts.args)
        pairs.append((old, new))
        print(f"pair {i + 1}: old {json.dumps(old)}\n        new {json.dumps(new)}", flush=True)
    keys = sorted(k for k in pairs[0][0] if k.endswith("_ratio") and k in pairs[0][1])
    table = {}
    for key in keys:
        olds, news = [o[key] for o, _ in pairs], [n[key] for _, n in pairs]
        change = statistics.median(n / o for o, n in zip(olds, news) if o)
        table[key] = {"old": olds, "new": news, "new_over_old_median": round(change, 3)}
        print(f"{key:32} old {olds}  new {news}  new/old median {change:.3f}")
    print(json.dumps({"bench": opts.bench, "old": opts.old, "pairs": opts.pairs, "ratios": table}))


if __name__ == "__main__":
    main()
