"""OpenTelemetry export of the timeline (issue 16): with OTEL_EXPORTER_OTLP_ENDPOINT set, a run
that ends is exported as one trace over OTLP/HTTP (the SDK's exporter, batched on its own thread):

    run (root span)            keel.tenant.id, keel.run.id, keel.conversation.id, keel.run.status
    └─ step <key>              one per step Activity, keel.step.key, keel.step.status
       ├─ chat <model>         each model call: gen_ai.* semantic conventions (operation, provider,
       │                       request model, usage tokens), kind CLIENT
       └─ execute_tool <tool>  each tool call: gen_ai.operation.name=execute_tool, gen_ai.tool.*

Spans carry the records' own times (start and end as the timeline recorded them), so a trace
viewer shows the same waterfall as the console. Payloads go out as the timeline keeps them:
masked at write time (timeline/masking.py) and masked again here, capped in size. Generic:
it reads Activities and Frames only, and names no domain's tool or step.

Unset endpoint: nothing is imported, nothing leaves the process."""
from __future__ import annotations

import json
import logging
import os
import threading
from datetime import datetime
from typing import Any

from django.db import transaction

from .masking import payload_mask
from .models import Activity, Frame, FramePayload

log = logging.getLogger(__name__)

PAYLOAD_LIMIT = 4096
EXPORTED_KINDS = (Frame.Kind.MODEL_CALL, Frame.Kind.TOOL_CALL)
_lock = threading.Lock()
_provider: Any = None


def enabled() -> bool:
    return bool(os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or os.environ.get(
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def provider() -> Any:
    """The process's tracer provider, made on first use (after a worker forks, in the child).
    It is Keel's own, not the global one: nothing else in the process starts exporting."""
    global _provider
    with _lock:
        if _provider is None:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
                OTLPSpanExporter,
            )
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor

            resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", "keel")})
            _provider = TracerProvider(resource=resource)
            _provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        return _provider


def provider_reset() -> None:
    """Flush and drop the provider (tests point the endpoint elsewhere between cases)."""
    global _provider
    with _lock:
        if _provider is not None:
            _provider.shutdown()
        _provider = None


def flush(timeout_millis: int = 10000) -> bool:
    return provider().force_flush(timeout_millis) if _provider is not None else True


def _ns(at: datetime | None) -> int | None:
    return int(at.timestamp() * 1_000_000_000) if at else None


def _payload_text(data: Any) -> str:
    text = json.dumps(payload_mask(data), ensure_ascii=False, default=str)
    return text if len(text) <= PAYLOAD_LIMIT else text[:PAYLOAD_LIMIT] + "…"


def run_export_on_commit(activity_id: int) -> None:
    """Export the run whose Activity this is, once the transaction that ended it commits."""
    if not enabled():
        return
    transaction.on_commit(lambda: run_export(activity_id), robust=True)


def run_export(activity_id: int) -> int:
    """Export a run's trace from its records; returns how many spans were handed to the exporter."""
    if not enabled():
        return 0
    run_activity = (Activity.objects.select_related("conversation").filter(id=activity_id, kind=Activity.Kind.RUN)
                    .first())
    if run_activity is None or run_activity.run_id is None:
        return 0
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind, Status, StatusCode

    tracer = provider().get_tracer("keel.timeline")
    ids = {"keel.tenant.id": str(run_activity.conversation.tenant_id), "keel.run.id": str(run_activity.run_id),
           "keel.conversation.id": str(run_activity.conversation_id)}
    steps = list(Activity.objects.filter(run_id=run_activity.run_id, kind=Activity.Kind.NODE)
                 .order_by("started_at", "id"))
    frames = list(Frame.objects.filter(activity__in=steps, kind__in=EXPORTED_KINDS).order_by("started_at", "id"))
    payloads = dict(FramePayload.objects.filter(frame__in=frames).values_list("frame_id", "data"))
    by_step: dict[int, list[Frame]] = {}
    for f in frames:
        by_step.setdefault(f.activity_id, []).append(f)
    end = run_activity.ended_at or max([s.ended_at or s.started_at for s in steps] + [run_activity.started_at])
    count = 0
    root = tracer.start_span(f"run {run_activity.title}"[:120], kind=SpanKind.INTERNAL,
                             start_time=_ns(run_activity.started_at),
                             attributes={**ids, "keel.run.status": run_activity.status})
    if run_activity.status in ("failed", "blocked"):
        root.set_status(Status(StatusCode.ERROR, run_activity.summary[:200]))
    root_context = trace.set_span_in_context(root)
    for step in steps:
        step_span = tracer.start_span(f"step {step.node_key or step.title}"[:120], context=root_context,
                                      start_time=_ns(step.started_at),
                                      attributes={**ids, "keel.step.key": step.node_key,
                                                  "keel.step.status": step.status,
                                                  "keel.activity.id": str(step.id)})
        if step.status in ("failed", "blocked"):
            step_span.set_status(Status(StatusCode.ERROR))
        step_context = trace.set_span_in_context(step_span)
        step_end = step.ended_at or step.frames_until or step.started_at
        for f in by_step.get(step.id, []):
            attributes: dict[str, Any] = {**ids, "keel.frame.id": str(f.id)}
            if f.kind == Frame.Kind.MODEL_CALL:
                operation = f.gen_ai_operation_name or "chat"
                name = f"{operation} {f.gen_ai_request_model}".strip()
                attributes.update({"gen_ai.operation.name": operation,
                                   "gen_ai.provider.name": f.gen_ai_provider_name,
                                   "gen_ai.request.model": f.gen_ai_request_model,
                                   "gen_ai.usage.input_tokens": f.gen_ai_usage_input_tokens,
                                   "gen_ai.usage.output_tokens": f.gen_ai_usage_output_tokens})
                kind = SpanKind.CLIENT
            else:
                name = f"execute_tool {f.gen_ai_tool_name or f.name}"
                attributes.update({"gen_ai.operation.name": "execute_tool",
                                   "gen_ai.tool.name": f.gen_ai_tool_name or f.name,
                                   "gen_ai.tool.call.id": f.gen_ai_tool_call_id})
                kind = SpanKind.INTERNAL
            if f.id in payloads:
                attributes["keel.payload"] = _payload_text(payloads[f.id])
            span = tracer.start_span(name[:120], context=step_context, kind=kind, start_time=_ns(f.started_at),
                                     attributes={k: v for k, v in attributes.items() if v not in ("", None)})
            if f.status == "error" or f.level == "error":
                span.set_status(Status(StatusCode.ERROR, f.summary[:200]))
            span.end(end_time=_ns(f.ended_at or f.started_at))
            count += 1
            step_end = max(step_end, f.ended_at or f.started_at)
        step_span.end(end_time=_ns(step_end))
        count += 1
        end = max(end, step_end)
    root.end(end_time=_ns(end))
    return count + 1
