from django.urls import path
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import StrictCharField
from config.forms import query_flag
from tenants.selectors import membership_for_user

from .models import FramePayload
from .selectors import (
    MAX_SEQ,
    FrameFilters,
    activity_get_for,
    conversation_get_for,
    event_project,
    events_after,
    frame_payload_get_for,
    frames_page,
    wiring_check_get,
)
from .services import conversation_create, event_json, wiring_check_start


class WiringCheckOutputSerializer(serializers.Serializer):
    id = StrictCharField()
    created_at = serializers.DateTimeField()
    completed_at = serializers.DateTimeField(allow_null=True)
    worker = StrictCharField()


class WiringCheckCreateApi(APIView):
    @extend_schema(request=None, responses={201: WiringCheckOutputSerializer})
    def post(self, request: Request) -> Response:
        check = wiring_check_start(membership=membership_for_user(request.user))
        return Response(WiringCheckOutputSerializer(check).data, status=201)


class WiringCheckDetailApi(APIView):
    @extend_schema(responses=WiringCheckOutputSerializer)
    def get(self, request: Request, check_id: int) -> Response:
        check = wiring_check_get(membership_for_user(request.user), check_id)
        return Response(WiringCheckOutputSerializer(check).data)


class ConversationCreateApi(APIView):
    class InputSerializer(serializers.Serializer):
        title = StrictCharField(required=False, allow_blank=True, max_length=200, default="")

    @extend_schema(request=InputSerializer, responses={201: dict})
    def post(self, request: Request) -> Response:
        membership = membership_for_user(request.user)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        conversation = conversation_create(tenant_id=membership.tenant_id, user_id=membership.user_id,
                                           title=data.validated_data["title"])
        return Response({"id": str(conversation.id)}, status=201)


class EventListApi(APIView):
    # Blank is 0, as absent is (a form with an empty field sends it).
    @extend_schema(parameters=[OpenApiParameter("after", {"anyOf": [
                       {"type": "integer", "minimum": 0, "maximum": MAX_SEQ}, {"type": "string", "maxLength": 0}]},
                       description="last sequence number seen")],
                   responses={200: dict})
    def get(self, request: Request, conversation_id: int) -> Response:
        membership = membership_for_user(request.user)
        conversation = conversation_get_for(membership, conversation_id)
        events = events_after(conversation, request.query_params.get("after"))
        return Response({"last_seq": conversation.last_seq,
                         "results": [event_project(event_json(e), membership) for e in events]})


class FrameOutputSerializer(serializers.Serializer):
    """What every member may see of a frame: summary, status, timing, usage."""

    id = StrictCharField()
    parent = StrictCharField(source="parent_id", allow_null=True)
    kind = StrictCharField()
    name = StrictCharField()
    status = StrictCharField()
    level = StrictCharField()
    summary = StrictCharField(source="summary_shown", help_text="in the request's language")
    summary_words = serializers.JSONField(allow_null=True, help_text="the summary as meaning (key, params)")
    started_at = serializers.DateTimeField()
    first_token_at = serializers.DateTimeField(allow_null=True)
    ended_at = serializers.DateTimeField(allow_null=True)
    latency_ms = serializers.FloatField()
    gen_ai_operation_name = StrictCharField()
    gen_ai_provider_name = StrictCharField()
    gen_ai_request_model = StrictCharField()
    gen_ai_usage_input_tokens = serializers.IntegerField()
    gen_ai_usage_output_tokens = serializers.IntegerField()
    gen_ai_tool_name = StrictCharField()
    gen_ai_tool_call_id = StrictCharField()
    cost = serializers.DecimalField(max_digits=12, decimal_places=6)


class ActivityFrameListApi(APIView):
    """An Activity's frames, 200 a page in time order (`?after=<next>` for more).
    Developers and admins also get each frame's payload; business users never do."""

    @extend_schema(parameters=[OpenApiParameter("after", str, description="the `next` cursor of the previous page"),
                               OpenApiParameter("kind", str), OpenApiParameter("tool", str),
                               OpenApiParameter("level", str), OpenApiParameter("errors", bool)],
                   responses={200: dict})
    def get(self, request: Request, activity_id: int) -> Response:
        membership = membership_for_user(request.user)
        query_flag(request.query_params, "errors", default=False)  # a filter FrameFilters reads
        activity = activity_get_for(membership, activity_id)
        with_payloads = membership.can_see_payloads
        page = frames_page(activity, after=request.query_params.get("after"),
                           filters=FrameFilters.from_query(request.query_params), with_payloads=with_payloads)
        results = []
        for frame in page.frames:
            row = dict(FrameOutputSerializer(frame).data)
            if with_payloads:
                row["payload"] = frame.payload.data if _has_payload(frame) else None
                row["payload_url"] = f"/api/v1/frames/{frame.id}/payload/"
            results.append(row)
        return Response({"activity": str(activity.id), "kind": activity.kind, "title": activity.title,
                         "summary": activity.summary_shown, "summary_words": activity.summary_words, "status": activity.status,
                         "rollup": {"frames": activity.frame_count, "errors": activity.error_count,
                                    "tokens_in": activity.tokens_in, "tokens_out": activity.tokens_out,
                                    "cost": str(activity.cost), "latency_ms": activity.latency_ms},
                         "next": page.next_cursor, "results": results})


def _has_payload(frame) -> bool:
    try:
        return frame.payload is not None
    except FramePayload.DoesNotExist:
        return False


class FramePayloadApi(APIView):
    """One frame's payload, on demand: developers and admins only (403 for others)."""

    @extend_schema(responses={200: dict})
    def get(self, request: Request, frame_id: int) -> Response:
        payload = frame_payload_get_for(membership_for_user(request.user), frame_id)
        return Response({"frame": str(frame_id), "payload": payload.data if payload else None})


urlpatterns = [
    path("conversations/", ConversationCreateApi.as_view(), name="api-conversations"),
    path("conversations/<int:conversation_id>/events/", EventListApi.as_view(), name="api-events"),
    path("activities/<int:activity_id>/frames/", ActivityFrameListApi.as_view(), name="api-activity-frames"),
    path("frames/<int:frame_id>/payload/", FramePayloadApi.as_view(), name="api-frame-payload"),
    path("wiring-checks/", WiringCheckCreateApi.as_view(), name="api-wiring-checks"),
    path("wiring-checks/<int:check_id>/", WiringCheckDetailApi.as_view(), name="api-wiring-check"),
]
