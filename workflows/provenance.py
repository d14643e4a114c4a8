"""Provenance from the first message: where a run's values came from, back to
the words the user typed (or the event that started the run).

`run_origin` finds the run's root: the user's message that started it (the conversation's
last "message.received" event before the run started), else the start itself (an API call,
a scheduled trigger). `coordinate_chain` follows a coordinate upstream, through the call
that produced it and every coordinate that call consumed, for any number of hops, to that
root."""
from __future__ import annotations

from typing import Any

from timeline.models import Event

from .models import CoordinateConsumption, Run, StateCoordinate

MESSAGE_EVENT = "message.received"


def run_origin(run: Run | int) -> dict[str, Any]:
    """{kind: message|event, seq, at, text, user, attachment} of what started the run."""
    if not isinstance(run, Run):
        run = Run.objects.select_related("created_by").get(id=run)
    started = (Event.objects.filter(run_id=run.id, type="run.started").order_by("seq")
               .values_list("seq", "created_at").first())
    messages = Event.objects.filter(conversation_id=run.conversation_id, type=MESSAGE_EVENT)
    if started:
        messages = messages.filter(seq__lt=started[0])
    else:
        messages = messages.filter(created_at__lte=run.created_at)
    message = messages.order_by("-seq").first()
    if message is not None:
        return {"kind": "message", "seq": message.seq, "at": message.created_at.isoformat(),
                "text": message.data.get("text", ""), "user": message.data.get("user", ""),
                "attachment": message.data.get("attachment")}
    return {"kind": "event", "seq": started[0] if started else None,
            "at": (started[1] if started else run.created_at).isoformat(),
            "text": "", "user": run.created_by.username, "attachment": None,
            "type": "run.started", "blueprint": run.blueprint}


def coordinate_chain(coordinate: StateCoordinate, *, _seen: set[int] | None = None,
                     _origin: dict | None = None) -> dict[str, Any]:
    """{key, value, producer, node, call_id, receipt_ref, inputs: [chains], origin}: the
    coordinate, the call that produced it and, recursively, what that call consumed. A call
    that consumed nothing read the run's own inputs: its chain ends at the run's origin."""
    seen = (_seen or set()) | {coordinate.id}  # the path walked so far: a guard against a cycle
    call = coordinate.call
    consumed = (CoordinateConsumption.objects.filter(call_id=call.id).select_related("coordinate__call__node")
                .order_by("coordinate__key"))
    if _origin is None:
        _origin = run_origin(coordinate.run_id)
    inputs = [coordinate_chain(link.coordinate, _seen=seen, _origin=_origin)
              for link in consumed if link.coordinate_id not in seen]
    node = call.node
    chain = {"key": coordinate.key, "value": coordinate.value, "producer": coordinate.producer, "node": node.key,
             "call_id": str(call.id), "receipt_ref": coordinate.receipt_ref, "arguments": call.arguments,
             "inputs": inputs, "origin": None}
    if not inputs:
        chain["origin"] = _origin
    return chain


def chain_reaches_origin(chain: dict[str, Any]) -> bool:
    """Does every path upstream end at the run's origin?"""
    if not chain["inputs"]:
        return chain["origin"] is not None
    return all(chain_reaches_origin(c) for c in chain["inputs"])
