"""One place where domain errors become HTTP answers (HackSoft styleguide)."""
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, JsonResponse
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


class DomainError(Exception):
    """A refusal a person can act on. Services raise it; the API maps it to HTTP."""

    status_code = 400
    code = "invalid"

    def __init__(self, message: str, *, code: str | None = None, extra: dict[str, Any] | None = None):
        super().__init__(message)
        self.message = message
        if code:
            self.code = code
        self.extra = extra or {}


class NotFound(DomainError, Http404):  # pages render the 404 page
    status_code = 404
    code = "not_found"


class Forbidden(DomainError, PermissionDenied):  # pages render the 403 page
    status_code = 403
    code = "forbidden"


class Conflict(DomainError):
    status_code = 409
    code = "conflict"


class Unprocessable(DomainError):
    status_code = 422
    code = "unprocessable"


def exception_handler(exc: Exception, context: dict) -> Response | None:
    if isinstance(exc, DomainError):
        return Response({"detail": exc.message, "code": exc.code, **exc.extra}, status=exc.status_code)
    return drf_exception_handler(exc, context)


def api_not_found(request, exception=None):  # noqa: ARG001 - Django's handler404 signature
    """Unknown URLs under /api/ answer JSON, pages answer the HTML 404 page."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": f"No API endpoint at {request.path}.", "code": "not_found"}, status=404)
    from django.views.defaults import page_not_found

    return page_not_found(request, exception)
