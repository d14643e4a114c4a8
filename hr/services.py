"""The only writers of the HR Core system of record. The API, the pages, the
supervisor and the matching run's tools all call these.

A TAN's approval writes its outbox event in the same transaction and hands the event to
the supervisor after commit; the outbox sweep (hr.tasks) covers a lost hand-over. Matches
are written one per (TAN, candidate), each under its own idempotency key, so a skill
retried whole — or a second run for the same TAN — never duplicates one."""
from __future__ import annotations

import os
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from approvals.authority import approval_covers
from config.api import Conflict, DomainError, Forbidden, NotFound, strict_int
from config.celery import app
from idempotency.services import Receipt, idempotent, key_checked
from outbox.services import publish_on_commit
from tenants.actors import Actor
from tenants.models import Role

from .models import (
    Candidate,
    IdempotencyRecord,
    Match,
    OutboxEvent,
    Seniority,
    Tan,
    TanStatus,
    TanTransition,
)

EVENT_CONSUME = "hr.tasks.tan_event_consume"
APPROVER_ROLES = frozenset({Role.APPROVER, Role.ADMIN})
T = TanStatus
TAN_TRANSITIONS = {(T.DRAFT, T.APPROVED), (T.APPROVED, T.CLOSED), (T.DRAFT, T.CLOSED)}


def match_approval_threshold() -> int:
    """Persisting more matches than this at once asks an approver first."""
    return int(os.environ.get("KEEL_MATCH_APPROVAL_THRESHOLD", "3"))


def _idempotent(*, tenant_id: int, operation: str, key: str, request: dict[str, Any],
                work: Callable[[], tuple[int, dict[str, Any]]]) -> Receipt:
    """The generic protocol over this app's table, in one transaction: a concurrent
    duplicate waits on the record's unique index and replays; a crashed attempt leaves
    nothing, so the skill retried whole writes it again."""
    return idempotent(IdempotencyRecord, tenant_id=tenant_id, operation=operation, key=key_checked(key),
                      request=request, work=lambda record: work(), in_one_transaction=True)


def _tan_for(actor: Actor, tan_id: Any, *, lock: bool = False) -> Tan:
    try:
        number = strict_int(tan_id)
    except ValueError:
        number = 0
    rows = Tan.objects.select_for_update() if lock else Tan.objects
    tan = rows.filter(tenant_id=actor.tenant_id, id=number).first()
    if tan is None:
        raise NotFound(_("No such TAN."), code="tan_not_found")
    return tan


def _tan_transition(tan: Tan, to: str, *, actor: Actor, **fields: Any) -> None:
    """The TAN's one status writer: allowed edge, compare-and-set, transition row."""
    assert transaction.get_connection().in_atomic_block
    if (tan.status, to) not in TAN_TRANSITIONS:
        words = {"status": tan.get_status_display().lower(), "to": str(T(to).label).lower()}
        if tan.approved_by_id and tan.status == T.APPROVED:
            message = _("This TAN is %(status)s by %(who)s; it cannot become %(to)s.") % {
                **words, "who": tan.approved_by.username}
        else:
            message = _("This TAN is %(status)s; it cannot become %(to)s.") % words
        raise Conflict(message,
                       code="tan_status",
                       extra={"status": tan.status})
    if not Tan.objects.filter(id=tan.id, status=tan.status).update(status=to, **fields):
        raise Conflict(_("The TAN changed meanwhile; reload it."), code="tan_changed")
    TanTransition.objects.create(tan=tan, from_status=tan.status, to_status=to, actor_id=actor.user_id)
    tan.status = to
    for name, value in fields.items():
        setattr(tan, name, value)


def _skills_checked(skills: Any) -> list[str]:
    if isinstance(skills, str):
        skills = [s for s in skills.replace("，", ",").split(",")]
    if not isinstance(skills, list) or not all(isinstance(s, str) for s in skills):
        raise DomainError(_("Skills must be a list of words."), code="invalid_skills")
    given = [s.strip() for s in skills if s.strip()]
    # The limit is on what was given: lower-casing may lengthen a word ("İ" becomes two characters).
    cleaned = sorted({s.lower() for s in given})
    if not cleaned or len(cleaned) > 20 or any(len(s) > 40 for s in given):
        raise DomainError(_("Give 1 to 20 skills of at most 40 characters each."), code="invalid_skills")
    return cleaned


@transaction.atomic
def tan_create(*, actor: Actor, title: str, location: str, skills: Any, seniority: int = Seniority.MID,
               max_matches: int = 5, title_zh: str = "") -> Tan:
    """A draft TAN. Anyone in the tenant may draft one."""
    title, location = (title or "").strip(), (location or "").strip()
    if not title or len(title) > 200:
        raise DomainError(_("Give the TAN a title (at most 200 characters)."), code="invalid_title")
    if not location or len(location) > 80:
        raise DomainError(_("Give the location (at most 80 characters)."), code="invalid_location")
    if seniority not in Seniority.values:
        raise DomainError(_("Seniority must be one of %(values)s.") % {"values": Seniority.values},
                          code="invalid_seniority")
    try:
        max_matches = strict_int(max_matches)  # ASCII digits only: int() reads "١٢" as 12
    except ValueError:
        max_matches = 0
    if not 1 <= max_matches <= 20:
        raise DomainError(_("max_matches must be 1 to 20."), code="invalid_max_matches")
    return Tan.objects.create(tenant_id=actor.tenant_id, title=title, title_zh=(title_zh or "").strip()[:200],
                              location=location, skills=_skills_checked(skills), seniority=seniority,
                              max_matches=int(max_matches), created_by_id=actor.user_id)


