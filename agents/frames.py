"""Model calls as timeline frames: the business summary says what was asked
for; the prompt and output are payload, for developers only."""
from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from timeline.services import frame_record


def model_frame_record(ctx, purpose: str, messages: list[dict[str, Any]], result) -> None:
    from workflows.models import Node

    activity_id = Node.objects.values_list("activity_id", flat=True).get(id=ctx.node_id)
    if not activity_id:
        return
    ended = timezone.now()
    started = ended - timedelta(milliseconds=result.latency_ms or 0)
    first = started + timedelta(milliseconds=result.first_token_ms) if result.first_token_ms else None
    with transaction.atomic():
        frame_record(activity_id=activity_id, kind="model_call", name=f"model: {purpose}", started_at=started,
                     ended_at=ended, first_token_at=first, status="error" if result.error else "ok",
                     summary=f"Asked the model to {purpose.replace('_', ' ')}.", operation="chat",
                     provider=result.provider, model=result.model, input_tokens=result.input_tokens,
                     output_tokens=result.output_tokens, cost=result.cost, payload=result.as_frame())
