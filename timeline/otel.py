"""OpenTelemetry export of the timeline: with OTEL_EXPORTER_OTLP_ENDPOINT set, a run is
exported over OTLP/HTTP (the SDK's exporter, batched on its own thread) as one trace, span by span
as its records end — a model or tool call when it is recorded, a step when it ends, the run when
it ends — so a trace viewer shows a long run while it is still going:

    run (root span)            keel.tenant.id, keel.run.id, keel.conversation.id, keel.run.status
    └─ step <key>              one per step Activity, keel.step.key, keel.step.status
       ├─ chat <model>         each model call: gen_ai.* semantic conventions (operation, provider,
       │                       request model, usage tokens), kind CLIENT
       └─ execute_tool <tool>  each tool call: gen_ai.operation.name=execute_tool, gen_ai.tool.*

Spans are made in whichever process commits the record, long after their parent was: their ids
are derived from the records' ids (the trace id from the run's, a span id from its Activity's or
Frame's), so a call exported by one worker names the step span another worker exports later.
Each record goes out once: it is claimed in ExportedSpan first. Steps still open when the run ends
(blocked, waiting) end with it.

Spans carry the records' own times (start and end as the timeline recorded them), so a trace
viewer shows the same waterfall as the console. Payloads go out as the timeline keeps them:
masked at write time (timeline/masking.py) and masked again here, capped in size. Generic:
it reads Activities and Frames only, and names no domain's tool or step.

Unset endpoint: nothing is imported, nothing leaves the process."""
from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from datetime import datetime
from typing import Any

from django.db import connection, transaction

from .masking import payload_mask
from .models import Activity, ExportedSpan, Frame, FramePayload

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
            _provider = TracerProvider(resource=resource, id_generator=_ids)
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


def _derived(kind: bytes, record_id: int, size: int) -> int:
    value = int.from_bytes(hashlib.sha256(b"keel.%s:%d" % (kind, record_id)).digest()[:size], "big")
    return value or 1  # zero is the invalid id


def trace_id_of(run_id: int) -> int:
    return _derived(b"run", run_id, 16)


def span_id_of(record_id: int) -> int:
    return _derived(b"span", record_id, 8)


class _RecordIds:
    """The SDK's IdGenerator, answering the ids of the record being exported (set per span)."""

    def __init__(self):
        self.local = threading.local()

    def is_trace_id_random(self) -> bool:
        return False

    def generate_span_id(self) -> int:
        return self.local.span_id

    def generate_trace_id(self) -> int:
        return self.local.trace_id


_ids = _RecordIds()


def export_on_commit(*, run_id: int | None = None, activity_id: int | None = None) -> None:
    """Once the transaction commits, export what of the run has ended and is not exported yet
    (the run is found from one of its Activities when its id is not at hand)."""
    if not enabled() or (run_id is None and activity_id is None):
        return

    def export() -> None:
        run = run_id if run_id is not None else (
            Activity.objects.filter(id=activity_id).values_list("run_id", flat=True).first())
        if run is not None:
            spans_export(run)

    transaction.on_commit(export, robust=True)


def _claimed(run_id: int, record_ids: list[int]) -> set[int]:
    """Claim records for export: the ids this call inserted into ExportedSpan (others were taken)."""
    if not record_ids:
        return set()
    table = ExportedSpan._meta.db_table
    rows = ", ".join(["(%s, %s)"] * len(record_ids))
    params = [v for record_id in record_ids for v in (record_id, run_id)]
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {table} (id, run_id) VALUES {rows} ON CONFLICT (id) DO NOTHING RETURNING id",
                       params)
        return {row[0] for row in cursor.fetchall()}


