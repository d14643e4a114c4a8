"""Two writers at once on PostgreSQL, each on a connection of its own: the lock-order and
sibling tests force an interleaving by pausing one and watching the other wait for a lock."""
from __future__ import annotations

import threading

from django.db import connection


def waiting_for_a_lock() -> int:
    """How many sessions of this database wait for a lock right now."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                       "AND wait_event_type = 'Lock'")
        return cursor.fetchone()[0]


class Actor(threading.Thread):
    """One worker or one person's request, on a connection of its own; its result or error kept.
    `patient`: it finds no deadlock (the other side does), as a writer that waited longer."""

    def __init__(self, name: str, act, *, patient: bool = False):
        super().__init__(name=name, daemon=True)
        self.act, self.patient, self.result, self.error = act, patient, None, None

    def run(self) -> None:
        try:
            if self.patient:
                with connection.cursor() as cursor:
                    cursor.execute("SET deadlock_timeout = '20s'")
            self.result = self.act()
        except BaseException as err:  # noqa: BLE001 - the test reports it
            self.error = err
        finally:
            connection.close()


def joined(*actors: Actor) -> None:
    for actor in actors:
        actor.join(20)
        assert not actor.is_alive(), f"{actor.name} never finished"
