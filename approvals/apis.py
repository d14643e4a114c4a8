from django.urls import path
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import DomainError
from tenants.selectors import membership_for_user

from .models import ApprovalStatus
from .selectors import approvals_for
from .services import approval_decide, approval_get_for


class ApprovalOutputSerializer(serializers.Serializer):
    id = serializers.CharField()
    run = serializers.CharField(source="run_id")
    node = serializers.CharField(source="node.key")
    tool = serializers.CharField()
    status = serializers.CharField()
    summary = serializers.CharField()
    arguments = serializers.JSONField()
    arguments_hash = serializers.CharField()
    diff = serializers.JSONField()
    deadline = serializers.DateTimeField()
    requested_by = serializers.CharField(source="requested_by.username")
    decided_by = serializers.CharField(source="decided_by.username", allow_null=True, default=None)
    decided_at = serializers.DateTimeField(allow_null=True)
    comment = serializers.CharField()
    created_at = serializers.DateTimeField()


class ApprovalListApi(APIView):
    @extend_schema(parameters=[OpenApiParameter("status", enum=ApprovalStatus.values)],
                   responses=ApprovalOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        status = request.query_params.get("status")
        if status and status not in ApprovalStatus.values:
            raise DomainError(f"Unknown status {status!r}; use one of {', '.join(ApprovalStatus.values)}.")
        approvals = approvals_for(membership_for_user(request.user), status)
        return Response({"results": ApprovalOutputSerializer(approvals, many=True).data})


class ApprovalDetailApi(APIView):
    @extend_schema(responses=ApprovalOutputSerializer)
    def get(self, request: Request, approval_id: int) -> Response:
        approval = approval_get_for(membership_for_user(request.user), approval_id)
        return Response(ApprovalOutputSerializer(approval).data)


class DecisionInputSerializer(serializers.Serializer):
    comment = serializers.CharField(required=False, allow_blank=True, max_length=2000, default="")
    replan = serializers.BooleanField(required=False, default=False)


def _decide(request: Request, approval_id: int, verdict: str) -> Response:
    data = DecisionInputSerializer(data=request.data)
    data.is_valid(raise_exception=True)
    approval = approval_decide(membership=membership_for_user(request.user), approval_id=approval_id,
                               verdict=verdict, comment=data.validated_data["comment"],
                               replan=data.validated_data["replan"] if verdict == ApprovalStatus.REJECTED else False)
    return Response(ApprovalOutputSerializer(approval).data)


DECISION_RESPONSES = {200: ApprovalOutputSerializer, 403: OpenApiResponse(description="not an approver"),
                      409: OpenApiResponse(description="already decided; the body carries the first decision")}


class ApprovalApproveApi(APIView):
    @extend_schema(request=DecisionInputSerializer, responses=DECISION_RESPONSES)
    def post(self, request: Request, approval_id: int) -> Response:
        return _decide(request, approval_id, ApprovalStatus.APPROVED)


class ApprovalRejectApi(APIView):
    @extend_schema(request=DecisionInputSerializer, responses=DECISION_RESPONSES)
    def post(self, request: Request, approval_id: int) -> Response:
        return _decide(request, approval_id, ApprovalStatus.REJECTED)


urlpatterns = [
    path("approvals/", ApprovalListApi.as_view(), name="api-approvals"),
    path("approvals/<int:approval_id>/", ApprovalDetailApi.as_view(), name="api-approval"),
    path("approvals/<int:approval_id>/approve/", ApprovalApproveApi.as_view(), name="api-approval-approve"),
    path("approvals/<int:approval_id>/reject/", ApprovalRejectApi.as_view(), name="api-approval-reject"),
]
