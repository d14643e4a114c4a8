"""RunPipeline (DESIGN.md §5): before a call, resolve every
consumed key from its coordinate, check provenance, inject the exact value and
record the consumption link; after a successful call, write the produced
coordinates. The model never retypes an id."""
from __future__ import annotations

import time
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from llm import ModelError, ModelResult, messages_tokens_estimate, model_call
from config import sql
from config.words import words
from timeline.model_frames import model_frame_record
from timeline.services import frame_record

from .faults import fault_point
from .models import (
    CoordinateConsumption,
    Node,
    ProvenanceBlock,
    Run,
    StateCoordinate,
    ToolCall,
)
from .tools import ToolBusy, ToolContext, ToolError, producers_of, tool_get


class ProvenanceBlocked(ToolError):
    def __init__(self, key: str, supplied: Any, expected: Any, reason: str):
        super().__init__(f"provenance block on {key}: {reason}")
        self.key, self.supplied, self.expected, self.reason = key, supplied, expected, reason


def coordinate_resolve(*, run_id: int, tenant_id: int, key: str) -> StateCoordinate | None:
    """The value of `key` in scope tenant + run, from a node of the current plan."""
    return (StateCoordinate.objects.select_related("call")  # its status and run: what provenance checks
            .filter(run_id=run_id, tenant_id=tenant_id, key=key, call__node__retired_in__isnull=True)
            .order_by("-plan_version", "-created_at").first())


def arguments_resolve(node, run) -> tuple[dict[str, Any], list[StateCoordinate]]:
    """Proposed arguments + every consumed key injected from its coordinate.

    Raises ProvenanceBlocked when a proposal supplies a consumed key with another
    value, or when a coordinate's producer or call does not check out."""
    tool = tool_get(node.tool)
    arguments = dict(node.arguments)
    used = []
    optional = set(tool.consumes_optional)
    for key in [*tool.consumes, *tool.consumes_optional]:
        coordinate = coordinate_resolve(run_id=run.id, tenant_id=run.tenant_id, key=key)
        if coordinate is None and key in optional:
            continue
        if coordinate is None:
            raise ToolError(_("%(name)s needs %(key)s, which no completed step has produced")
                            % {"name": tool.name, "key": key})
        if coordinate.producer not in producers_of(key):
            raise ProvenanceBlocked(key, coordinate.value, None, f"{coordinate.producer} may not produce {key}")
        if coordinate.call.status != ToolCall.Status.SUCCEEDED or coordinate.call.run_id != run.id:
            raise ProvenanceBlocked(key, coordinate.value, None, "its producing call did not succeed in this run")
        if key in arguments and str(arguments[key]) != str(coordinate.value):
            raise ProvenanceBlocked(key, arguments[key], coordinate.value,
                                    f"the supplied value differs from the one {coordinate.producer} produced")
        arguments[key] = coordinate.value
        used.append(coordinate)
    return arguments, used


def provenance_block_record(*, node, run, block: ProvenanceBlocked) -> None:
    with transaction.atomic():
        ProvenanceBlock.objects.create(tenant_id=run.tenant_id, run_id=run.id, node_id=node.id, key=block.key,
                                       supplied=str(block.supplied), expected=str(block.expected),
                                       reason=block.reason)
        if node.activity_id:
            frame_record(activity_id=node.activity_id, kind="provenance", name=f"provenance block: {block.key}",
                         status="error", level="error",
                         summary=words(gettext_noop("A supplied %(key)s did not match the recorded one; "
                                                    "the step was refused."), key=block.key.replace("_", " ")),
                         payload={"key": block.key, "supplied": str(block.supplied),
                                  "expected": str(block.expected), "reason": block.reason})


def idempotency_key_for(node) -> str:
    # (run, node, plan version, logical attempt): a redelivery reuses it; a replan or a
    # retry by a person does not (the system of record must not replay a failed receipt).
    return f"run{node.run_id}:{node.key}:v{node.plan_version}:a{node.attempt}"


# ToolCall's own small state machine. Every write names the status it expects: after a
# lease takeover a slow original worker and its successor may both finish the same call,
# and the first to write decides; the other's write changes nothing.
TOOL_CALL_TRANSITIONS = {
    ToolCall.Status.STARTED: {ToolCall.Status.SUCCEEDED, ToolCall.Status.FAILED},
    ToolCall.Status.FAILED: {ToolCall.Status.STARTED},  # taken up again under the same key
    ToolCall.Status.SUCCEEDED: set(),
}


