"""POST /api/v1/runs/{id}/replay/ — replay a recorded run in a sandbox (developers and tenant
admins): {replay_id, identical, differences, …}. See agents/replay.py."""
from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.forms import id_parse
from tenants.selectors import membership_for_user

from .replay import replay_run


class RunReplayApi(APIView):
    @extend_schema(request=None, responses={200: inline_serializer("RunReplayOutput", {
        "replay_id": serializers.CharField(), "run": serializers.CharField(),
        "sandbox_tenant": serializers.CharField(), "sandbox_run": serializers.CharField(),
        "sandbox_kept": serializers.BooleanField(), "identical": serializers.BooleanField(),
        "differences": serializers.ListField(child=serializers.DictField()),
        "recorded": serializers.DictField(), "replayed": serializers.DictField()})})
    def post(self, request: Request, run_id: str) -> Response:
        """Re-run the run's steps against its recorded model answers and decisions, in a sandbox
        copy of the records it touched; say whether it went the same way, and where not. The
        comparison is kept (`replay_id`); the sandbox is deleted once compared."""
        membership = membership_for_user(request.user)
        return Response(replay_run(membership=membership, run_id=id_parse(run_id, what="run")))


urlpatterns = [path("runs/<str:run_id>/replay/", RunReplayApi.as_view(), name="run-replay")]
