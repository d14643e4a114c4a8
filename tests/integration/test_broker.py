"""Celery's Redis transport as Keel configures it (config/broker.py), on the real Redis:
messages go through in order and are acked, on one Redis client per connection pool
(kombu's own builds one per publish, per delivery and per ack), and a reconnect gets a
client of its new pool."""
import redis
from kombu import Connection

from config.broker import Transport
from tests.support import FLUSHED_REDIS_DB

URL = f"redis://127.0.0.1:6379/{FLUSHED_REDIS_DB}"


def counting_clients(monkeypatch) -> list[int]:
    built: list[int] = []
    real_init = redis.Redis.__init__

    def init(self, *args, **kwargs):
        built.append(1)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(redis.Redis, "__init__", init)
    return built


def test_messages_go_through_on_one_client_per_pool(monkeypatch):
    # Keys of its own: the database is shared with the workers of other tests.
    keys = {"unacked_key": "keel-broker-test-unacked", "unacked_index_key": "keel-broker-test-unacked-index",
            "unacked_mutex_key": "keel-broker-test-unacked-mutex"}
    redis.Redis.from_url(URL).delete("keel-broker-test", *keys.values())
    with Connection(URL, transport=Transport, transport_options=keys) as conn:
        queue = conn.SimpleQueue("keel-broker-test")
        built = counting_clients(monkeypatch)
        for i in range(20):
            queue.put({"n": i})
        received = []
        for _ in range(20):
            message = queue.get(timeout=5)
            received.append(message.payload["n"])
            message.ack()
        assert received == list(range(20))
        assert len(built) <= 2  # kombu's own transport: 80 for these 20 (a publish, a delivery, an ack, a get each)
        assert redis.Redis.from_url(URL).zcard(keys["unacked_index_key"]) == 0  # every ack reached Redis

        channel = queue.channel
        before = channel._create_client()
        channel._disconnect_pools()  # what a lost connection does
        queue.put({"n": 20})
        assert queue.get(timeout=5).payload == {"n": 20}
        assert channel._create_client() is not before  # the new pool's client
        queue.close()
