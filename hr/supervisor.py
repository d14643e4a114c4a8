"""The supervisor of HR Core: triggered by a business event (a TAN approved), never by a
chat message, it starts the candidate-matching run for that TAN — once. A redelivered
event, a second event for the same TAN, or an event for a TAN no longer approved starts
nothing and is recorded as consumed with the reason."""
from __future__ import annotations

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from config.words import localised, words
from tenants.models import Membership
from timeline.services import conversation_create, event_append, frame_record
from workflows.blueprints import Door
from workflows.models import Run
from workflows.services import run_start

from .models import OutboxEvent, Tan, TanStatus

BLUEPRINT = "candidate_matching"


def tan_event_consume(event_id: int) -> int | None:
    """Consume one outbox event; returns the run it started, or None."""
    with transaction.atomic():
        event = OutboxEvent.objects.select_for_update().filter(id=event_id).first()
        if event is None or event.consumed_at is not None:
            return None  # gone, or another delivery got here first
        # The TAN's row lock orders two different events for the same TAN.
        tan = Tan.objects.select_for_update().get(id=event.tan_id)
        existing = (Run.objects.filter(tenant_id=event.tenant_id, blueprint=BLUEPRINT, params__tan_id=str(tan.id))
                    .values_list("id", flat=True).first())
        if existing is not None or tan.status != TanStatus.APPROVED:
            outcome = (f"duplicate: run {existing} already matches this TAN" if existing is not None
                       else f"ignored: the TAN is {tan.status}")
            OutboxEvent.objects.filter(id=event.id).update(consumed_at=timezone.now(), outcome=outcome,
                                                           run_id=existing)
            return None
        membership = Membership.objects.select_related("user").get(user_id=event.actor_id, tenant_id=event.tenant_id)
        # No title: a conversation's title is one string, shown as stored to every reader, and
        # the TAN's title differs by language ("Data Analyst" / "数据分析师"). Untitled, it reads
        # "Conversation <id>" in the reader's language; its run reads "Candidate matching" in
        # theirs, and the route frame names the TAN in theirs.
        conversation = conversation_create(tenant_id=event.tenant_id, user_id=event.actor_id)
        run = run_start(membership=membership, blueprint=BLUEPRINT, conversation_id=conversation.id, door=Door.EVENT,
                        params={"tan_id": str(tan.id), "event_id": str(event.id)})
        frame_record(activity_id=run.activity_id, kind="route", name=f"trigger: {event.type}",
                     summary=words(gettext_noop("Started by the event “%(event)s” for “%(tan)s” (approved by "
                                                "%(who)s), not by a chat message."),
                                   event=words(gettext_noop("TAN approved")),
                                   tan=localised(tan.title, tan.title_zh or None), who=membership.user.username),
                     payload={"event_id": str(event.id), "event_type": event.type, "tan_id": str(tan.id),
                              "approved_by": membership.user.username, "event_created_at": event.created_at.isoformat()})
        event_append(conversation_id=conversation.id, run_id=run.id, type="run.trigger",
                     data={"event": str(event.id), "type": event.type, "tan": str(tan.id)})
        OutboxEvent.objects.filter(id=event.id).update(consumed_at=timezone.now(), run_id=run.id,
                                                       outcome=f"started run {run.id}")
        return run.id
