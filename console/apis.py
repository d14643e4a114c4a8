"""GET /api/v1/metrics/: the validation metrics of the caller's tenant (DESIGN.md §7)."""
from django.urls import path
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import StrictCharField
from tenants.selectors import membership_for_user

from .metrics import metrics_for, period_parse


class MetricOutputSerializer(serializers.Serializer):
    key = StrictCharField()
    label = StrictCharField()
    value = serializers.FloatField(allow_null=True)
    unit = serializers.ChoiceField(choices=["ratio", "count", "seconds", "nodes"])
    definition = StrictCharField()
    numerator = serializers.IntegerField(allow_null=True)
    denominator = serializers.IntegerField(allow_null=True)
    details = serializers.JSONField()


class DayOutputSerializer(serializers.Serializer):
    date = serializers.DateField()
    runs = serializers.IntegerField()
    by_status = serializers.DictField(child=serializers.IntegerField())
    completed = serializers.IntegerField()
    finished = serializers.IntegerField()
    success_rate = serializers.FloatField(allow_null=True)


class MetricsOutputSerializer(serializers.Serializer):
    since = serializers.DateTimeField()
    until = serializers.DateTimeField()
    runs = serializers.IntegerField()
    metrics = MetricOutputSerializer(many=True)
    daily = DayOutputSerializer(many=True)


EMPTY = {"type": "string", "maxLength": 0}


class MetricsApi(APIView):
    @extend_schema(
        parameters=[
            # An empty value is no value (`?until=`), as a form sends it.
            OpenApiParameter("days", {"anyOf": [{"type": "integer", "minimum": 1, "maximum": 366}, EMPTY]},
                             description="the last N days (1–366); default 30"),
            OpenApiParameter("since", {"anyOf": [{"type": "string", "format": "date"},
                                                 {"type": "string", "format": "date-time"}, EMPTY]},
                             description="start: a date or an ISO date-time"),
            OpenApiParameter("until", {"anyOf": [{"type": "string", "format": "date"},
                                                 {"type": "string", "format": "date-time"}, EMPTY]},
                             description="end: a date (inclusive) or an ISO date-time"),
        ],
        responses=MetricsOutputSerializer,
        description="The validation metrics of the caller's tenant, over the runs created in the period.",
    )
    def get(self, request: Request) -> Response:
        membership = membership_for_user(request.user)
        report = metrics_for(tenant_id=membership.tenant_id, period=period_parse(request.query_params))
        return Response(report.as_json())


urlpatterns = [
    path("metrics/", MetricsApi.as_view(), name="api-metrics"),
]
