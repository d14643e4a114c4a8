"""The health flag, not a timeout, decides "the database is away": a pool whose connections
are all lent out makes a request wait its turn (and, past the busy wait, say busy), a
database that refuses connections answers at once, and the flag clears within a probe
interval of the database's return."""
import threading
import time

import psycopg
import pytest
from django.db import connection, connections

from config.database_health import DatabaseAway, DatabaseBusy, DatabaseHealth, HealthAwarePool
from tests.support import free_port


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_failed_connect_marks_the_database_away_and_a_good_one_marks_it_back():
    health = DatabaseHealth(clock=Clock())
    assert not health.away
    health.connect_failed(psycopg.OperationalError("connection refused\nmore"))
    assert health.away and health.why == "connection refused"
    health.connected()
    assert not health.away and health.why == ""


def test_one_caller_per_interval_probes_while_the_database_is_away():
    clock = Clock()
    health = DatabaseHealth(probe_every=1.0, clock=clock)
    assert not health.probe_due()  # up: nobody probes
    health.connect_failed(psycopg.OperationalError("refused"))
    assert not health.probe_due()  # just failed: the pool's own attempt was the probe
    clock.now += 1.0
    assert [health.probe_due() for _ in range(5)] == [True, False, False, False, False]
    clock.now += 0.5
    assert not health.probe_due()
    clock.now += 0.5
    assert health.probe_due()


def _pool(conninfo: str, **options) -> HealthAwarePool:
    return HealthAwarePool(conninfo, health=DatabaseHealth(probe_every=0.2), open=True,
                           kwargs={"connect_timeout": 2}, **options)


def _conninfo(**overrides) -> str:
    params = {**connection.get_connection_params(), **overrides}
    return psycopg.conninfo.make_conninfo(**{k: v for k, v in params.items()
                                            if k in ("dbname", "user", "host", "port", "password") and v})


@pytest.mark.django_db
def test_a_busy_pool_makes_a_request_wait_its_turn_not_fail():
    pool = _pool(_conninfo(), min_size=1, max_size=1, timeout=10)
    try:
        held = pool.getconn()
        threading.Timer(1.5, pool.putconn, args=[held]).start()  # lent out for 1.5 s: longer than any slice
        started = time.monotonic()
        conn = pool.getconn()
        waited = time.monotonic() - started
        pool.putconn(conn)
        assert 1.2 < waited < 5 and not pool.health.away
    finally:
        pool.close()


@pytest.mark.django_db
def test_a_pool_busy_past_its_wait_says_busy_not_away():
    pool = _pool(_conninfo(), min_size=1, max_size=1, timeout=1.0)
    try:
        held = pool.getconn()
        with pytest.raises(DatabaseBusy):
            pool.getconn()
        pool.putconn(held)
    finally:
        pool.close()


def test_a_database_that_refuses_connections_answers_at_once_and_comes_back_within_a_probe():
    port = free_port()  # nothing listens here
    pool = _pool(f"host=127.0.0.1 port={port} dbname=postgres user=postgres", min_size=1, max_size=2, timeout=30)
    try:
        time.sleep(0.3)  # the pool's first connection attempt is refused
        started = time.monotonic()
        with pytest.raises(DatabaseAway):
            pool.getconn()
        assert time.monotonic() - started < 2 and pool.health.away
        # The database returns (here: the pool is pointed at one that answers): a probe finds it.
        pool.conninfo = _conninfo(dbname="postgres")
        time.sleep(0.25)
        conn = pool.getconn()
        pool.putconn(conn)
        assert not pool.health.away
    finally:
        pool.close(timeout=1)


@pytest.mark.django_db
def test_readyz_calls_a_busy_pool_ready_and_answers_within_its_probe_time():
    from unittest import mock

    from django.test import Client

    pool = _pool(_conninfo(), min_size=1, max_size=1, timeout=30)
    try:
        held = pool.getconn()
        with mock.patch.object(type(connections["default"]), "pool", new_callable=mock.PropertyMock, return_value=pool):
            started = time.monotonic()
            response = Client().get("/readyz")
            took = time.monotonic() - started
        pool.putconn(held)
        assert response.status_code == 200 and took < 3, (response.json(), took)
        assert response.json()["checks"]["database"] == "ok (busy: every pooled connection is lent out)"
    finally:
        pool.close()
