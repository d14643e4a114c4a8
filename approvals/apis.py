from django.urls import path
from django.utils.translation import gettext as _
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import DomainError, StrictCharField, results_of
from config.words import words_render
from tenants.selectors import membership_for_user

from .models import ApprovalStatus
from .selectors import (
    approval_get,
    approval_history,
    approvals_for,
    person,
    summary_described,
    waited_seconds,
)
from .services import approval_decide


class ApprovalOutputSerializer(serializers.Serializer):
    id = StrictCharField()
    run = StrictCharField(source="run_id")
    node = StrictCharField(source="node.key")
    tool = StrictCharField()
    status = StrictCharField()
    summary = serializers.SerializerMethodField()  # what it does, in the request's language
    arguments = serializers.JSONField()
    arguments_hash = StrictCharField()
    diff = serializers.JSONField()
    deadline = serializers.DateTimeField()
    requested_by = StrictCharField(source="requested_by.username")
    decided_by = StrictCharField(source="decided_by.username", allow_null=True, default=None)
    decided_at = serializers.DateTimeField(allow_null=True)
    comment = StrictCharField()
    created_at = serializers.DateTimeField()
    goal = StrictCharField(source="node.goal")
    requester = serializers.SerializerMethodField()
    needs_role = StrictCharField()
    allowed_roles = serializers.ListField(child=StrictCharField())
    routing_reason = StrictCharField()  # English, as stored
    routing_reason_shown = StrictCharField()  # the same in the request's language
    measures = serializers.SerializerMethodField()
    waited_seconds = serializers.SerializerMethodField()

    def get_summary(self, obj) -> str:
        return summary_described(obj)

    def get_measures(self, obj) -> dict:
        """As measured; the request context's assumptions (stored as words) in the request's language."""
        measures = dict(obj.measures or {})
        context = measures.get("context")
        if isinstance(context, dict) and context.get("assumptions"):
            measures["context"] = {**context, "assumptions": [words_render(a) for a in context["assumptions"]]}
        return measures

    def get_requester(self, obj) -> dict:
        return {"username": obj.requested_by.username, "name": person(obj.requested_by)}

    def get_waited_seconds(self, obj) -> float:
        return round(waited_seconds(obj), 1)


class ApprovalListApi(APIView):
    # An empty value is no filter (`?status=`), as a form with a blank choice sends it.
    @extend_schema(parameters=[OpenApiParameter("status", enum=[*ApprovalStatus.values, ""])],
                   responses=results_of(ApprovalOutputSerializer, "ApprovalList"))
    def get(self, request: Request) -> Response:
        status = request.query_params.get("status")
        if status and status not in ApprovalStatus.values:
            raise DomainError(_("Unknown status %(status)s; use one of %(choices)s.")
                              % {"status": repr(status), "choices": ', '.join(ApprovalStatus.values)})
        approvals = approvals_for(membership_for_user(request.user), status)
        return Response({"results": ApprovalOutputSerializer(approvals, many=True).data})


class ApprovalDetailApi(APIView):
    @extend_schema(responses=ApprovalOutputSerializer)
    def get(self, request: Request, approval_id: int) -> Response:
        approval = approval_get(membership_for_user(request.user), approval_id)
        return Response(ApprovalOutputSerializer(approval).data)


class DecisionInputSerializer(serializers.Serializer):
    comment = StrictCharField(required=False, allow_blank=True, max_length=2000, default="")
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


class DecisionOutputSerializer(serializers.Serializer):
    approval = StrictCharField(source="approval_id")
    user = StrictCharField(source="user.username")
    verdict = StrictCharField()
    accepted = serializers.BooleanField()
    comment = StrictCharField()
    at = serializers.DateTimeField()


class EventOutputSerializer(serializers.Serializer):
    seq = serializers.IntegerField()
    type = StrictCharField()
    data = serializers.JSONField()
    created_at = serializers.DateTimeField()


class RunApprovalHistoryApi(APIView):
    """A run's approvals, every decision attempt (accepted or refused) and its approval events."""

    @extend_schema(responses=inline_serializer("ApprovalHistory", {
        "approvals": ApprovalOutputSerializer(many=True), "decisions": DecisionOutputSerializer(many=True),
        "events": EventOutputSerializer(many=True)}))
    def get(self, request: Request, run_id: int) -> Response:
        history = approval_history(membership_for_user(request.user), run_id)
        return Response({"run": str(history["run"].id),
                         "approvals": ApprovalOutputSerializer(history["approvals"], many=True).data,
                         "decisions": DecisionOutputSerializer(history["decisions"], many=True).data,
                         "events": EventOutputSerializer(history["events"], many=True).data})


urlpatterns = [
    path("approvals/history/<int:run_id>/", RunApprovalHistoryApi.as_view(), name="api-approval-history"),
    path("approvals/", ApprovalListApi.as_view(), name="api-approvals"),
    path("approvals/<int:approval_id>/", ApprovalDetailApi.as_view(), name="api-approval"),
    path("approvals/<int:approval_id>/approve/", ApprovalApproveApi.as_view(), name="api-approval-approve"),
    path("approvals/<int:approval_id>/reject/", ApprovalRejectApi.as_view(), name="api-approval-reject"),
]
