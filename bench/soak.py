"""Kill-soak: N payroll runs at once in one tenant, on the production topology
(PostgreSQL, Redis, `celery worker` processes, beat), with an approver bot and a
killer. Proves DESIGN.md §4 under fire: every run completes (a deliberate name
collision asks for another name and then completes), exactly one group per
completed run, one effect per effectful node, no duplicate, no stale refusal
between runs on disjoint records.

The killer SIGKILLs M times at seeded-random moments: a pool child (the master
forks a new one; the task is re-delivered), a whole worker with its children (a
new one is started), or — one kill in three — the very process that holds an
import's lease, inside the import (KEEL_FAULTS widens that window). The broker is
flushed once half-way: the sweeper re-dispatches from the database alone.

    .venv/bin/python bench/soak.py [--runs 30] [--kills 300] [--collisions 3] [--seed 1]

Ends with one JSON line."""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support import (  # noqa: E402
    FLUSHED_REDIS_DB,
    Api,
    keel_start,
    keel_stop,
    process_group_kill,
)

REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"
FINISHED = {"completed", "failed", "blocked", "rolled_back", "stopped", "cancelled"}
ENV = {
    "KEEL_LEASE_SECONDS": "3", "KEEL_SWEEP_SECONDS": "1", "KEEL_LOG_LEVEL": "WARNING",
    # The system of record answers after a while, as a remote one would: kills land inside calls.
    "KEEL_FAULTS": "import_template.before=sleep:0.2,import_template.after=sleep:0.4,"
                   "snapshot_payroll_groups.before=sleep:0.1",
}


def _children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def _kill(pid: int) -> bool:
    try:
        os.kill(pid, signal.SIGKILL)
        return True
    except ProcessLookupError:
        return False


class Soak:
    def __init__(self, keel, *, seed: int, workers: int, concurrency: int):
        self.keel, self.rng = keel, random.Random(seed)
        self.workers, self.concurrency = workers, concurrency
        self.lock = threading.Lock()
        self.kills = {"pool_child": 0, "worker": 0, "inside_import": 0}
        self.approvals = {"approved": 0, "refused_409": 0, "stale_refusals": 0, "other": 0}
        self.answers = 0
        self.done = threading.Event()

    # --- the approver bot: approves as approvals arrive ---
    def approver(self) -> None:
        bob = Api(self.keel.base_url, "bob")
        while not self.done.is_set():
            try:
                pending = bob.get("/api/v1/approvals/?status=pending")["results"]
            except Exception:  # the server is never killed; a hiccup is retried
                time.sleep(0.2)
                continue
            for approval in pending:
                status, body = bob.post(f"/api/v1/approvals/{approval['id']}/approve/", {"comment": "soak"})
                with self.lock:
                    if status == 200:
                        self.approvals["approved"] += 1
                    elif status == 409:
                        self.approvals["refused_409"] += 1
                        if (body or {}).get("code") == "preconditions_changed":
                            self.approvals["stale_refusals"] += 1
                    else:
                        self.approvals["other"] += 1
            time.sleep(0.1)

    # --- the killer ---
    def _import_holders(self) -> list[int]:
        """Pids of pool children holding an import's lease right now (lease_owner = host:pid:thread)."""
        import psycopg

        with psycopg.connect(self.keel.env["DATABASE_URL"]) as conn:
            rows = conn.execute("SELECT lease_owner FROM workflows_node WHERE status = 'in_progress' "
                                "AND tool = 'import_template' AND lease_owner <> ''").fetchall()
        # A lease an approver's request handed over ("handed:host:pid:thread") names the server's
        # process, not a worker's: nothing of a worker to kill there.
        return [int(owner.split(":")[1]) for (owner,) in rows if owner.count(":") == 2]

    def kill_once(self) -> None:
        live = [w for w in self.keel.workers if w.poll() is None]
        if len(live) < self.workers:  # keep the topology at strength
            self.keel.worker_start(concurrency=self.concurrency)
            live = [w for w in self.keel.workers if w.poll() is None]
        roll = self.rng.random()
        if roll < 1 / 3:
            holders = self._import_holders()
            if holders and _kill(self.rng.choice(holders)):
                self.kills["inside_import"] += 1
                return
        if roll < 0.8:
            worker = self.rng.choice(live)
            children = _children(worker.pid)
            if children and _kill(self.rng.choice(children)):
                self.kills["pool_child"] += 1
                return
        worker = self.rng.choice(live)
        process_group_kill(worker)  # the worker and its pool children
        self.kills["worker"] += 1
        self.keel.worker_start(concurrency=self.concurrency)

    def total_kills(self) -> int:
        return sum(self.kills.values())


