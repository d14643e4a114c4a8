"""Whether the worker process holding a lease is still alive: a lease that ran
out is a crash only when its holder is gone.

Each process that takes leases (worker_name below: `host:pid:thread`) holds
one connection to Redis named after it (`keel-worker:<host>:<pid>`, CLIENT SETNAME) for as
long as it lives. However a process dies — SIGKILL, the OOM killer, a segfault — the
operating system closes its socket and Redis forgets the name at once; a process that is
alive but over its lease (a slow step, or one whose completion never reached the
database) still holds it. The reclaimer looks the holder up among Redis's clients
(CLIENT LIST): no heartbeat whose period must be tuned against the lease, nothing written
per step. A thread pings the connection every few seconds, so that a connection Redis
dropped (a restart, an idle timeout) is opened again, named again, within that time.

Without Redis (the embedded mode: the workers are threads of the server process), a
holder on this host is alive if its process is (signal 0). Whatever cannot be told —
another host and no Redis, Redis out of reach — is never called a crash. Limits: a
process whose pid a new process on the same host took since is taken for alive; a host
that vanished without closing its sockets stays "alive" until Redis's TCP keepalive
(five minutes by default) drops its connections."""
from __future__ import annotations

import logging
import os
import socket
import threading
import time

import redis
from django.conf import settings

log = logging.getLogger(__name__)

PING_SECONDS = 10.0
_PREFIX = "keel-worker:"
_started_in: int | None = None  # the pid whose presence is held (a forked child holds its own)
_lock = threading.Lock()


def presence_name(host: str, pid: int | str) -> str:
    return f"{_PREFIX}{host}:{pid}"


def presence_hold(pid: int) -> None:
    """Hold this process's named connection to Redis (once per process; a no-op without
    Redis). Called by whatever names this process as a lease's holder."""
    global _started_in
    if _started_in == pid:  # the common case: one comparison
        return
    with _lock:
        if _started_in == pid:
            return
        _started_in = pid
        if settings.REDIS_URL:
            threading.Thread(target=_hold, args=(settings.REDIS_URL, presence_name(socket.gethostname(), pid)),
                             name="keel-presence", daemon=True).start()


def _hold(url: str, name: str) -> None:
    client = None
    while True:
        try:
            if client is None:
                # client_name: every (re)connection names itself; one connection, never pooled away.
                client = redis.Redis.from_url(url, client_name=name, single_connection_client=True,
                                              socket_timeout=5, socket_connect_timeout=5)
            client.ping()
        except redis.RedisError as err:
            log.warning("this worker's presence in Redis is lost for now (%s): a lease of this process that "
                        "runs out meanwhile may be taken for a crash", err)
            if client is not None:
                client.close()
            client = None
        time.sleep(PING_SECONDS)


def holder_alive(owner: str) -> bool | None:
    """Whether the process named in a lease (`host:pid:thread`) is alive: True, False,
    or None when that cannot be told."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if not host or not pid.isdigit():
        return None
    here = host == socket.gethostname()
    if here and int(pid) == os.getpid():
        return True
    if settings.REDIS_URL:
        try:
            client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=5, socket_connect_timeout=5)
            try:
                present = any(c.get("name") == presence_name(host, pid) for c in client.client_list())
            finally:
                client.close()
        except redis.RedisError as err:
            log.warning("could not tell whether worker %s:%s is alive (%s)", host, pid, err)
            return None
        if present or not here:
            return present
        # Not present on this very host: its process may be alive without its presence
        # (Redis dropped it a moment ago); ask the operating system.
    if here:
        return _process_alive(int(pid))
    return None


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, under another user
        return True
    try:  # a zombie (dead, not yet reaped by its parent) answers signal 0 too
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return True


# --- Who holds a lease, and why a lease ran out -------------------------------------------

# The lease owner of a node claimed on behalf of the worker its message goes to.
HANDED_OVER = "handed:"
# A lease let go on purpose (a deferral, a retry with backoff) names why: the takeover
# that follows is the plan, not the recovery from a worker that died.
LET_GO_DEFERRED, LET_GO_RETRY = "deferred:", "retry:"
CRASH, LEASE_EXPIRED = "crash", "lease_expired"


def worker_name() -> str:
    """Who holds a lease: `host:pid:thread`. The process holds its presence from the first
    time it is named: a reclaim then tells its crash from a lease it outlived."""
    pid = os.getpid()
    presence_hold(pid)  # once per process
    return f"{socket.gethostname()}:{pid}:{threading.get_ident() % 100000}"


def reclaim_cause(previous_owner: str) -> str:
    """Why a lease ran out: a retry or a deferral let it go on purpose, a hand-over's
    message was lost; else its worker died (`crash`: its process is gone) or outlived it
    (`lease_expired`: alive and over its lease — a slow step, or one whose outcome never
    reached the database; also when whether it lives cannot be told: a crash is said only
    when it is known)."""
    if previous_owner.startswith(LET_GO_RETRY):
        return "retry"
    if previous_owner.startswith(LET_GO_DEFERRED):
        return "deferred"
    if previous_owner.startswith(HANDED_OVER):
        return "handover"  # its message was lost or its worker died before taking it over
    return CRASH if holder_alive(previous_owner) is False else LEASE_EXPIRED