def spans_export(run_id: int) -> int:
    """Export the run's records that have ended and were not exported yet; returns how many spans
    were handed to the exporter."""
    if not enabled():
        return 0
    run_activity = (Activity.objects.select_related("conversation")
                    .filter(run_id=run_id, kind=Activity.Kind.RUN).first())
    if run_activity is None:
        return 0
    done = ExportedSpan.objects.filter(run_id=run_id).values("id")
    steps = list(Activity.objects.filter(run_id=run_id, kind=Activity.Kind.NODE).exclude(id__in=done))
    step_ids = list(Activity.objects.filter(run_id=run_id, kind=Activity.Kind.NODE).values_list("id", flat=True))
    frames = list(Frame.objects.filter(activity_id__in=step_ids, kind__in=EXPORTED_KINDS, ended_at__isnull=False)
                  .exclude(id__in=done).order_by("started_at", "id"))
    run_ended = run_activity.ended_at is not None
    ready = [f.id for f in frames] + [s.id for s in steps if s.ended_at or run_ended]
    if run_ended:
        ready.append(run_activity.id)
    claimed = _claimed(run_id, ready)
    if not claimed:
        return 0
    from opentelemetry import trace
    from opentelemetry.context import Context
    from opentelemetry.trace import (
        NonRecordingSpan,
        SpanContext,
        SpanKind,
        Status,
        StatusCode,
        TraceFlags,
    )

    tracer = provider().get_tracer("keel.timeline")
    trace_id = trace_id_of(run_id)
    ids = {"keel.tenant.id": str(run_activity.conversation.tenant_id), "keel.run.id": str(run_id),
           "keel.conversation.id": str(run_activity.conversation_id)}
    step_keys = dict(Activity.objects.filter(id__in={f.activity_id for f in frames}).values_list("id", "node_key"))

    def start(name: str, record_id: int, parent_id: int | None, **kwargs: Any):
        context = (trace.set_span_in_context(NonRecordingSpan(SpanContext(
            trace_id, span_id_of(parent_id), is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED))))
            if parent_id is not None else Context())
        _ids.local.trace_id, _ids.local.span_id = trace_id, span_id_of(record_id)
        return tracer.start_span(name[:120], context=context, **kwargs)

    count = 0
    for f in frames:
        if f.id not in claimed:
            continue
        attributes: dict[str, Any] = {**ids, "keel.frame.id": str(f.id), "keel.step.key": step_keys.get(f.activity_id)}
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
        payload = FramePayload.objects.filter(frame_id=f.id).values_list("data", flat=True).first()
        if payload is not None:
            attributes["keel.payload"] = _payload_text(payload)
        span = start(name, f.id, f.activity_id, kind=kind, start_time=_ns(f.started_at),
                     attributes={k: v for k, v in attributes.items() if v not in ("", None)})
        if f.status == "error" or f.level == "error":
            span.set_status(Status(StatusCode.ERROR, f.summary[:200]))
        span.end(end_time=_ns(f.ended_at))
        count += 1
    for step in steps:
        if step.id not in claimed:
            continue
        span = start(f"step {step.node_key or step.title}", step.id, run_activity.id, start_time=_ns(step.started_at),
                     attributes={**ids, "keel.step.key": step.node_key, "keel.step.status": step.status,
                                 "keel.activity.id": str(step.id)})
        if step.status in ("failed", "blocked"):
            span.set_status(Status(StatusCode.ERROR))
        end = step.ended_at or max(run_activity.ended_at, step.frames_until or step.started_at)
        span.end(end_time=_ns(max(end, step.frames_until or end)))
        count += 1
    if run_activity.id in claimed:
        last = Activity.objects.filter(run_id=run_id).exclude(ended_at=None).order_by("-ended_at").values_list(
            "ended_at", flat=True).first()
        root = start(f"run {run_activity.title}", run_activity.id, None, kind=SpanKind.INTERNAL,
                     start_time=_ns(run_activity.started_at),
                     attributes={**ids, "keel.run.status": run_activity.status})
        if run_activity.status in ("failed", "blocked"):
            root.set_status(Status(StatusCode.ERROR, run_activity.summary[:200]))
        root.end(end_time=_ns(max(run_activity.ended_at, last or run_activity.ended_at)))
        count += 1
    return count
