from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import StrictCharField

from .selectors import member_get, members_for, membership_for_user
from .tokens import TokenApi, TokenRevokeAllApi


class MemberOutputSerializer(serializers.Serializer):
    id = StrictCharField()
    username = StrictCharField(source="user.username")
    name = serializers.SerializerMethodField()
    role = StrictCharField()

    def get_name(self, obj) -> str:
        return obj.user.get_full_name() or obj.user.username


class MeOutputSerializer(serializers.Serializer):
    username = StrictCharField(source="user.username")
    role = StrictCharField()
    tenant = StrictCharField(source="tenant.slug")
    tenant_name = StrictCharField(source="tenant.name")


class MeApi(APIView):
    @extend_schema(responses=MeOutputSerializer)
    def get(self, request: Request) -> Response:
        return Response(MeOutputSerializer(membership_for_user(request.user)).data)


class MemberListApi(APIView):
    @extend_schema(operation_id="v1_members_list",
                   responses=inline_serializer("MemberList", {"results": MemberOutputSerializer(many=True)}))
    def get(self, request: Request) -> Response:
        members = members_for(membership_for_user(request.user))
        return Response({"results": MemberOutputSerializer(members, many=True).data})


class MemberDetailApi(APIView):
    @extend_schema(responses=MemberOutputSerializer)
    def get(self, request: Request, member_id: int) -> Response:
        member = member_get(membership_for_user(request.user), member_id)
        return Response(MemberOutputSerializer(member).data)


urlpatterns = [
    path("auth/token/", TokenApi.as_view(), name="api-token"),
    path("auth/token/revoke-all/", TokenRevokeAllApi.as_view(), name="api-token-revoke-all"),
    path("me/", MeApi.as_view(), name="api-me"),
    path("members/", MemberListApi.as_view(), name="api-members"),
    path("members/<int:member_id>/", MemberDetailApi.as_view(), name="api-member"),
]