def _answer_questions(alice: Api, run_ids: list[str], answered: set[str], last_status: dict[str, str]) -> int:
    """A collision asks for another name: answer it, as the user would."""
    n = 0
    for run_id in run_ids:
        if run_id in answered or last_status.get(run_id) != "awaiting_input":
            continue
        run = alice.get(f"/api/v1/runs/{run_id}/")
        if run["status"] == "awaiting_input":
            status, _ = alice.post(f"/api/v1/runs/{run_id}/input/", {"answer": f"Soak renamed {run_id}"})
            if status == 200:
                answered.add(run_id)
                n += 1
    return n


def figures(keel, run_ids: list[str], soak: Soak, answered: set[str], elapsed: float) -> dict:
    import psycopg

    ids = [int(r) for r in run_ids]
    with psycopg.connect(keel.env["DATABASE_URL"]) as conn:
        statuses = dict(conn.execute("SELECT id, status FROM workflows_run WHERE id = ANY(%s)", (ids,)).fetchall())
        # Groups each run's imports created, by the idempotency key they carry (run<id>:...).
        created = conn.execute(
            "SELECT r.key FROM payroll_payrollgroup g JOIN payroll_idempotencyrecord r "
            "ON g.idempotency_record_id = r.id WHERE r.operation = 'template_import'").fetchall()
        per_key: dict[str, int] = {}
        for (key,) in created:
            per_key[key] = per_key.get(key, 0) + 1
        completed_imports = conn.execute(
            "SELECT run_id, result_ref FROM workflows_node WHERE run_id = ANY(%s) AND tool = 'import_template' "
            "AND status = 'completed' AND retired_in IS NULL", (ids,)).fetchall()
    per_run: dict[int, int] = {}
    for key, count in per_key.items():
        run_id = int(key.split(":")[0].removeprefix("run")) if key.startswith("run") else None
        if run_id in statuses:
            per_run[run_id] = per_run.get(run_id, 0) + count
    completed = [r for r, s in statuses.items() if s == "completed"]
    groups = [per_run.get(r, 0) for r in completed]
    effects = sum(per_run.get(r, 0) for r, _ in completed_imports)
    return {
        "runs": len(ids),
        "completed": len(completed),
        "rolled_back": sum(s == "rolled_back" for s in statuses.values()),
        "blocked": sum(s == "blocked" for s in statuses.values()),
        "failed": sum(s == "failed" for s in statuses.values()),
        "stuck": sum(s not in FINISHED for s in statuses.values()),
        "groups_per_completed_run": round(sum(groups) / len(groups), 3) if groups else None,
        "groups_per_completed_run_min_max": [min(groups), max(groups)] if groups else None,
        "duplicate_effects": sum(max(0, c - 1) for c in per_key.values())
                             + sum(max(0, c - 1) for c in per_run.values()),
        "effects_per_effectful_node": round(effects / len(completed_imports), 3) if completed_imports else None,
        "stale_refusals": soak.approvals["stale_refusals"],
        "approver_409s": soak.approvals["refused_409"],
        "approvals": soak.approvals["approved"],
        "collisions_answered": len(answered),
        "kills": soak.total_kills(),
        "kills_by_kind": dict(soak.kills),
        "seconds": round(elapsed, 1),
    }


