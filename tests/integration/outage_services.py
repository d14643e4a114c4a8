"""A Redis and a PostgreSQL of a test's own, on ports of their own, that it may SIGKILL and
start again: the outage tests kill these, never the machine's shared ones (5432, 6379).

PostgreSQL runs Debian's binaries (the shared server's major version, so the session's
seeded template copies over with pg_dump) as the `postgres` user on a data folder in a
temporary directory; killed with SIGKILL, it recovers from its WAL when started again."""
from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import psutil

from tests.support import LOGS, free_port


def _wait_port(port: int, proc: subprocess.Popen, what: str, timeout: float = 30) -> None:
    import socket

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}; see {LOGS}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"{what} did not listen on {port} within {timeout} s")


def _kill_tree(pid: int) -> None:
    try:
        parent = psutil.Process(pid)
        procs = parent.children(recursive=True) + [parent]
    except psutil.NoSuchProcess:
        return
    for proc in procs:
        try:
            proc.send_signal(signal.SIGKILL)
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(procs, timeout=10)


class _OwnService:
    """A server process of the test's own on `port`, which it may SIGKILL and start again;
    each start's output goes to a log of its own (`name`-port-start.log in LOGS)."""

    name = ""

    def __init__(self) -> None:
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    def command(self) -> list[str]:
        raise NotImplementedError

    def _ready(self) -> None:
        """Listening may not yet be answering: what the service needs besides its port."""

    def start(self) -> float:
        """Start it and wait until it answers; the time it did (time.time())."""
        LOGS.mkdir(parents=True, exist_ok=True)
        self.starts += 1
        log = open(LOGS / f"own-{self.name}-{self.port}-{self.starts}.log", "w")
        self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        _wait_port(self.port, self.proc, self.name)
        self._ready()
        return time.time()

    def kill(self) -> float:
        """SIGKILL the process and its children at once (no shutdown of any kind)."""
        assert self.proc is not None
        _kill_tree(self.proc.pid)
        self.proc.wait(timeout=10)
        return time.time()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.kill()


class OwnRedis(_OwnService):
    """`redis-server` with no persistence, as production's broker: a kill loses every message."""

    name = "redis"

    def __init__(self) -> None:
        super().__init__()
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def command(self) -> list[str]:
        return ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]


def _pg_bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not found:
        raise RuntimeError(f"no {name} under /usr/lib/postgresql/*/bin (Debian's postgresql package)")
    return found[-1]


class OwnPostgres(_OwnService):
    """A PostgreSQL cluster of the test's own; `url` names its `keel` database. Killed (the
    postmaster and every backend at once: no shutdown checkpoint), it recovers from its WAL
    when started again."""

    name = "postgres"

    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="keel-outage-pg-"))
        self.data = self.folder / "data"
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/keel"
        as_root = os.geteuid() == 0
        self._as = ["runuser", "-u", "postgres", "--"] if as_root else []
        if as_root:
            shutil.chown(self.folder, "postgres", "postgres")
        subprocess.run([*self._as, _pg_bin("initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust",
                        "--no-sync", "-E", "UTF8"], check=True, capture_output=True, timeout=120)

    def command(self) -> list[str]:
        # fsync off: a killed process loses nothing the kernel holds (only a machine crash
        # would); commits still wait for their WAL to reach the kernel.
        return [*self._as, _pg_bin("postgres"), "-D", str(self.data), "-p", str(self.port), "-k", str(self.folder),
                "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=200"]

    def _ready(self) -> None:
        import psycopg

        deadline = time.monotonic() + 60
        while True:  # listening is not yet accepting: crash recovery runs first
            try:
                psycopg.connect(self.admin_url, connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    @property
    def admin_url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/postgres"

    def load_copy_of(self, template_url: str) -> None:
        """The `keel` database: a copy of a database on another server (the session's seeded template)."""
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute('CREATE DATABASE "keel"')
        dump = subprocess.Popen([_pg_bin("pg_dump"), "--no-owner", "--no-privileges", template_url],
                                stdout=subprocess.PIPE)
        subprocess.run([_pg_bin("psql"), "-q", "-v", "ON_ERROR_STOP=1", self.url], stdin=dump.stdout, check=True,
                       capture_output=True, timeout=300)
        assert dump.wait(timeout=60) == 0

    def stop(self) -> None:
        super().stop()
        shutil.rmtree(self.folder, ignore_errors=True)
