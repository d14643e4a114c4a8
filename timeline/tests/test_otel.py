"""OpenTelemetry export: a loopback OTLP/HTTP receiver gets a run as one trace, decoded
with opentelemetry-proto: run → steps → model and tool calls, gen_ai attributes, the tenant and run
ids, payloads masked as on the timeline. Spans arrive as their records end: a finished step's
span is there while the run still waits for its approval; nothing arrives twice."""
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from timeline import otel
from timeline.models import Activity, Frame, FramePayload
from tests.helpers import drive, membership, run_to_approval

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


class Receiver:
    """A loopback OTLP/HTTP collector: keeps every span it is sent."""

    def __init__(self):
        self.requests: list[ExportTraceServiceRequest] = []
        self.paths: list[str] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver.requests.append(request)
                receiver.paths.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.end_headers()
                self.wfile.write(b"")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def spans(self) -> list:
        return [span for r in self.requests for rs in r.resource_spans for ss in rs.scope_spans for span in ss.spans]


def attributes(span) -> dict:
    out = {}
    for kv in span.attributes:
        v = kv.value
        out[kv.key] = v.string_value if v.HasField("string_value") else v.int_value
    return out


@pytest.fixture
def receiver(monkeypatch):
    r = Receiver()
    r.thread.start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", r.url)
    otel.provider_reset()
    yield r
    otel.provider_reset()
    r.server.shutdown()


def test_a_run_is_exported_as_one_trace_with_gen_ai_spans_as_it_goes(receiver, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = run_to_approval()
    # The run waits for its approval: the steps that ended are exported already, under the
    # run's trace and the root span that will come when the run ends.
    assert otel.flush()
    early = receiver.spans()
    early_steps = {attributes(s)["keel.step.key"]: s for s in early if attributes(s).get("keel.activity.id")}
    assert {"interpret", "match"} <= set(early_steps) and "import" not in early_steps
    run_activity = Activity.objects.get(run=run, kind="run")
    assert {s.trace_id for s in early} == {otel.trace_id_of(run.id).to_bytes(16, "big")}
    assert all(s.parent_span_id == otel.span_id_of(run_activity.id).to_bytes(8, "big")
               for s in early_steps.values())
    assert not [s for s in early if not s.parent_span_id]  # the run itself has not ended
    match_calls = [s for s in early if s.parent_span_id == early_steps["match"].span_id]
    assert match_calls and all(attributes(s)["keel.step.key"] == "match" for s in match_calls)
    with django_capture_on_commit_callbacks(execute=True):
        approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                        verdict="approved")
        drive(run)
    run.refresh_from_db()
    assert run.status == "completed"
    assert otel.flush()
    spans = receiver.spans()
    assert len({s.span_id for s in spans}) == len(spans)  # each record once
    assert len(receiver.requests) > 1  # in several exports, not one at the end
    assert receiver.paths and all(p == "/v1/traces" for p in receiver.paths)
    assert {s.trace_id for s in spans} and len({s.trace_id for s in spans}) == 1  # a run is a trace
    by_id = {s.span_id: s for s in spans}
    roots = [s for s in spans if not s.parent_span_id]
    assert len(roots) == 1 and roots[0].name.startswith("run ")
    root = roots[0]
    assert attributes(root)["keel.run.id"] == str(run.id)
    assert attributes(root)["keel.tenant.id"] == str(run.tenant_id)
    assert attributes(root)["keel.run.status"] == "completed"
    steps = [s for s in spans if s.parent_span_id == root.span_id]
    assert {attributes(s)["keel.step.key"] for s in steps} >= {"interpret", "match", "snapshot", "import", "verify"}
    model_calls = [s for s in spans if attributes(s).get("gen_ai.operation.name") not in (None, "execute_tool")]
    tool_calls = [s for s in spans if attributes(s).get("gen_ai.operation.name") == "execute_tool"]
    assert model_calls and tool_calls
    recorded_models = Frame.objects.filter(activity__run=run, activity__kind="node", kind="model_call").count()
    recorded_tools = Frame.objects.filter(activity__run=run, activity__kind="node", kind="tool_call").count()
    assert (len(model_calls), len(tool_calls)) == (recorded_models, recorded_tools)
    for span in model_calls + tool_calls:
        parent = by_id[span.parent_span_id]
        assert parent.parent_span_id == root.span_id and attributes(parent)["keel.step.key"]
        assert attributes(span)["keel.run.id"] == str(run.id) and attributes(span)["keel.tenant.id"]
        assert parent.start_time_unix_nano <= span.start_time_unix_nano <= span.end_time_unix_nano
    model = attributes(model_calls[0])
    assert model["gen_ai.provider.name"] and model["gen_ai.request.model"]
    assert "gen_ai.usage.input_tokens" in model or "gen_ai.usage.output_tokens" in model
    assert model_calls[0].kind == model_calls[0].SPAN_KIND_CLIENT
    assert model_calls[0].name == f"{model['gen_ai.operation.name']} {model['gen_ai.request.model']}"
    tool_names = {attributes(s)["gen_ai.tool.name"] for s in tool_calls}
    assert "import_template" in tool_names
    assert all(attributes(s)["gen_ai.tool.call.id"] for s in tool_calls)
    assert root.start_time_unix_nano <= min(s.start_time_unix_nano for s in spans)
    assert root.end_time_unix_nano >= max(s.end_time_unix_nano for s in spans)


def test_payloads_go_out_masked_as_on_the_timeline(receiver, django_capture_on_commit_callbacks):
    run = run_to_approval()
    step = Activity.objects.get(run=run, node_key="match")
    frame = Frame.objects.filter(activity=step, kind="tool_call").first()
    # A payload that slipped past the write-time mask (an old row): the exporter masks it again.
    FramePayload.objects.update_or_create(frame=frame, defaults={"data": {"api_key": "sk-live-123",
                                                                          "note": "ok"}})
    with django_capture_on_commit_callbacks(execute=True):
        approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                        verdict="approved")
        drive(run)
    assert otel.flush()
    span = next(s for s in receiver.spans() if attributes(s).get("keel.frame.id") == str(frame.id))
    payload = attributes(span)["keel.payload"]
    assert "sk-live-123" not in payload and "•••" in payload and '"note": "ok"' in payload


def test_nothing_is_exported_without_an_endpoint(monkeypatch, django_capture_on_commit_callbacks):
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    otel.provider_reset()
    run = run_to_approval()
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                        verdict="approved")
        drive(run)
    assert otel._provider is None
    assert otel.spans_export(run.id) == 0
    assert callbacks is not None
