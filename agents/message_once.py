"""A user's chat message posted once per Idempotency-Key, from the API and the chat's
upload door alike: a browser that retries a send after a lost answer (a broker or
database outage, a dropped connection) gets the first answer, and no second turn or run."""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from idempotency.services import Receipt, idempotent_if_keyed
from tenants.models import Membership
from timeline.models import Conversation

from .orchestrator import message_post


def message_post_once(*, membership: Membership, conversation: Conversation, text: str | None,
                      attachment: tuple[str, bytes] | None, key: str | None,
                      answer: Callable[[dict[str, Any]], dict[str, Any]]) -> Receipt:
    """orchestrator.message_post, once per key; `answer` turns its result into the 201 body."""
    request = {"conversation": conversation.id, "by": membership.user_id, "text": text,
               "attachment": [attachment[0], hashlib.sha256(attachment[1]).hexdigest()] if attachment else None}

    def post() -> tuple[int, dict[str, Any]]:
        result = message_post(membership=membership, conversation_id=conversation.id, conversation=conversation,
                              text=text, attachment=attachment)
        return 201, answer(result)

    return idempotent_if_keyed(tenant_id=membership.tenant_id, operation="message_post", key=key,
                               request=request, work=post)
