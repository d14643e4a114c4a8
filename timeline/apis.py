from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tenants.selectors import membership_for_user

from .selectors import wiring_check_get
from .services import wiring_check_start


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


urlpatterns = [
    path("wiring-checks/", WiringCheckCreateApi.as_view(), name="api-wiring-checks"),
    path("wiring-checks/<int:check_id>/", WiringCheckDetailApi.as_view(), name="api-wiring-check"),
]
