"""Seconds from `make run` on a fresh clone to its first page: clones this checkout's HEAD
into a temp folder, runs `make run` there (a new venv, pip with no cache, a new embedded
PostgreSQL, migrate, seed, serve), polls /login/ until it answers 200, then stops the
server. Prints one JSON line.

    python3 bench/first_page.py [--port 8011] [--venv PATH]

`--venv` links an existing virtualenv into the clone instead: `make run` then takes it as
installed, and the figure is the rest (the smoke run in `make test` uses it).
"""
import argparse
import json
import os
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8011)
    parser.add_argument("--venv", type=Path, help="a virtualenv to link into the clone instead of making one")
    args = parser.parse_args()
    clone = Path(tempfile.mkdtemp(prefix="keel-first-page-")) / "keel"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    if args.venv:
        (clone / ".venv").symlink_to(args.venv.resolve())
        # The clone's requirements.txt is as old as the venv's install mark: make takes the venv
        # as installed and writes nothing into it (it may be another checkout's).
        installed = clone / ".venv" / ".installed"
        if installed.exists():
            os.utime(clone / "requirements.txt", ns=(installed.stat().st_mtime_ns,) * 2)  # to the ns: make compares
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "KEEL_PGDATA", "VIRTUAL_ENV"}}
    env["PIP_NO_CACHE_DIR"] = "1"
    log = open(clone.parent / "make-run.log", "w")
    started = time.monotonic()
    make = subprocess.Popen(["make", "run", f"PORT={args.port}"], cwd=clone, env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        while True:
            if make.poll() is not None:
                raise SystemExit(f"make run exited with {make.returncode}; see {log.name}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{args.port}/login/", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            time.sleep(0.1)
        seconds = time.monotonic() - started
    finally:
        os.killpg(make.pid, signal.SIGTERM)
        make.wait(timeout=30)
    print(json.dumps({"first_page_seconds": round(seconds, 1), "clone": str(clone)}))


if __name__ == "__main__":
    main()