def tool_call_transition(call_id: int, *, expected: str, to: str, **fields: Any) -> bool:
    """Compare-and-set the call's status; False when someone else changed it first."""
    if to not in TOOL_CALL_TRANSITIONS[expected]:
        raise ValueError(f"tool call: {expected} → {to} is not an allowed transition")
    return bool(ToolCall.objects.filter(id=call_id, status=expected).update(status=to, **fields))


def tool_call_execute(*, node, run, arguments: dict[str, Any], consumed: list[StateCoordinate],
                      approval_id: int | None) -> tuple[ToolCall, dict[str, Any]]:
    """Run the node's tool once. A redelivered node finds its succeeded call and
    gets the stored result back; the business system's idempotency key absorbs
    a second attempt at a call that died half-way."""
    tool = tool_get(node.tool)
    key = idempotency_key_for(node)
    call = ToolCall(node_id=node.id, idempotency_key=key, tenant_id=run.tenant_id, run_id=run.id, tool=tool.name,
                    arguments=arguments, approval_id=approval_id)
    created = bool(sql.rows_insert([call], unique=["node", "idempotency_key"]))
    if not created:  # there already: a redelivery, a takeover, a retry after a failure
        call = ToolCall.objects.get(node_id=node.id, idempotency_key=key)
    if call.status == ToolCall.Status.SUCCEEDED:
        return call, call.result
    if not created and call.status == ToolCall.Status.FAILED:
        # Taken up again after a failure under the same key (a redelivered node).
        tool_call_transition(call.id, expected=ToolCall.Status.FAILED, to=ToolCall.Status.STARTED,
                             arguments=arguments, approval_id=approval_id, error="")
    elif not created:  # STARTED: a takeover of a call whose worker died; it keeps its row
        ToolCall.objects.filter(id=call.id, status=ToolCall.Status.STARTED).update(
            arguments=arguments, approval_id=approval_id)
    # What the call consumed, in one INSERT (a redelivered call's are there already).
    sql.rows_insert([CoordinateConsumption(coordinate=coordinate, call=call) for coordinate in consumed],
                    unique=["coordinate", "call"])
    ctx = ToolContext(tenant_id=run.tenant_id, run_id=run.id, node_id=node.id, node_key=node.key,
                      user_id=run.created_by_id, call_id=call.id, idempotency_key=key, approval_id=approval_id,
                      params=run.params)
    started = timezone.now()
    t0 = time.perf_counter()
    try:
        tool.input_validate(arguments)
        tags = tuple(v for v in run.params.values() if isinstance(v, str))
        fault_point(f"{tool.name}.before", tags)
        output = tool.fn(ctx, arguments)
        tool.output_validate(output)
        fault_point(f"{tool.name}.after", tags)
    except Exception as err:
        latency = (time.perf_counter() - t0) * 1000
        tool_call_transition(call.id, expected=ToolCall.Status.STARTED, to=ToolCall.Status.FAILED, error=str(err),
                             ended_at=timezone.now(), latency_ms=latency)
        _tool_frame(node, call, tool, arguments, None, str(err), started, consumed)
        raise
    latency = (time.perf_counter() - t0) * 1000
    try:
        with transaction.atomic():
            _call_succeed(node, run, call, tool, output, latency)
            _tool_frame(node, call, tool, arguments, output, "", started, consumed)
    except _CallTakenOver:
        # Another worker finished this call first (a lease takeover): its receipt stands,
        # and our coordinates and frame were rolled back with the lost write.
        call.refresh_from_db()
        if call.status == ToolCall.Status.SUCCEEDED:
            return call, call.result
        # A slower attempt (one the database dropped mid-call, say) wrote its failure while
        # ours did the work: that failure is stale, and the effect is done under this key.
        # Not a failure of the step: it runs again shortly and the system of record's
        # idempotency replays the receipt.
        raise ToolBusy(_("an earlier attempt at this call recorded a failure while this one succeeded; "
                         "the step runs again to read the receipt")) from None
    except ToolError as err:
        # What it produced conflicts with what another step wrote: nothing of it was kept,
        # and the call says so (failed, with the reason; its frame shows it).
        tool_call_transition(call.id, expected=ToolCall.Status.STARTED, to=ToolCall.Status.FAILED, error=str(err),
                             ended_at=timezone.now(), latency_ms=latency)
        _tool_frame(node, call, tool, arguments, None, str(err), started, consumed)
        raise
    call.status, call.result = ToolCall.Status.SUCCEEDED, output
    return call, output


