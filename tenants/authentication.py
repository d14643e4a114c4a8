"""API token authentication (REST_FRAMEWORK["DEFAULT_AUTHENTICATION_CLASSES"]).

Its own module, importing no views: DRF resolves the setting while importing
rest_framework.views, so a module that also defines views would import itself."""
from knox import auth as knox_auth
from rest_framework import exceptions


class TokenAuthentication(knox_auth.TokenAuthentication):
    """knox's expiring, hashed tokens behind `Authorization: Token …`; a header
    that is not UTF-8 is an invalid token (401), not a UnicodeDecodeError (500)."""

    def authenticate_credentials(self, token: bytes):
        try:
            token.decode("utf-8")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("Invalid token.")
        return super().authenticate_credentials(token)
