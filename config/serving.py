"""How the ASGI server's processes use the database (console/management/commands/serve.py
starts them; each serving process, the first or one of several, calls `database_pool_use`
from config/asgi.py before its first query)."""
import os

from django.db import connections

# Set by `manage.py serve` for itself and the server processes it starts (they inherit it).
SERVING = "KEEL_SERVING"


def database_pool_use() -> None:
    """The server's requests borrow PostgreSQL connections from a pool (psycopg_pool, through
    Django's "pool" option): each request runs on a thread of its own, so a persistent
    connection would die with its thread, and a new one costs the database a process and
    its catalog caches (several ms of CPU a request). Workers keep their own connections
    (config/celery.py). KEEL_DB_POOL=0 turns it off; its value is the pool's largest size,
    per server process. Only in a serving process; once."""
    size = int(os.environ.get("KEEL_DB_POOL", "10"))
    database = connections.settings["default"]
    options = database.setdefault("OPTIONS", {})
    if (os.environ.get(SERVING) != "1" or size <= 0 or "pool" in options
            or database["ENGINE"] != "django.db.backends.postgresql" or database.get("CONN_MAX_AGE")):
        return
    # The pool hands out every connection from here on: close one opened before. (A server
    # process started by the supervisor has none; it calls this inside its event loop.)
    for conn in connections.all(initialized_only=True):
        if conn.connection is not None:
            conn.close()
    # A request waits this long for a connection while the database is up (a burst queues);
    # while the pool's health flag says it is away, it answers 503 at once (config.database_health).
    options["pool"] = {"min_size": min(2, size), "max_size": size,
                       "timeout": float(os.environ.get("KEEL_DB_POOL_TIMEOUT", "30"))}
    _health_aware_pool(connections["default"])


def _health_aware_pool(wrapper) -> None:
    """Django builds its pool on first use from OPTIONS["pool"]; built here first, the same way
    but of the class that keeps the health flag, it is the one Django finds and uses."""
    from psycopg_pool import ConnectionPool

    from config.database_health import HealthAwarePool

    pool = HealthAwarePool(kwargs={**wrapper.get_connection_params(), "autocommit": True}, open=False,
                           configure=wrapper._configure_connection,
                           check=ConnectionPool.check_connection if wrapper.settings_dict["CONN_HEALTH_CHECKS"] else None,
                           **wrapper.settings_dict["OPTIONS"]["pool"])
    type(wrapper)._connection_pools.setdefault(wrapper.alias, pool)