def tan_event_publish(*, tan: Tan, actor: Actor) -> OutboxEvent:
    """Write the TAN-approved event in the caller's transaction and hand it to the
    supervisor once that commits (never from inside a transaction that may roll back)."""
    event = OutboxEvent.objects.create(tenant_id=tan.tenant_id, type=OutboxEvent.Type.TAN_APPROVED, tan=tan,
                                       actor_id=actor.user_id, payload={"tan": str(tan.id), "title": tan.title})
    event_id = event.id
    publish_on_commit(lambda: app.send_task(EVENT_CONSUME, args=[event_id]), f"HR outbox event {event_id}",
                      recovered_by="the HR outbox sweep hands it over")
    return event


@transaction.atomic
def tan_approve(*, actor: Actor, tan_id: Any) -> Tan:
    """draft → approved by an approver or admin; announces it with an outbox event. A
    second approval is refused (409) and publishes nothing."""
    if actor.role not in APPROVER_ROLES:
        raise Forbidden(_("Only an approver or a tenant admin may approve a TAN."), code="role_required")
    tan = _tan_for(actor, tan_id, lock=True)
    _tan_transition(tan, T.APPROVED, actor=actor, approved_by_id=actor.user_id, approved_at=timezone.now())
    tan_event_publish(tan=tan, actor=actor)
    return tan


@transaction.atomic
def tan_copy(*, tan_id: int, from_tenant_id: int, to_tenant_id: int, created_by_id: int) -> Tan:
    """For a replay's sandbox (an empty tenant): the TAN as its matching run found it (approved)
    and the tenant's CV bank, copied into `to_tenant`."""
    tan = Tan.objects.get(id=tan_id, tenant_id=from_tenant_id)
    Candidate.objects.bulk_create([
        Candidate(tenant_id=to_tenant_id, name=c.name, name_zh=c.name_zh, headline=c.headline,
                  headline_zh=c.headline_zh, location=c.location, skills=c.skills, seniority=c.seniority)
        for c in Candidate.objects.filter(tenant_id=from_tenant_id)])
    return Tan.objects.create(tenant_id=to_tenant_id, title=tan.title, title_zh=tan.title_zh, location=tan.location,
                              skills=tan.skills, seniority=tan.seniority, max_matches=tan.max_matches,
                              status=T.APPROVED, created_by_id=created_by_id, approved_at=tan.approved_at)


@transaction.atomic
def tan_close(*, actor: Actor, tan_id: Any) -> Tan:
    if actor.role not in APPROVER_ROLES:
        raise Forbidden(_("Only an approver or a tenant admin may close a TAN."), code="role_required")
    tan = _tan_for(actor, tan_id, lock=True)
    _tan_transition(tan, T.CLOSED, actor=actor)
    return tan


def match_key(tan_id: Any, candidate_id: Any) -> str:
    """The idempotency key of a match: one per TAN and candidate, whatever run writes it."""
    return f"match:tan{tan_id}:candidate{candidate_id}"


def matches_record(*, actor: Actor, tan_id: Any, matches: list[dict[str, Any]], run_id: int | None = None,
                   after_each: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    """Persist the ranked matches of an approved TAN, each in its own transaction under its
    own key. The agent persisting more than the threshold needs a decided approval for this
    TAN; a person needs the approver role."""
    tan = _tan_for(actor, tan_id)
    if tan.status != T.APPROVED:
        raise Conflict(_("Matches are recorded only for an approved TAN; this one is %(status)s.")
                       % {"status": tan.status},
                       code="tan_status")
    if actor.role is None:
        if len(matches) > match_approval_threshold():
            approval_covers(tenant_id=actor.tenant_id, approval_id=actor.approval_id, tool="persist_matches",
                            arguments={"tan_id": tan.id})
    elif actor.role not in APPROVER_ROLES:
        raise Forbidden(_("Only an approver or a tenant admin may record matches."), code="role_required")
    known = set(Candidate.objects.filter(tenant_id=actor.tenant_id,
                                         id__in=[int(m["candidate_id"]) for m in matches]).values_list("id", flat=True))
    receipts = []
    for index, match in enumerate(matches):
        candidate_id = int(match["candidate_id"])
        if candidate_id not in known:
            raise NotFound(_("No such candidate: %(candidate_id)s.") % {"candidate_id": candidate_id},
                           code="candidate_not_found")
        request = {"tan": tan.id, "candidate": candidate_id, "score": str(match["score"]),
                   "features": match["features"], "explanation": match["explanation"]}

        def work(match=match, candidate_id=candidate_id, rank=index + 1) -> tuple[int, dict[str, Any]]:
            row = Match.objects.create(tenant_id=actor.tenant_id, tan=tan, candidate_id=candidate_id, rank=rank,
                                       score=Decimal(str(match["score"])), features=match["features"],
                                       explanation=match["explanation"],
                                       explanation_zh=match.get("explanation_zh", ""), run_id=run_id)
            return 201, {"match_id": str(row.id), "candidate_id": str(candidate_id), "rank": rank}

        receipts.append(_idempotent(tenant_id=actor.tenant_id, operation="match_record",
                                    key=match_key(tan.id, candidate_id), request=request, work=work).body)
        if after_each:
            after_each(index)
    return receipts


@transaction.atomic
def matches_withdraw(*, actor: Actor, tan_id: Any, run_id: int) -> int:
    """The persist step's compensation: remove the matches this run wrote (and their keys,
    so a later run may write them again); matches other runs wrote stay."""
    tan = _tan_for(actor, tan_id)
    rows = Match.objects.filter(tenant_id=actor.tenant_id, tan=tan, run_id=run_id)
    keys = [match_key(tan.id, c) for c in rows.values_list("candidate_id", flat=True)]
    IdempotencyRecord.objects.filter(tenant_id=actor.tenant_id, operation="match_record", key__in=keys).delete()
    return rows.delete()[0]
