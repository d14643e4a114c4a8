from django.urls import path
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tenants.selectors import membership_for_user

from .selectors import conversation_get_for, events_after, wiring_check_get
from .services import conversation_create, event_json, wiring_check_start


class WiringCheckOutputSerializer(serializers.Serializer):
    id = serializers.CharField()
    created_at = serializers.DateTimeField()
    completed_at = serializers.DateTimeField(allow_null=True)
    worker = serializers.CharField()


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
        title = serializers.CharField(required=False, allow_blank=True, max_length=200, default="")

    @extend_schema(request=InputSerializer, responses={201: dict})
    def post(self, request: Request) -> Response:
        membership = membership_for_user(request.user)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        conversation = conversation_create(tenant_id=membership.tenant_id, user_id=membership.user_id,
                                           title=data.validated_data["title"])
        return Response({"id": str(conversation.id)}, status=201)


class EventListApi(APIView):
    @extend_schema(parameters=[OpenApiParameter("after", int, description="last sequence number seen")],
                   responses={200: dict})
    def get(self, request: Request, conversation_id: int) -> Response:
        conversation = conversation_get_for(membership_for_user(request.user), conversation_id)
        events = events_after(conversation, request.query_params.get("after"))
        return Response({"last_seq": conversation.last_seq, "results": [event_json(e) for e in events]})


urlpatterns = [
    path("conversations/", ConversationCreateApi.as_view(), name="api-conversations"),
    path("conversations/<int:conversation_id>/events/", EventListApi.as_view(), name="api-events"),
    path("wiring-checks/", WiringCheckCreateApi.as_view(), name="api-wiring-checks"),
    path("wiring-checks/<int:check_id>/", WiringCheckDetailApi.as_view(), name="api-wiring-check"),
]
