"""Log-in throttling with django-axes: a lock per (account, address) and per address, a
growing delay per account, never a lock that someone else can aim at an account.

Every authenticate() goes through axes' backend first (settings.AUTHENTICATION_
BACKENDS), so the log-in form, the admin and the token endpoint share one count.
A locked or delayed attempt is refused *before* the password is checked, so the
right password does not get through until the lock or the delay ends.

Three rules (AccountAndAddressHandler), each kept for its own key:

* **An account from an address** is locked after AXES_FAILURE_LIMIT failures of that
  account from that address within AXES_COOLOFF_TIME. Only the guesser's own address is
  locked: a lock per account, from any address, let anyone lock anyone out (an approver,
  the admin) with five wrong passwords.
* **An account from anywhere else** is slowed, never locked: past AXES_FAILURE_LIMIT
  failures within the window (from any addresses), each attempt waits
  KEEL_LOGIN_DELAY after the last failure, doubled for each failure past the limit, up to
  KEEL_LOGIN_DELAY_MAX. A guesser with many addresses gets a guess a minute at most; the
  owner waits that long at most.
* **An address** is locked after KEEL_LOGIN_ADDRESS_FAILURES failures from it within the
  same window, whatever the accounts (a sprayer). But an address is often a whole office
  behind one NAT, so a locked address refuses only the accounts that have failed from it
  (since shortly before the lock, and since their last success): a colleague with no
  failures of their own there still has the password checked and gets in.

**Backoff.** A lock lasts AXES_COOLOFF_TIME the first time, then twice as long for each of
its key's lock-outs in the last KEEL_LOGIN_BACKOFF_MEMORY, up to KEEL_LOGIN_COOLOFF_MAX.
Attempts made while locked or delayed are refused unchecked and are not recorded
(AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False): they neither extend the lock nor
count toward the next one, so a lock ends when it said it would.

The address is the one the server saw (REMOTE_ADDR): a proxy's X-Forwarded-For is believed
only from the proxies named in KEEL_TRUSTED_PROXIES (console's serve command).

A success forgets the account's failures and lock-outs (its owner has shown the
password), never the address's: an attacker cannot clear an address's count by logging
in to an account of their own between guesses.

The state is not kept anywhere of its own: it is replayed (`lockouts`, a pure function)
from axes' own records, the failures whose password was checked (AccessFailureLog,
written here) and the successes (AccessLog). So nothing can drift out of step with the
record, and an admin unlocks the way axes documents it: `manage.py axes_reset_username
NAME`, `axes_reset_ip ADDRESS`, `axes_reset` (all), or deleting the rows under "Access
failures" in the admin. AccessAttempt rows are still written (axes' short-term summary in
the admin) but decide nothing."""
from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from collections.abc import Iterable
from typing import Any

from asgiref.sync import sync_to_async
from axes.backends import AxesStandaloneBackend
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username, get_failure_limit, get_lockout_response
from axes.middleware import AxesMiddleware as _AxesMiddleware
from axes.models import AccessFailureLog, AccessLog
from django.conf import settings
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.translation import gettext_lazy

from config.api import DomainError

LOCKED_OUT_MESSAGE = gettext_lazy("Too many failed log-ins for this account or from this address. "
                                   "Try again in {minutes} minutes, or ask an admin to unlock it.")
SLOWED_DOWN_MESSAGE = gettext_lazy("Too many failed log-ins for this account. Try again in {seconds} seconds.")
# The most recent records a verdict replays: far more than any lock needs, and a bound on
# the work one log-in attempt can cost while an address sprays.
REPLAYED_AT_MOST = 2000


def cooloff_seconds(request: HttpRequest | None = None) -> int:
    """How long the lock that refused this request still holds (the first lock's length
    when the request says nothing), whole seconds, rounded up."""
    until = getattr(request, "keel_locked_until", None)
    if until is None:
        return int(settings.AXES_COOLOFF_TIME.total_seconds())
    return max(1, math.ceil((until - timezone.now()).total_seconds()))


def locked_out_message(request: HttpRequest | None = None) -> str:
    seconds = cooloff_seconds(request)
    if seconds < 90:
        return str(SLOWED_DOWN_MESSAGE).format(seconds=seconds)
    return str(LOCKED_OUT_MESSAGE).format(minutes=max(1, round(seconds / 60)))


class LoginThrottled(DomainError):
    status_code = 429
    code = "login_throttled"

    def __init__(self, request: HttpRequest | None = None):
        seconds = cooloff_seconds(request)
        super().__init__(locked_out_message(request), extra={"retry_after": seconds})
        self.headers = {"Retry-After": str(seconds)}


