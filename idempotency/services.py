"""Idempotent writes, once for every system of record (DESIGN.md §4).

    receipt = idempotent(MyIdempotencyRecord, tenant_id=..., operation="thing_create",
                         key=key_checked(header), request={...}, work=lambda record: (201, {...}))

The claim is an "in progress" row, unique per (tenant, operation, key). Whoever inserts
it does the work; everyone else reads it and
- replays the stored receipt (same request, done),
- is refused 422 `idempotency_key_reused` (the same key with a different request),
- is refused 409 `idempotency_in_progress` (another caller holds it and its lease runs),
- or takes the row over, compare-and-set on the lease token (the lease expired: its
  worker died; or the work failed part-way and left state a retry resumes).

Two ways to hold the claim:
- `in_one_transaction=True`: the row, the work and the receipt commit together. A
  concurrent duplicate waits on the unique index, then replays the receipt (or, when the
  first rolled back, does the work itself); a crash leaves nothing behind to take over.
- `in_one_transaction=False`: the claim commits first (others see it in progress), then
  the work runs — in one transaction (`atomic=True`) or committing in steps of its own.
  On failure the claim is released: deleted, or marked failed when `keeps_partial(record)`
  says the attempt left state behind that a retry with the same key must resume.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext

from config.api import Conflict, DomainError, Unprocessable

from .models import IdempotencyRecordBase, IdempotencyState, RequestRecord

log = logging.getLogger(__name__)

MAX_KEY_LENGTH = 200
R = TypeVar("R", bound=IdempotencyRecordBase)
Work = Callable[[Any], tuple[int, dict[str, Any]]]


def idempotency_lease() -> timedelta:
    """How long a claimed key stays another caller's before a retry may take it over
    (the claimer died): a minute by default; the recovery tests shorten it."""
    return timedelta(seconds=float(os.environ.get("KEEL_IDEMPOTENCY_LEASE_SECONDS", "60")))


@dataclass(frozen=True)
class Receipt:
    status_code: int
    body: dict
    replayed: bool


VISIBLE_ASCII = re.compile("[ -~]+")


class KeyRequired(DomainError):
    status_code = 400
    code = "idempotency_key_required"


def key_checked(key: str | None) -> str:
    key = (key or "").strip()
    if not key:
        raise KeyRequired(gettext("Send an Idempotency-Key header (any unique string, e.g. a UUID) with every write, and the same key when you retry it."))
    if len(key) > MAX_KEY_LENGTH:
        raise KeyRequired(gettext("The Idempotency-Key may be at most %(MAX_KEY_LENGTH)s characters.")
                          % {"MAX_KEY_LENGTH": MAX_KEY_LENGTH},
                          code="idempotency_key_too_long")
    if not VISIBLE_ASCII.fullmatch(key):
        # A header is bytes that HTTP reads as Latin-1: a control character or a byte past
        # ASCII is invisible or another character in every log and admin page that shows it.
        raise KeyRequired(gettext("The Idempotency-Key may hold only visible ASCII characters and spaces "
                                  "(a UUID is one)."), code="idempotency_key_invalid")
    return key


def request_hash(operation: str, request: dict[str, Any]) -> str:
    """The canonical request's SHA-256 (dates and decimals as their text)."""
    canonical = json.dumps({"operation": operation, "request": request}, sort_keys=True, separators=(",", ":"),
                           default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _in_progress() -> Conflict:
    return Conflict(gettext("A request with this Idempotency-Key is still in progress; retry it in a moment."),
                    code="idempotency_in_progress")


def _replay(record: IdempotencyRecordBase) -> Receipt:
    return Receipt(status_code=record.response_status or 200, body=record.body, replayed=True)


def _claim(records: type[R], *, tenant_id: int, operation: str, key: str, request_hash: str) -> R | Receipt:
    """The record this caller now holds, or the stored receipt to replay."""
    for _ in range(3):  # the row may vanish between our insert and our read (a failed first try)
        token = uuid.uuid4().hex
        try:
            with transaction.atomic():
                return records.objects.create(
                    tenant_id=tenant_id, operation=operation, key=key, request_hash=request_hash,
                    state=IdempotencyState.IN_PROGRESS, lease_token=token,
                    expires_at=timezone.now() + idempotency_lease())
        except IntegrityError:
            pass  # someone holds (or held) this key: read what they left
        existing = records.objects.filter(tenant_id=tenant_id, operation=operation, key=key).first()
        if existing is None:
            continue
        if existing.request_hash != request_hash:
            raise Unprocessable(gettext("This Idempotency-Key was already used for a different request. Use a new key for a new request."),
                                code="idempotency_key_reused")
        if existing.state == IdempotencyState.DONE:
            return _replay(existing)
        now = timezone.now()
        if existing.state == IdempotencyState.IN_PROGRESS and existing.expires_at and existing.expires_at > now:
            raise _in_progress()
        # Failed part-way, or its worker died: take it over, compare-and-set on the
        # lease so exactly one of several late callers wins.
        taken = records.objects.filter(pk=existing.pk, state=existing.state,
                                       lease_token=existing.lease_token).update(
            state=IdempotencyState.IN_PROGRESS, lease_token=token, expires_at=now + idempotency_lease(),
            updated_at=now)
        if not taken:
            raise _in_progress()
        existing.refresh_from_db()
        log.info("idempotency takeover %s:%s", operation, key)
        return existing
    raise _in_progress()


def _complete(records: type[R], record: R, status_code: int, body: dict[str, Any]) -> Receipt:
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), default=str)
    stored = records.objects.filter(pk=record.pk, lease_token=record.lease_token).update(
        state=IdempotencyState.DONE, response_status=status_code, response_body=text, expires_at=None,
        updated_at=timezone.now())
    if not stored:
        # Our lease expired and another caller took over; the effect is done either way.
        log.warning("idempotency lease lost before the receipt was stored: %s:%s", record.operation, record.key)
    # Return what we stored, parsed back, so the first answer and every replay render the same bytes.
    return Receipt(status_code=status_code, body=json.loads(text), replayed=False)


