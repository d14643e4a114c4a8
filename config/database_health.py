"""Whether the database is away, as a serving process's pool knows it — not as a timeout guesses.

A request that waits for a pooled connection waits for one of two reasons, and they need
opposite answers: the database is away (answer 503 "cannot reach" at once, with
Retry-After) or it is up and every connection is lent out (wait for one: a burst of 30
requests on a pool of 10 is a queue, not an outage). A timeout cannot tell them apart;
the pool's own connection attempts can. `DatabaseHealth` is that flag, shared by the
process's threads:

- every connection the pool (or a probe) opens reports its outcome (`HealthReportingConnection`):
  a failed connect marks the database away, a successful one marks it back;
- while it is away, one request at a time per `probe_every` seconds tries a connection of
  its own (bounded by a connect timeout), so the flag clears within about a second of the
  database's return instead of when the pool's backed-off reconnect next fires;
- `HealthAwarePool.getconn` waits for a connection in short slices and looks at the flag
  between them: away → `DatabaseAway` (config.outage answers 503 "cannot reach"); the
  whole busy wait spent with the database up → `DatabaseBusy` (503 "busy").
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

log = logging.getLogger(__name__)

WAIT_SLICE_SECONDS = 0.4  # how often a waiting request looks at the flag
PROBE_EVERY_SECONDS = 1.0
PROBE_CONNECT_TIMEOUT = 2  # libpq's smallest


class DatabaseAway(psycopg.OperationalError):
    """The pool's last connection attempt failed: the database cannot be reached."""


class DatabaseBusy(PoolTimeout):
    """The database is up, and no pooled connection came free within the busy wait."""


class DatabaseHealth:
    """The flag: away since when, and why; and when a request may probe next."""

    def __init__(self, probe_every: float = PROBE_EVERY_SECONDS, clock=time.monotonic) -> None:
        self.probe_every = probe_every
        self.clock = clock
        self.away_since: float | None = None
        self.why = ""
        self._next_probe = 0.0
        self._lock = threading.Lock()

    def connect_failed(self, err: BaseException) -> None:
        with self._lock:
            if self.away_since is None:
                self.away_since = self.clock()
                self._next_probe = self.away_since + self.probe_every
                log.warning("the database cannot be reached (%s); requests answer 503 until it can",
                            str(err).splitlines()[0] if str(err) else type(err).__name__)
            self.why = str(err).splitlines()[0] if str(err) else type(err).__name__

    def connected(self) -> None:
        with self._lock:
            if self.away_since is not None:
                log.warning("the database answers again after %.1f s", self.clock() - self.away_since)
            self.away_since, self.why = None, ""

    @property
    def away(self) -> bool:
        return self.away_since is not None

    def probe_due(self) -> bool:
        """True for one caller per `probe_every` while the database is away: that caller probes."""
        with self._lock:
            now = self.clock()
            if self.away_since is None or now < self._next_probe:
                return False
            self._next_probe = now + self.probe_every
            return True


HEALTH = DatabaseHealth()


class HealthReportingConnection(psycopg.Connection):
    """A psycopg connection whose every connect attempt tells its flag (`health`) how it went."""

    health = HEALTH

    @classmethod
    def connect(cls, *args: Any, **kwargs: Any):  # type: ignore[override]
        try:
            conn = super().connect(*args, **kwargs)
        except psycopg.OperationalError as err:
            cls.health.connect_failed(err)
            raise
        cls.health.connected()
        return conn


class HealthAwarePool(ConnectionPool):
    """psycopg_pool's pool, whose wait for a connection ends early when the database is away."""

    def __init__(self, *args: Any, health: DatabaseHealth = HEALTH, **kwargs: Any) -> None:
        kwargs.setdefault("connection_class", HealthReportingConnection if health is HEALTH else type(
            "HealthReportingConnection", (HealthReportingConnection,), {"health": health}))
        super().__init__(*args, **kwargs)
        self.health = health

    def getconn(self, timeout: float | None = None):
        wait = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        while True:
            if self.health.away:
                self._probe()
                if self.health.away:
                    raise DatabaseAway(f"the database cannot be reached: {self.health.why}")
            left = deadline - time.monotonic()
            if left <= 0:
                raise DatabaseBusy(f"no database connection came free within {wait:.1f} s (the database is up)")
            try:
                return super().getconn(min(WAIT_SLICE_SECONDS, left))
            except PoolTimeout:
                continue  # look at the flag, then wait again

    def _probe(self) -> None:
        """One connection of its own, bounded: a success clears the flag (its connect says
        so), and the pool is told to refill now rather than at its next backed-off attempt."""
        if not self.health.probe_due():
            return
        kwargs = dict(self.kwargs or {}) if not callable(self.kwargs) else self.kwargs()
        kwargs["connect_timeout"] = PROBE_CONNECT_TIMEOUT
        try:
            self.connection_class.connect(self.conninfo or "", **kwargs).close()
        except psycopg.Error:
            return  # still away (the connect said so)
        self.check()  # drop what died with the old server; grow from fresh connections
