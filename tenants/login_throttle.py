"""Log-in throttling with django-axes: per account and per address.

Every authenticate() goes through axes' backend first (settings.AUTHENTICATION_
BACKENDS), so the log-in form, the admin and the token endpoint share one count.
A locked account or address is refused *before* the password is checked, so the
right password does not get through until the cool-off has passed."""
from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from axes.backends import AxesStandaloneBackend
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_lockout_response
from axes.middleware import AxesMiddleware as _AxesMiddleware
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext_lazy

from config.api import DomainError

LOCKED_OUT_MESSAGE = gettext_lazy("Too many failed log-ins for this account or from this address. "
                                   "Try again in {minutes} minutes, or ask an admin to unlock it.")


def cooloff_seconds() -> int:
    return int(settings.AXES_COOLOFF_TIME.total_seconds())


def locked_out_message() -> str:
    return str(LOCKED_OUT_MESSAGE).format(minutes=max(1, round(cooloff_seconds() / 60)))


class LoginThrottled(DomainError):
    status_code = 429
    code = "login_throttled"

    def __init__(self):
        super().__init__(locked_out_message(), extra={"retry_after": cooloff_seconds()})
        self.headers = {"Retry-After": str(cooloff_seconds())}


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


class AccountAndAddressHandler(AxesDatabaseHandler):
    """Two limits where axes has one.

    axes compares one failure count with one limit. An account should lock after
    a handful of wrong passwords, but an address is often a whole office behind
    one NAT and needs more room. Counting an address's failures "towards the
    account limit" (minus the difference between the limits) makes the single
    comparison mean: account failures ≥ AXES_FAILURE_LIMIT, or address failures
    ≥ KEEL_LOGIN_ADDRESS_FAILURES."""

    def get_failures(self, request, credentials: dict | None = None) -> int:
        by_account, by_address = self.get_user_attempts(request, credentials)  # AXES_LOCKOUT_PARAMETERS' order
        account = _sum_failures(by_account) if credentials and credentials.get("username") else 0
        address = _sum_failures(by_address)
        headroom = max(0, settings.KEEL_LOGIN_ADDRESS_FAILURES - settings.AXES_FAILURE_LIMIT)
        return max(account, address - headroom)

    def reset_user_attempts(self, request, credentials: dict | None = None) -> int:
        """After a successful log-in (AXES_RESET_ON_SUCCESS) forget this account's
        failures only. axes would also forget every failure from the address, so
        an attacker could clear an address's count by logging in to an account of
        their own between guesses."""
        by_account = self.filter_user_attempts(request, credentials)[0]
        count, _ = by_account.delete()
        return count


def _sum_failures(attempts) -> int:
    from django.db.models import Sum

    return attempts.aggregate(total=Sum("failures_since_start"))["total"] or 0


def lockout_response(request: HttpRequest, original_response: HttpResponse | None = None,
                     credentials: dict[str, Any] | None = None) -> HttpResponse:  # noqa: ARG001
    """AXES_LOCKOUT_CALLABLE. The log-in page and the token endpoint answer a
    lockout themselves (429 with the reason, in their own format); keep that.
    Anything else that authenticates (the admin's log-in) gets the plain reason."""
    if isinstance(original_response, HttpResponse) and original_response.status_code == 429:
        return original_response
    return HttpResponse(locked_out_message(), status=429, content_type="text/plain; charset=utf-8")


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
