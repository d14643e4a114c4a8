"""Hand-written statements on the hot path, as prepared statements on PostgreSQL.

Django's psycopg 3 backend binds parameters on the client and never prepares
(so that connection poolers work): every execution is parsed and planned
afresh. The engine's hot path runs the same few statements thousands of times a
minute on long-lived worker connections, so it uses a server-binding psycopg
cursor on Django's own connection (same transaction, same atomic blocks) and
prepares each statement on first use. On SQLite, statements go through
Django's cursor unchanged (they must then be portable SQL)."""
from __future__ import annotations

import json
from typing import Any

from django.db import connection


def is_postgres() -> bool:
    return connection.vendor == "postgresql"


def execute(sql: str, params: Any = None, *, fetch: str = "") -> Any:
    """Run one statement. fetch: '' (row count), 'one' or 'all'."""
    if connection.vendor == "postgresql":
        import psycopg

        connection.ensure_connection()
        # Django's error wrapper: a failure marks the connection, so that the next
        # close_old_connections() (per request, per task) checks it and drops it if broken.
        with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
            cursor.execute(sql, params, prepare=True)
            if fetch == "one":
                return cursor.fetchone()
            if fetch == "all":
                return cursor.fetchall()
            return cursor.rowcount
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        if fetch == "one":
            return cursor.fetchone()
        if fetch == "all":
            return cursor.fetchall()
        return cursor.rowcount


def compact(statement: str) -> str:
    """A statement without its comment lines and indentation: the text sent and
    parsed on every execution (psycopg caches the conversion of statements up to
    4 KiB only)."""
    lines = (line.strip() for line in statement.splitlines())
    return "\n".join(line for line in lines if line and not line.startswith("--"))


def jsonb(value: Any) -> Any:
    """A JSON parameter for a PostgreSQL statement."""
    from psycopg.types.json import Jsonb

    return Jsonb(value)


def json_value(value: Any) -> Any:
    """A jsonb column as read back (Django's connection loads jsonb as text)."""
    return json.loads(value) if isinstance(value, str | bytes) else value