class _CallTakenOver(Exception):
    pass


def _call_succeed(node, run, call, tool, output, latency) -> None:
    """Write the produced coordinates and the call's success, or nothing (_CallTakenOver).

    Inside the caller's transaction: the coordinates in one INSERT that skips a key already
    written in this scope, then one read of them: a key that is not this call's was there
    before it (another step's: a conflict; this step's earlier attempt: replaced)."""
    receipt_ref = output.get("receipt_ref", f"call/{call.id}")
    StateCoordinate.objects.bulk_create([
        StateCoordinate(tenant_id=run.tenant_id, run_id=run.id, key=produced, value=output[produced],
                        producer=tool.name, call=call, receipt_ref=receipt_ref, plan_version=node.plan_version)
        for produced in tool.produces], ignore_conflicts=True)
    earlier = (StateCoordinate.objects.select_related("call").exclude(call_id=call.id)
               .filter(run_id=run.id, key__in=tool.produces, plan_version=node.plan_version).order_by("key")
               if tool.produces else [])
    for existing in earlier:
        if existing.call.node_id != node.id:
            raise ToolError(_("conflict: %(produced)s was already written in this scope by %(producer)s (call %(call_id)s)")
                            % {"produced": existing.key, "producer": existing.producer, "call_id": existing.call_id})
        # The same step, retried by a person (a new logical attempt): its new
        # receipt is now the value's provenance.
        StateCoordinate.objects.filter(id=existing.id, call_id=existing.call_id).update(
            value=output[existing.key], call=call, receipt_ref=receipt_ref)
    if not tool_call_transition(call.id, expected=ToolCall.Status.STARTED, to=ToolCall.Status.SUCCEEDED,
                                result=output, ended_at=timezone.now(), latency_ms=latency):
        raise _CallTakenOver()


def _tool_frame(node, call, tool, arguments, output, error, started, consumed) -> None:
    if not node.activity_id:
        return
    summary = (tool.summary(output) if (tool.summary and output is not None)
               else words(gettext_noop("%(goal)s: done.") if output is not None else gettext_noop("%(goal)s: failed."),
                          goal=node.goal_meaning))
    frame_record(activity_id=node.activity_id, kind="tool_call", name=tool.name, started_at=started,
                 status="ok" if output is not None else "error", level="info" if output is not None else "error",
                 summary=summary, operation="execute_tool", tool_name=tool.name, tool_call_id=str(call.id),
                 payload={"arguments": arguments, "result": output, "error": error,
                          "idempotency_key": call.idempotency_key,
                          "consumed": [{"key": c.key, "call_id": str(c.call_id), "producer": c.producer}
                                       for c in consumed],
                          "produces": tool.produces})


def tool_model_call(ctx: ToolContext, messages: list[dict[str, Any]], *, purpose: str,
                    **options: Any) -> ModelResult:
    """A tool's one way to the model: reserve a call under the run's model-call cap
    (compare-and-set, so concurrent nodes cannot overspend it), call the model, and
    record the call as a frame of the node's activity — a failed call too, before its
    ModelError reaches the tool. `options` (response_format, max_tokens, tools, choices)
    go to llm.model_call as they are."""
    if not Run.objects.filter(id=ctx.run_id, model_calls__lt=F("model_call_cap")).update(
            model_calls=F("model_calls") + 1):
        raise ToolError(_("the run's model-call cap is reached"))
    activity_id = Node.objects.values_list("activity_id", flat=True).get(id=ctx.node_id)
    try:
        result = model_call(messages, purpose=purpose, **options)
    except ModelError as exc:
        if activity_id:
            model_frame_record(activity_id, purpose, ModelResult(
                text="", provider="", model="", purpose=purpose, prompt=messages,
                input_tokens=messages_tokens_estimate(messages), tokens_estimated=True,
                error=f"{type(exc).__name__}: {exc}"))
        raise
    if activity_id:
        model_frame_record(activity_id, purpose, result)
    return result


def node_activity_id(node_id: int) -> int | None:
    """The activity a node's frames go to (None before the node was claimed)."""
    return Node.objects.values_list("activity_id", flat=True).get(id=node_id)