def locked_out(request: HttpRequest) -> bool:
    """Did axes refuse (or just lock) the log-in attempted during this request?"""
    return bool(getattr(request, "axes_locked_out", False))


class AxesBackend(AxesStandaloneBackend):
    """axes' backend, minus its refusal of authenticate() calls without a request.

    Every entry point reachable from the network (the log-in form, the admin,
    the token endpoint) passes its request and is throttled. A call without one
    (Django's test client's login(), a management command) has no client address
    to throttle, and axes would raise instead of letting the next backend answer."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


# --- The rule, as a pure function -----------------------------------------------------------

@dataclass(frozen=True)
class Limit:
    failures: int  # this many within `window` lock the key
    window: timedelta
    base: timedelta  # the first lock's length, doubled for each recent lock-out
    cap: timedelta
    memory: timedelta  # lock-outs older than this no longer lengthen the next


def lockouts(events: Iterable[tuple[datetime, bool]], limit: Limit) -> list[tuple[datetime, datetime]]:
    """The locks (start, end) that a key's events, in time order, made: (time, True) a
    failure whose password was checked, (time, False) a success, which forgets the failures
    and lock-outs before it. A failure inside a lock (only a race or a locked address's
    untried account records one) counts for nothing."""
    locks: list[tuple[datetime, datetime]] = []
    pending: list[datetime] = []
    for at, failed in events:
        if not failed:
            locks, pending = [], []
            continue
        if locks and at < locks[-1][1]:
            continue
        pending = [t for t in pending if t > at - limit.window] + [at]
        if len(pending) >= limit.failures:
            recent = min(30, sum(1 for started, _ in locks if started > at - limit.memory))
            locks.append((at, at + min(limit.cap, limit.base * 2 ** recent)))
            pending = []
    return locks


def delayed_until(events: Iterable[tuple[datetime, bool]], limit: Limit, *, delay: timedelta,
                  delay_max: timedelta) -> datetime | None:
    """When an account's next attempt may be checked, from its events in time order (as for
    `lockouts`): past `limit.failures` failures within `limit.window` since its last success,
    `delay` after the last failure, doubled for each failure past the limit, at most
    `delay_max`. None when no delay applies."""
    recent: list[datetime] = []
    for at, failed in events:
        recent = [t for t in recent if t > at - limit.window] + [at] if failed else []
    if len(recent) < limit.failures:
        return None
    return recent[-1] + min(delay_max, delay * 2 ** min(30, len(recent) - limit.failures))


def _limits() -> tuple[Limit, Limit]:
    window = settings.AXES_COOLOFF_TIME
    shared = {"window": window, "base": window, "cap": max(window, settings.KEEL_LOGIN_COOLOFF_MAX),
              "memory": settings.KEEL_LOGIN_BACKOFF_MEMORY}
    return (Limit(failures=settings.AXES_FAILURE_LIMIT, **shared),
            Limit(failures=settings.KEEL_LOGIN_ADDRESS_FAILURES, **shared))


def locked_until(*, username: str | None, address: str | None, now: datetime) -> datetime | None:
    """When the lock or delay that refuses this account from this address ends; None if none does."""
    account, by_address = _limits()
    since = now - account.memory - account.cap  # every lock-out that can still lengthen one

    def failures(where: Q) -> list[tuple[str | None, datetime]]:
        rows = (AccessFailureLog.objects.filter(where, attempt_time__gte=since).order_by("-attempt_time")
                .values_list("username", "attempt_time")[:REPLAYED_AT_MOST])
        return list(reversed(rows))

    ends = []
    successes = list(AccessLog.objects.filter(username=username, attempt_time__gte=since)
                     .values_list("attempt_time", flat=True)) if username else []
    if username:
        gets_in = [(at, False) for at in successes]
        events = sorted([(at, True) for _, at in failures(Q(username=username, ip_address=address))] + gets_in)
        locks = lockouts(events, account)
        if locks and now < locks[-1][1]:
            ends.append(locks[-1][1])
        events = sorted([(at, True) for _, at in failures(Q(username=username))] + gets_in)
        delay = delayed_until(events, account, delay=settings.KEEL_LOGIN_DELAY, delay_max=settings.KEEL_LOGIN_DELAY_MAX)
        if delay and now < delay:
            ends.append(delay)
    from_address = failures(Q(ip_address=address))
    locks = lockouts([(at, True) for _, at in from_address], by_address)
    if locks and now < locks[-1][1]:
        # A locked address refuses only the accounts that failed from it, shortly before
        # the lock or since (and since their last success).
        started, end = locks[-1]
        forgotten = max([started - by_address.window, *successes])
        if any(name == (username or None) and at >= forgotten for name, at in from_address):
            ends.append(end)
    return max(ends, default=None)


class AccountAndAddressHandler(AxesDatabaseHandler):
    """The rules of this module's docstring, in axes' handler API."""

    def _locked_until(self, request, credentials: dict | None) -> datetime | None:
        until = locked_until(username=get_client_username(request, credentials), address=request.axes_ip_address,
                             now=request.axes_attempt_time or timezone.now())
        request.keel_locked_until = until
        return until

    def get_failures(self, request, credentials: dict | None = None) -> int:
        """axes compares one number with AXES_FAILURE_LIMIT (is_locked, and after a failure
        is recorded); the verdict has three keys, so it answers in axes' terms: the limit
        itself while a lock holds, else nothing."""
        return get_failure_limit(request, credentials) if self._locked_until(request, credentials) else 0

    def user_login_failed(self, sender, credentials: dict, request=None, **kwargs):
        """Record the failure the verdict replays, then let axes do the rest (its summary
        row, the verdict through get_failures, the lock-out flag and signal). An attempt
        axes refused unchecked is not a failure of the password and is not recorded."""
        if request is not None and not getattr(request, "axes_locked_out", False) \
                and not self.is_whitelisted(request, credentials):
            username = get_client_username(request, credentials)
            AccessFailureLog.objects.create(username=username, ip_address=request.axes_ip_address,
                                            user_agent=request.axes_user_agent, http_accept=request.axes_http_accept,
                                            path_info=request.axes_path_info, attempt_time=request.axes_attempt_time)
            super().user_login_failed(sender, credentials, request, **kwargs)
            if username:
                self.remove_out_of_limit_failure_logs(username=username)
            return
        super().user_login_failed(sender, credentials, request, **kwargs)

    def remove_out_of_limit_failure_logs(self, *, username: str, limit: int | None = None) -> int:
        """Keep an account's newest AXES_ACCESS_FAILURE_LOG_PER_USER_LIMIT failures. axes'
        own deletes the newest ones (its rows are ordered newest first), which would drop the
        failure just recorded and never lock a much-guessed account again."""
        limit = limit or settings.AXES_ACCESS_FAILURE_LOG_PER_USER_LIMIT
        stale = list(AccessFailureLog.objects.filter(username=username).order_by("-attempt_time", "-id")
                     .values_list("id", flat=True)[limit:])
        return AccessFailureLog.objects.filter(id__in=stale).delete()[0] if stale else 0

    def reset_attempts(self, *, ip_address: str | None = None, username: str | None = None,
                       ip_or_username: bool = False) -> int:
        """axes' reset (axes_reset, axes_reset_ip, axes_reset_username): the failures the
        verdict replays are what unlocks, so they go too."""
        failures = AccessFailureLog.objects.all()
        if ip_or_username:
            failures = failures.filter(Q(ip_address=ip_address) | Q(username=username))
        else:
            if ip_address:
                failures = failures.filter(ip_address=ip_address)
            if username:
                failures = failures.filter(username=username)
        failures.delete()
        return super().reset_attempts(ip_address=ip_address, username=username, ip_or_username=ip_or_username)

    def reset_user_attempts(self, request, credentials: dict | None = None) -> int:
        """After a successful log-in (AXES_RESET_ON_SUCCESS) forget this account's
        summary rows only; the verdict forgets its failures by the success itself (AccessLog).
        axes would also forget every failure from the address, so an attacker could clear
        an address's count by logging in to an account of their own between guesses."""
        by_account = self.filter_user_attempts(request, credentials)[0]
        count, _ = by_account.delete()
        return count


def lockout_response(request: HttpRequest, original_response: HttpResponse | None = None,
                     credentials: dict[str, Any] | None = None) -> HttpResponse:  # noqa: ARG001
    """AXES_LOCKOUT_CALLABLE. The log-in page and the token endpoint answer a
    lockout themselves (429 with the reason, in their own format); keep that.
    Anything else that authenticates (the admin's log-in) gets the plain reason."""
    if isinstance(original_response, HttpResponse) and original_response.status_code == 429:
        return original_response
    return HttpResponse(locked_out_message(request), status=429, content_type="text/plain; charset=utf-8")


class AxesMiddleware(_AxesMiddleware):
    """axes' middleware with its async path fixed: axes 8.3.1 calls
    get_lockout_response(request, credentials) there, dropping the view's own
    response (and handing the credentials over as if they were it), so under
    ASGI every lockout became a 500."""

    async def __acall__(self, request: HttpRequest) -> HttpResponse:
        response = await self.get_response(request)
        if settings.AXES_ENABLED and getattr(request, "axes_locked_out", None):
            credentials = getattr(request, "axes_credentials", None)
            response = await sync_to_async(get_lockout_response, thread_sensitive=True)(request, response, credentials)
        return response
