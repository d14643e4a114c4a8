from django.urls import path
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import (
    ID_PATTERN,
    StrictCharField,
    StrictIntegerField,
    StrictRegexField,
    idempotent_write_errors,
    results_of,
)
from config.forms import id_parse
from idempotency.apis import IDEMPOTENCY_KEY_OPTIONAL, idempotency_key, receipt_response
from idempotency.services import idempotent_if_keyed
from tenants.selectors import membership_for_user
from timeline.selectors import conversation_get_for
from workflows.models import StateCoordinate

from .blueprints import BLUEPRINTS, Door
from .models import Node, RunStatus
from .selectors import node_acceptance, run_get_for, runs_filtered
from .services import node_input_answer, run_cancel, run_retry, run_start
from .step_status import step_status_shown


class AcceptanceOutputSerializer(serializers.Serializer):
    criterion = StrictCharField()
    met = serializers.BooleanField(allow_null=True, help_text="null until the step's receipt was checked")
    detail = StrictCharField(allow_blank=True)


class NodeOutputSerializer(serializers.ModelSerializer):
    acceptance = serializers.SerializerMethodField()
    display_status = serializers.SerializerMethodField(
        help_text="what the pages show: a step that will never run reads \"skipped\" in a run over for good "
                  "(a completed run's undo step) and \"cancelled\" in a cancelled run; else its status")

    class Meta:
        model = Node
        fields = ["key", "goal", "tool", "status", "display_status", "status_reason", "depends_on", "run_when",
                  "attempts", "attempt", "result_ref", "plan_version", "question", "started_at", "finished_at",
                  "acceptance", "retries"]

    def get_display_status(self, node: Node) -> str:
        return step_status_shown(node.run.status, node.status) or ""

    @extend_schema_field(AcceptanceOutputSerializer(many=True))
    def get_acceptance(self, node: Node) -> list[dict]:
        return node_acceptance(node)


class CoordinateOutputSerializer(serializers.ModelSerializer):
    call_id = StrictCharField()

    class Meta:
        model = StateCoordinate
        fields = ["key", "value", "producer", "call_id", "receipt_ref", "plan_version"]


class RunOutputSerializer(serializers.Serializer):
    id = StrictCharField()
    conversation = StrictCharField(source="conversation_id")
    status = StrictCharField()
    status_reason = StrictCharField()
    control = StrictCharField()
    blueprint = StrictCharField()
    cancel_requested = serializers.JSONField(allow_null=True)
    plan_version = serializers.IntegerField()
    transition_count = serializers.IntegerField()
    model_calls = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    nodes = serializers.SerializerMethodField()
    state = serializers.SerializerMethodField()
    plans = serializers.SerializerMethodField()

    def get_nodes(self, run) -> list[dict]:
        return NodeOutputSerializer(run.nodes.filter(retired_in__isnull=True).order_by("position", "plan_version"), many=True).data

    def get_state(self, run) -> list[dict]:
        coordinates = run.coordinates.filter(call__node__retired_in__isnull=True)
        return CoordinateOutputSerializer(coordinates, many=True).data

    def get_plans(self, run) -> list[dict]:
        return [{"version": p.version, "reason": p.reason, "graph": p.graph, "created_at": p.created_at,
                 "diff": p.diff}
                for p in run.plans.all()]


