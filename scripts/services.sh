#!/usr/bin/env bash
# Make sure PostgreSQL and Redis answer on 127.0.0.1; start them when installed
# but stopped; fail loudly otherwise. Integration tests never silently skip.
set -euo pipefail

pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }

if ! pg_up; then
  if command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
    echo "PostgreSQL is stopped: starting it"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
    for _ in $(seq 1 30); do pg_up && break; sleep 1; done
  fi
  pg_up || { echo "FATAL: PostgreSQL is not answering on 127.0.0.1:5432 and could not be started." >&2; exit 1; }
fi

if ! redis_up; then
  if command -v redis-server >/dev/null; then
    echo "Redis is stopped: starting it"
    mkdir -p /var/lib/redis /var/log/redis
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
      --dir /var/lib/redis --logfile /var/log/redis/ci.log
    for _ in $(seq 1 30); do redis_up && break; sleep 0.5; done
  fi
  redis_up || { echo "FATAL: Redis is not answering on 127.0.0.1:6379 and could not be started." >&2; exit 1; }
fi
echo "PostgreSQL and Redis are up."