def soak(*, runs: int = 30, kills: int = 300, collisions: int = 3, seed: int = 1, workers: int = 2,
         concurrency: int = 2, kill_interval: float = 0.6, timeout: float = 900) -> dict:
    """Run the soak on a fresh deployment; returns the figures (and stops everything)."""
    keel = keel_start("production", ENV, redis_db=FLUSHED_REDIS_DB)
    try:
        for _ in range(workers):
            keel.worker_start(concurrency=concurrency)
        keel.beat_start()
        alice = Api(keel.base_url, "alice")
        state = Soak(keel, seed=seed, workers=workers, concurrency=concurrency)
        names = [f"Soak {i}" for i in range(runs)]
        # Deliberate collisions: a few runs ask for a name another run already chose.
        names += [f"Soak {i}" for i in range(min(collisions, runs))]
        run_ids: list[str] = []
        started = time.monotonic()

        def start(name: str) -> None:
            status, run = alice.post("/api/v1/runs/", {"blueprint": "payroll_group_setup",
                                                       "params": {"request": REQUEST, "group_name": name}})
            assert status == 201, run
            with state.lock:
                run_ids.append(run["id"])

        starters = [threading.Thread(target=start, args=(name,)) for name in names]
        bot = threading.Thread(target=state.approver, daemon=True)
        bot.start()
        for t in starters:
            t.start()
        for t in starters:
            t.join()
        answered: set[str] = set()
        last_report = 0.0
        last_status: dict[str, str] = {}

        def killer() -> None:
            # On its own cadence, whatever the runs are doing: kills land at random moments.
            flushed = False
            while state.total_kills() < kills and not state.done.is_set():
                time.sleep(state.rng.uniform(0, 2 * kill_interval))
                try:
                    state.kill_once()
                except Exception as err:  # a worker that would not start: say so, keep going
                    print(f"soak: kill failed: {err}", file=sys.stderr, flush=True)
                if not flushed and state.total_kills() >= kills // 2:
                    import redis

                    redis.Redis.from_url(keel.env["REDIS_URL"]).flushdb()  # once: every queued message gone
                    flushed = True

        killing = threading.Thread(target=killer, daemon=True)
        killing.start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for r in list(run_ids):  # a finished run stays finished: only the others are read again
                if last_status.get(r) not in FINISHED:
                    last_status[r] = alice.get(f"/api/v1/runs/{r}/")["status"]
            _answer_questions(alice, run_ids, answered, last_status)
            statuses = [last_status[r] for r in run_ids]
            finished = sum(s in FINISHED for s in statuses)
            if time.monotonic() - last_report > 15:  # progress on stderr; the figures alone on stdout
                last_report = time.monotonic()
                counts = {s: statuses.count(s) for s in sorted(set(statuses))}
                print(f"soak: {time.monotonic() - started:.0f} s, kills {state.total_kills()}, runs {counts}",
                      file=sys.stderr, flush=True)
            if finished == len(run_ids):
                if state.total_kills() >= kills:
                    break
                # Every run is done before the killer is: another round keeps the workers busy.
                more = [f"Soak r{len(run_ids)}-{i}" for i in range(runs)]
                starters = [threading.Thread(target=start, args=(name,)) for name in more]
                for t in starters:
                    t.start()
                for t in starters:
                    t.join()
            time.sleep(0.5)
        state.done.set()
        killing.join(timeout=120)
        return figures(keel, run_ids, state, answered, time.monotonic() - started)
    finally:
        keel_stop(keel)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--kills", type=int, default=300)
    parser.add_argument("--collisions", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=1800)
    args = parser.parse_args()
    print(json.dumps(soak(runs=args.runs, kills=args.kills, collisions=args.collisions, seed=args.seed,
                          workers=args.workers, timeout=args.timeout)))


if __name__ == "__main__":
    main()
