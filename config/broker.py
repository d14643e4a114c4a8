"""Celery's Redis transport without a new Redis client per command.

kombu's Redis channel builds a fresh `redis.Redis` for every publish, every delivery's
unacked bookkeeping and every ack (`Channel.conn_or_acquire`). With redis-py 8 a client
costs ~150 µs of CPU to build (its table of response callbacks), about a third of a
`send_task` and three times per hop. The client is only a façade over the channel's
connection pool and safe to share between threads, so this channel builds it once per
pool (a reconnect makes a new pool, and with it a new client)."""
from __future__ import annotations

from kombu.transport import redis as kombu_redis


class Channel(kombu_redis.Channel):
    _sync_client: tuple[object, object] | None = None  # (its pool, the client)

    def _create_client(self, asynchronous: bool = False):
        if asynchronous:
            return super()._create_client(asynchronous=True)
        pool = self.pool
        cached = self._sync_client
        if cached is None or cached[0] is not pool:
            cached = self._sync_client = (pool, super()._create_client())
        return cached[1]


class Transport(kombu_redis.Transport):
    Channel = Channel
