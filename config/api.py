"""One place where errors become HTTP answers (HackSoft styleguide), in one shape:
RFC 9457 problem details, `application/problem+json`:

    {"type": "urn:keel:problem:<code>", "title": "Bad Request", "status": 400,
     "detail": "<a sentence a person can act on>", "code": "<code>", ...extra}

`detail` and `code` are what tests and the pages' scripts read; a DomainError's
extra keys (e.g. `line` of a bad attachment, the first decision of a twice-decided
approval) ride along; DRF validation errors carry their per-field messages in
`errors`."""
from http import HTTPStatus
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, JsonResponse
from drf_spectacular import openapi
from rest_framework import exceptions
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

PROBLEM_CONTENT_TYPE = "application/problem+json"


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


class InvalidId(DomainError):  # raised by config.ids.id_parse
    code = "invalid_id"


PROBLEM_MEMBERS_KEPT = ("type", "title", "detail", "code")


def problem(http_status: int, detail: str, code: str, **extra: Any) -> dict[str, Any]:
    """The body of an RFC 9457 problem: standard members first, then the extras.

    One extra may replace a standard member: `status`. A twice-decided approval
    answers 409 with the approval's status ("expired"), which scripts and tests
    read; RFC 9457 tells consumers to ignore a `status` that is not a number, and
    the HTTP status line still carries 409."""
    body = {"type": f"urn:keel:problem:{code}", "title": HTTPStatus(http_status).phrase, "status": http_status,
            "detail": detail, "code": code}
    body.update({k: v for k, v in extra.items() if k not in PROBLEM_MEMBERS_KEPT})
    return body


def _validation_summary(errors: Any, field: str = "") -> list[str]:
    """"field: message" sentences from DRF's nested error structure, for `detail`."""
    if isinstance(errors, dict):
        return [s for key, value in errors.items()
                for s in _validation_summary(value, key if key != "non_field_errors" else field)]
    if isinstance(errors, list):
        return [s for item in errors for s in _validation_summary(item, field)]
    return [f"{field}: {errors}" if field else str(errors)]


def _first_code(codes: Any) -> str:
    if isinstance(codes, dict):
        codes = next(iter(codes.values()), "invalid")
    if isinstance(codes, list):
        codes = codes[0] if codes else "invalid"
    return _first_code(codes) if isinstance(codes, (dict, list)) else str(codes)


def exception_handler(exc: Exception, context: dict) -> Response | None:
    if isinstance(exc, DomainError):
        response = Response(problem(exc.status_code, exc.message, exc.code, **exc.extra), status=exc.status_code,
                            headers=getattr(exc, "headers", None))
        return _as_problem(response, context)
    response = drf_exception_handler(exc, context)  # Http404, PermissionDenied and APIException; headers kept
    if response is None:
        return None  # a bug: Django's 500 handling, never a made-up body
    if isinstance(exc, exceptions.ValidationError):
        sentences = _validation_summary(exc.detail)
        response.data = problem(response.status_code, "Invalid request. " + " ".join(sentences), "invalid",
                                errors=response.data)
    else:
        detail = exc.detail if isinstance(exc, exceptions.APIException) else response.data.get("detail", "")
        code = _first_code(exc.get_codes()) if isinstance(exc, exceptions.APIException) else "error"
        if isinstance(exc, Http404):
            code = "not_found"
        elif isinstance(exc, PermissionDenied):
            code = "permission_denied"
        response.data = problem(response.status_code, str(detail if not isinstance(detail, (list, dict))
                                                           else " ".join(_validation_summary(detail))), code)
    return _as_problem(response, context)


def _as_problem(response: Response, context: dict) -> Response:
    """Label the body application/problem+json when it will be rendered as JSON
    (the browsable API, asked for by a browser, renders HTML and keeps its type)."""
    request = context.get("request")
    renderer = getattr(request, "accepted_renderer", None)
    if renderer is None and request is not None and context.get("view") is not None:
        try:
            renderer, _ = context["view"].perform_content_negotiation(request, force=True)
        except Exception:  # noqa: BLE001 - negotiation failing here must not turn a 4xx into a 500
            renderer = None
    if renderer is None or isinstance(renderer, JSONRenderer):
        response.content_type = PROBLEM_CONTENT_TYPE
    return response


def api_not_found(request, exception=None):  # noqa: ARG001 - Django's handler404 signature
    """Unknown URLs under /api/ answer a problem, pages answer the HTML 404 page."""
    if request.path.startswith("/api/"):
        return JsonResponse(problem(404, f"No API endpoint at {request.path}.", "not_found"), status=404,
                            content_type=PROBLEM_CONTENT_TYPE)
    from django.views.defaults import page_not_found

    return page_not_found(request, exception)


def api_server_error(request):
    """handler500: under /api/ a bug still answers a problem (no traceback, no HTML)."""
    if request.path.startswith("/api/"):
        return JsonResponse(problem(500, "Something went wrong on our side; it has been logged.", "server_error"),
                            status=500, content_type=PROBLEM_CONTENT_TYPE)
    from django.views.defaults import server_error

    return server_error(request)


class AutoSchema(openapi.AutoSchema):
    """drf-spectacular's AutoSchema with unique names for nested serializers.

    Views declare `InputSerializer`/`OutputSerializer` inside themselves (HackSoft
    style); spectacular names each component after the class alone, so every
    "InputSerializer" became one component "Input" and three endpoints were
    documented with another endpoint's body. Name them after their view instead:
    `MessageApi.InputSerializer` → `MessageInput`."""

    def get_serializer_name(self, serializer, direction):
        name = super().get_serializer_name(serializer, direction)
        outer, _, inner = type(serializer).__qualname__.rpartition(".")
        if outer and "<locals>" not in outer and name == inner:
            view = outer.rpartition(".")[2].removesuffix("Api").removesuffix("View")
            return f"{view}{name}"  # spectacular then drops the "Serializer" suffix
        return name