def _release(records: type[R], record: R, keeps_partial: Callable[[R], bool] | None) -> None:
    """After a failed attempt: let a retry run again (and resume any partial state)."""
    mine = records.objects.filter(pk=record.pk, lease_token=record.lease_token)
    if keeps_partial is not None and keeps_partial(record):
        mine.update(state=IdempotencyState.FAILED, expires_at=None, updated_at=timezone.now())
    else:
        mine.delete()  # nothing was written: as if the request never came


def idempotent(records: type[R], *, tenant_id: int, operation: str, key: str, request: dict[str, Any],
               work: Work, in_one_transaction: bool = False, atomic: bool = True,
               keeps_partial: Callable[[R], bool] | None = None) -> Receipt:
    """Run `work(record)` once per (tenant, operation, key) of `records` and return its
    receipt, `(status_code, body)`, stored as JSON text; see the module's docstring."""
    hashed = request_hash(operation, request)
    if in_one_transaction:
        with transaction.atomic():
            claimed = _claim(records, tenant_id=tenant_id, operation=operation, key=key, request_hash=hashed)
            if isinstance(claimed, Receipt):
                return claimed
            status_code, body = work(claimed)
            return _complete(records, claimed, status_code, body)
    claimed = _claim(records, tenant_id=tenant_id, operation=operation, key=key, request_hash=hashed)
    if isinstance(claimed, Receipt):
        return claimed
    record = claimed
    try:
        if atomic:
            with transaction.atomic():
                status_code, body = work(record)
                return _complete(records, record, status_code, body)
        status_code, body = work(record)
    except BaseException:
        _release(records, record, keeps_partial)
        raise
    return _complete(records, record, status_code, body)


def idempotent_if_keyed(*, tenant_id: int, operation: str, key: str | None, request: dict[str, Any],
                        work: Callable[[], tuple[int, dict[str, Any]]]) -> Receipt:
    """A generic app's write that takes an optional Idempotency-Key (starting a run, posting
    a message): without the header, done as asked; with it, done once per key — a retry
    gets the first answer and creates nothing (RequestRecord). The claim commits first, so
    a retry while the first is still working is refused 409, and a first try that failed
    leaves the key free for its retry."""
    if key is None:
        status_code, body = work()
        return Receipt(status_code=status_code, body=body, replayed=False)
    return idempotent(RequestRecord, tenant_id=tenant_id, operation=operation, key=key_checked(key),
                      request=request, work=lambda record: work(), atomic=False)