class RunSummaryOutputSerializer(serializers.Serializer):
    id = StrictCharField()
    conversation = StrictCharField(source="conversation_id")
    blueprint = StrictCharField()
    status = StrictCharField()
    status_reason = StrictCharField()
    params = serializers.JSONField()
    created_by = StrictCharField(source="created_by.username")
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class RunListCreateApi(APIView):
    class FilterSerializer(serializers.Serializer):
        # An empty value is no filter (`?status=`), as a form with a blank choice sends it.
        blueprint = serializers.ChoiceField(choices=sorted(BLUEPRINTS), required=False, allow_blank=True)
        status = serializers.ChoiceField(choices=RunStatus.choices, required=False, allow_blank=True)
        limit = StrictIntegerField(min_value=1, max_value=500, default=100)

    @extend_schema(parameters=[FilterSerializer], responses=results_of(RunSummaryOutputSerializer, "RunList"))
    def get(self, request: Request) -> Response:
        """The caller's tenant's runs, newest first."""
        membership = membership_for_user(request.user)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        runs = runs_filtered(membership, blueprint=filters.validated_data.get("blueprint", ""),
                             status=filters.validated_data.get("status", "")).select_related("created_by")
        return Response({"results": RunSummaryOutputSerializer(runs[:filters.validated_data["limit"]],
                                                               many=True).data})

    class InputSerializer(serializers.Serializer):
        blueprint = serializers.ChoiceField(choices=sorted(BLUEPRINTS))
        params = serializers.DictField(help_text="the blueprint's parameters (each blueprint's JSON schema)")
        conversation = StrictRegexField(ID_PATTERN, required=False,
                                              help_text="an existing conversation's id")

    @extend_schema(request=InputSerializer, parameters=[IDEMPOTENCY_KEY_OPTIONAL], responses={
        201: RunOutputSerializer, 403: OpenApiResponse(
            description="the blueprint does not let your role start it, or starts only through its domain's own "
                        "request or event (each blueprint's `start`: roles and doors)"), 404: OpenApiResponse(
            description="no such conversation in your tenant"), **idempotent_write_errors()})
    def post(self, request: Request) -> Response:
        """Start a run of a blueprint, if the blueprint lets the caller's role start it from here.
        With an Idempotency-Key, a retry answers as the first request did and starts nothing."""
        membership = membership_for_user(request.user)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        conversation_id = None
        if data.validated_data.get("conversation"):
            conversation_id = conversation_get_for(
                membership, id_parse(data.validated_data["conversation"], what="conversation")).id

        def start() -> tuple[int, dict]:
            run = run_start(membership=membership, blueprint=data.validated_data["blueprint"],
                            params=data.validated_data["params"], conversation_id=conversation_id, door=Door.RUNS)
            return 201, RunOutputSerializer(run).data

        return receipt_response(idempotent_if_keyed(
            tenant_id=membership.tenant_id, operation="run_start", key=idempotency_key(request),
            request={**data.validated_data, "by": membership.user_id}, work=start))


class RunControlInputSerializer(serializers.Serializer):
    reason = StrictCharField(max_length=500, allow_blank=True, required=False, default="")

    class Meta:
        ref_name = "RunControlInput"


class RunCancelApi(APIView):
    @extend_schema(request=RunControlInputSerializer, responses={200: RunOutputSerializer, 403: OpenApiResponse(
        description="not the run's starter, an approver or an admin"), 409: OpenApiResponse(
        description="the run has ended, or a step is writing right now")})
    def post(self, request: Request, run_id: int) -> Response:
        """Cancel: withdraw approvals, stop open steps, undo this run's changes, end `cancelled`."""
        data = RunControlInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        run = run_cancel(membership=membership_for_user(request.user), run_id=run_id,
                         reason=data.validated_data["reason"])
        run.refresh_from_db()
        return Response(RunOutputSerializer(run).data)


class RunRetryApi(APIView):
    @extend_schema(request=RunControlInputSerializer, responses={200: RunOutputSerializer, 403: OpenApiResponse(
        description="not the run's starter, an approver or an admin"), 409: OpenApiResponse(
        description="the run is not failed or blocked")})
    def post(self, request: Request, run_id: int) -> Response:
        """Retry: the failed or blocked step runs again as a new logical attempt."""
        data = RunControlInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        run = run_retry(membership=membership_for_user(request.user), run_id=run_id,
                        reason=data.validated_data["reason"])
        run.refresh_from_db()
        return Response(RunOutputSerializer(run).data)


class RunDetailApi(APIView):
    @extend_schema(responses=RunOutputSerializer)
    def get(self, request: Request, run_id: int) -> Response:
        return Response(RunOutputSerializer(run_get_for(membership_for_user(request.user), run_id)).data)


class RunInputApi(APIView):
    class InputSerializer(serializers.Serializer):
        answer = StrictCharField(max_length=2000)

    @extend_schema(request=InputSerializer, responses={200: RunOutputSerializer, 403: OpenApiResponse(
        description="not the run's starter: a run's question is answered by whoever started it"), 409: OpenApiResponse(
        description="the run is not waiting for input")})
    def post(self, request: Request, run_id: int) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        run = node_input_answer(membership=membership_for_user(request.user), run_id=run_id,
                                answer=data.validated_data["answer"])
        run.refresh_from_db()
        return Response(RunOutputSerializer(run).data)


urlpatterns = [
    path("runs/", RunListCreateApi.as_view(), name="api-runs"),
    path("runs/<int:run_id>/", RunDetailApi.as_view(), name="api-run"),
    path("runs/<int:run_id>/input/", RunInputApi.as_view(), name="api-run-input"),
    path("runs/<int:run_id>/cancel/", RunCancelApi.as_view(), name="api-run-cancel"),
    path("runs/<int:run_id>/retry/", RunRetryApi.as_view(), name="api-run-retry"),
]
