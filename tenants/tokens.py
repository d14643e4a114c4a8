"""API tokens (django-rest-knox) and signing out.

A token is issued per log-in (`POST /api/v1/auth/token/`), stored only as a hash,
expires after REST_KNOX["TOKEN_TTL"], and is revoked by `DELETE auth/token/`, by
a log-out in the browser, by a password change and by "sign out everywhere"."""
from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import authenticate
from django.contrib.auth.signals import user_logged_in
from django.contrib.sessions.models import Session
from django.db import transaction
from django.utils import timezone
from drf_spectacular.contrib.knox_auth_token import KnoxTokenScheme
from drf_spectacular.utils import OpenApiResponse, extend_schema
from knox.models import AuthToken
from knox.settings import knox_settings
from rest_framework import serializers
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import DomainError

from .authentication import TokenAuthentication
from .login_throttle import LoginThrottled, locked_out


# --- Services ---------------------------------------------------------------------------

@dataclass(frozen=True)
class SignOut:
    tokens_revoked: int
    sessions_ended: int


def tokens_revoke_all(*, user_id: int) -> int:
    """Delete every API token of the user; scripts using one get 401 from now on."""
    deleted, _ = AuthToken.objects.filter(user_id=user_id).delete()
    return deleted


def sessions_end_all(*, user_id: int) -> int:
    """End every browser session of the user.

    Sessions store the user id only inside their encoded data, so each live
    session is decoded; a per-user index would need a session backend of our own,
    and "sign out everywhere" is rare enough to afford the scan."""
    ended = 0
    for session in Session.objects.filter(expire_date__gt=timezone.now()).iterator():
        if str(session.get_decoded().get("_auth_user_id")) == str(user_id):
            session.delete()
            ended += 1
    return ended


@transaction.atomic
def sign_out_everywhere(*, user_id: int) -> SignOut:
    """Revoke all API tokens and end all browser sessions of the user."""
    return SignOut(tokens_revoked=tokens_revoke_all(user_id=user_id), sessions_ended=sessions_end_all(user_id=user_id))


def on_logged_out(sender, request, user, **kwargs):  # noqa: ARG001 - signal receiver
    """A log-out in the browser also revokes the user's API tokens (connected in apps.py)."""
    if user is not None and user.pk is not None:
        tokens_revoke_all(user_id=user.pk)


class TokensRevokedOnPasswordChange:
    """In AUTH_PASSWORD_VALIDATORS for its password_changed() hook: Django calls it
    after every password change, whichever path made it (the form, the admin,
    `manage.py changepassword`). A stolen token must not outlive a new password.
    It validates nothing."""

    def validate(self, password, user=None):  # noqa: ARG002
        return None

    def password_changed(self, password, user=None):  # noqa: ARG002
        if user is not None and user.pk is not None:
            tokens_revoke_all(user_id=user.pk)

    def get_help_text(self) -> str:
        return ""


# --- API --------------------------------------------------------------------------------

class TokenScheme(KnoxTokenScheme):
    """The schema's description of `Authorization: Token …` for our subclass of
    knox's authentication (spectacular matches extensions by exact class)."""

    target_class = "tenants.authentication.TokenAuthentication"
    name = "tokenAuth"


class InvalidCredentials(DomainError):
    code = "invalid_credentials"


class TokenApi(APIView):
    """POST: username and password → a new token. DELETE: revoke the presented token."""

    class InputSerializer(serializers.Serializer):
        username = serializers.CharField(max_length=150)
        password = serializers.CharField(max_length=4096, trim_whitespace=False,
                                         style={"input_type": "password"})

    class OutputSerializer(serializers.Serializer):
        token = serializers.CharField()
        expiry = serializers.DateTimeField(allow_null=True, help_text="When the token stops working.")

    def get_authenticators(self):
        # Logging in takes credentials from the body only: a stale or foreign
        # Authorization header must not turn a log-in into a 401.
        return [] if self._logging_in() else [TokenAuthentication()]

    def get_permissions(self):
        return [AllowAny()] if self._logging_in() else [IsAuthenticated()]

    def _logging_in(self) -> bool:
        request = getattr(self, "request", None)  # None while drf-spectacular inspects the view
        return request is not None and request.method == "POST"

    @extend_schema(request=InputSerializer, auth=[], responses={
        200: OutputSerializer,
        400: OpenApiResponse(description="Missing fields, or the username and password do not match."),
        429: OpenApiResponse(description="Too many failed log-ins for this account or this address."),
    })
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        # axes marks the Django request (not DRF's wrapper) when it refuses.
        http_request = request._request
        user = authenticate(http_request, username=data.validated_data["username"],
                            password=data.validated_data["password"])
        if locked_out(http_request):
            raise LoginThrottled(http_request)
        if user is None:
            raise InvalidCredentials("Unable to log in with provided credentials.")
        instance, token = AuthToken.objects.create(user=user, expiry=knox_settings.TOKEN_TTL)
        user_logged_in.send(sender=user.__class__, request=http_request, user=user)
        return Response(self.OutputSerializer({"token": token, "expiry": instance.expiry}).data)

    @extend_schema(request=None, responses={204: None, 401: OpenApiResponse(description="No valid token presented.")})
    def delete(self, request: Request) -> Response:
        request.auth.delete()
        return Response(status=204)


class TokenRevokeAllApi(APIView):
    """Sign out everywhere: every token and every browser session of the caller."""

    class OutputSerializer(serializers.Serializer):
        tokens_revoked = serializers.IntegerField()
        sessions_ended = serializers.IntegerField()

    @extend_schema(request=None, responses={200: OutputSerializer})
    def post(self, request: Request) -> Response:
        result = sign_out_everywhere(user_id=request.user.pk)
        return Response(self.OutputSerializer(result).data)
