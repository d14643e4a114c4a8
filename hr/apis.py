"""/api/v1/hr/: the HR Core system of record over HTTP (DESIGN.md §7). A TAN's approval is
the event that starts the candidate-matching run; approving twice answers 409."""
from django.urls import path
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import DomainError, StrictCharField, StrictIntegerField, results_of
from tenants.actors import Actor
from tenants.selectors import membership_for_user

from . import selectors, services
from .models import Candidate, Seniority


class TanOutputSerializer(serializers.Serializer):
    id = StrictCharField()
    title = StrictCharField()
    title_zh = StrictCharField()
    location = StrictCharField()
    skills = serializers.ListField(child=StrictCharField())
    seniority = serializers.IntegerField()
    max_matches = serializers.IntegerField()
    status = StrictCharField()
    approved_by = StrictCharField(source="approved_by.username", allow_null=True, default=None)
    approved_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    match_count = serializers.IntegerField(default=0)
    matching_run = serializers.SerializerMethodField()

    def get_matching_run(self, tan) -> str | None:
        run = selectors.matching_run_for_tan(self.context["membership"], tan.id)
        return str(run.id) if run else None


class MatchOutputSerializer(serializers.Serializer):
    id = StrictCharField()
    rank = serializers.IntegerField()
    candidate_id = StrictCharField()
    candidate = StrictCharField(source="candidate.name")
    candidate_zh = StrictCharField(source="candidate.name_zh")
    score = serializers.DecimalField(max_digits=5, decimal_places=3)
    features = serializers.JSONField()
    explanation = StrictCharField()
    explanation_zh = StrictCharField()
    run_id = StrictCharField(allow_null=True)


class TanListApi(APIView):
    class InputSerializer(serializers.Serializer):
        title = StrictCharField(max_length=200)
        title_zh = StrictCharField(max_length=200, required=False, allow_blank=True, default="")
        location = StrictCharField(max_length=80)
        skills = serializers.ListField(child=StrictCharField(max_length=40), min_length=1, max_length=20)
        seniority = serializers.ChoiceField(choices=Seniority.values, default=Seniority.MID)
        max_matches = StrictIntegerField(min_value=1, max_value=20, default=5)

    @extend_schema(responses=results_of(TanOutputSerializer, "TanList"))
    def get(self, request: Request) -> Response:
        membership = membership_for_user(request.user)
        return Response({"results": TanOutputSerializer(selectors.tans_for(membership)[:200], many=True,
                                                        context={"membership": membership}).data})

    @extend_schema(request=InputSerializer, responses={201: TanOutputSerializer})
    def post(self, request: Request) -> Response:
        membership = membership_for_user(request.user)
        data = self.InputSerializer(data=request.data)
        if not data.is_valid():
            raise DomainError(_("Invalid TAN.") + " " + " ".join(f"{k}: {' '.join(map(str, v))}"
                                                         for k, v in data.errors.items()), code="invalid")
        tan = services.tan_create(actor=Actor.of_member(membership), **data.validated_data)
        tan = selectors.tan_get_for(membership, tan.id)
        return Response(TanOutputSerializer(tan, context={"membership": membership}).data, status=201)


class TanDetailApi(APIView):
    @extend_schema(responses=TanOutputSerializer)
    def get(self, request: Request, tan_id: int) -> Response:
        membership = membership_for_user(request.user)
        return Response(TanOutputSerializer(selectors.tan_get_for(membership, tan_id),
                                            context={"membership": membership}).data)


class TanApproveApi(APIView):
    @extend_schema(request=None, responses={200: TanOutputSerializer, 409: OpenApiResponse(
        description="the TAN's status does not allow this (already approved or closed)")})
    def post(self, request: Request, tan_id: int) -> Response:
        membership = membership_for_user(request.user)
        selectors.tan_get_for(membership, tan_id)
        services.tan_approve(actor=Actor.of_member(membership), tan_id=tan_id)
        return Response(TanOutputSerializer(selectors.tan_get_for(membership, tan_id),
                                            context={"membership": membership}).data)


class TanCloseApi(APIView):
    @extend_schema(request=None, responses={200: TanOutputSerializer, 409: OpenApiResponse(
        description="the TAN's status does not allow this (already approved or closed)")})
    def post(self, request: Request, tan_id: int) -> Response:
        membership = membership_for_user(request.user)
        selectors.tan_get_for(membership, tan_id)
        services.tan_close(actor=Actor.of_member(membership), tan_id=tan_id)
        return Response(TanOutputSerializer(selectors.tan_get_for(membership, tan_id),
                                            context={"membership": membership}).data)


class TanMatchesApi(APIView):
    @extend_schema(responses=results_of(MatchOutputSerializer, "MatchList"))
    def get(self, request: Request, tan_id: int) -> Response:
        matches = selectors.matches_for_tan(membership_for_user(request.user), tan_id)
        return Response({"results": MatchOutputSerializer(matches, many=True).data})


class CandidateOutputSerializer(serializers.Serializer):
    id = StrictCharField()
    name = StrictCharField()
    name_zh = StrictCharField()
    headline = StrictCharField()
    location = StrictCharField()
    skills = serializers.ListField(child=StrictCharField())
    seniority = serializers.IntegerField()


class CandidateListApi(APIView):
    @extend_schema(responses=inline_serializer("CandidateList", {"results": CandidateOutputSerializer(many=True)}))
    def get(self, request: Request) -> Response:
        membership = membership_for_user(request.user)
        return Response({"results": [
            {"id": str(c.id), "name": c.name, "name_zh": c.name_zh, "headline": c.headline, "location": c.location,
             "skills": c.skills, "seniority": c.seniority}
            for c in Candidate.objects.filter(tenant_id=membership.tenant_id)]})


urlpatterns = [
    path("tans/", TanListApi.as_view(), name="api-hr-tans"),
    path("tans/<int:tan_id>/", TanDetailApi.as_view(), name="api-hr-tan"),
    path("tans/<int:tan_id>/approve/", TanApproveApi.as_view(), name="api-hr-tan-approve"),
    path("tans/<int:tan_id>/close/", TanCloseApi.as_view(), name="api-hr-tan-close"),
    path("tans/<int:tan_id>/matches/", TanMatchesApi.as_view(), name="api-hr-tan-matches"),
    path("candidates/", CandidateListApi.as_view(), name="api-hr-candidates"),
]
