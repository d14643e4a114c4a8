"""Hand-written statements on the hot path, as prepared statements on PostgreSQL.

Django's psycopg 3 backend binds parameters on the client and never prepares
(so that connection poolers work): every execution is parsed and planned
afresh. The engine's hot path runs the same few statements thousands of times a
minute on long-lived worker connections, so it uses a server-binding psycopg
cursor on Django's own connection (same transaction, same atomic blocks) and
prepares each statement on first use."""
from __future__ import annotations

import json
import re
from typing import Any

import psycopg
from django.db import connection
from psycopg.types.json import Jsonb


class Statement:
    """A hand-written PostgreSQL statement with %(name)s parameters, compacted and turned
    into PostgreSQL's own $n placeholders once, when the module is loaded: psycopg then
    neither parses it nor converts its placeholders on each execution (a raw cursor)."""

    def __init__(self, text: str) -> None:
        self.text = compact(text)
        self.names: list[str] = []

        def number(match: re.Match) -> str:
            if match.group(0) == "%%":
                return "%"
            if match.group(1) not in self.names:
                self.names.append(match.group(1))
            return f"${self.names.index(match.group(1)) + 1}"

        self.positional = _PLACEHOLDER.sub(number, self.text)

    def __str__(self) -> str:
        return self.text


_PLACEHOLDER = re.compile(r"%%|%\((\w+)\)s")
# A threshold no statement reaches by repetition: only those executed with prepare=True are.
PREPARE_WHEN_ASKED = 2**31 - 1


def execute(sql: str | Statement, params: Any = None, *, fetch: str = "") -> Any:
    """Run one statement. fetch: '' (row count), 'one' or 'all'."""
    connection.ensure_connection()
    # Django's error wrapper: a failure marks the connection, so that the next
    # close_old_connections() (per request, per task) checks it and drops it if broken.
    if isinstance(sql, Statement):
        cursor = psycopg.RawCursor(connection.connection)
        sql, params = sql.positional, [params[name] for name in sql.names]
    else:
        cursor = psycopg.Cursor(connection.connection)
    raw = connection.connection
    # Preparing is on for this statement only. With it on for the connection, psycopg would
    # also remember the text of each ORM statement (up to 100 a connection), and a client-
    # bound text holds its values: a 5 MB upload's bytea literal stayed in every pooled
    # connection that wrote one. The statements prepared here stay prepared, since psycopg
    # keeps their names whatever the threshold (until a rollback clears them).
    raw.prepare_threshold = PREPARE_WHEN_ASKED
    try:
        with connection.wrap_database_errors, cursor:
            cursor.execute(sql, params, prepare=True)
            if fetch == "one":
                return cursor.fetchone()
            if fetch == "all":
                return cursor.fetchall()
            return cursor.rowcount
    finally:
        raw.prepare_threshold = None


def rows_insert(objs: list, *, unique: list[str], update: list[str] | tuple[str, ...] = ()) -> list:
    """Insert model instances (of one model) in one statement — INSERT … ON CONFLICT …
    RETURNING, with no transaction around it (bulk_create wraps BEGIN and COMMIT round trips
    around its INSERT, get_or_create a read and a transaction). A row already there with the
    same `unique` fields is left as it is, or, with `update`, has those fields set from the
    new one. Returns the primary keys written (inserted; with `update`, updated too); a
    single instance takes its row's."""
    if not objs:
        return []
    meta, qn = objs[0]._meta, connection.ops.quote_name
    fields = [f for f in meta.concrete_fields if not (f.primary_key and getattr(objs[0], f.attname) is None)]
    values = [f.get_db_prep_save(f.pre_save(obj, add=True), connection) for obj in objs for f in fields]
    row = "(" + ", ".join(["%s"] * len(fields)) + ")"
    columns = [qn(meta.get_field(name).column) for name in update]
    action = ("DO UPDATE SET " + ", ".join(f"{c} = EXCLUDED.{c}" for c in columns)) if columns else "DO NOTHING"
    statement = (f"INSERT INTO {qn(meta.db_table)} ({', '.join(qn(f.column) for f in fields)}) "
                 f"VALUES {', '.join([row] * len(objs))} "
                 f"ON CONFLICT ({', '.join(qn(meta.get_field(name).column) for name in unique)}) {action} "
                 f"RETURNING {qn(meta.pk.column)}")
    with connection.cursor() as cursor:
        cursor.execute(statement, values)
        written = [pk for (pk,) in cursor.fetchall()]
    if len(objs) == 1 and written:
        objs[0].pk = written[0]
    return written


def compact(statement: str) -> str:
    """A statement without its comment lines and indentation: the text sent and
    parsed on every execution (psycopg caches the conversion of statements up to
    4 KiB only)."""
    lines = (line.strip() for line in statement.splitlines())
    return "\n".join(line for line in lines if line and not line.startswith("--"))


def text_array(values: list[str]) -> str:
    """A text[] parameter as PostgreSQL's array literal: a list that a hot statement passes
    on every execution is formatted once by its owner instead of dumped each time."""
    return "{" + ",".join('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values) + "}"


def jsonb(value: Any) -> Any:
    """A JSON parameter for a PostgreSQL statement."""
    return Jsonb(value)


def json_value(value: Any) -> Any:
    """A jsonb column as read back (Django's connection loads jsonb as text)."""
    return json.loads(value) if isinstance(value, str | bytes) else value
