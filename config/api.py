"""One place where errors become HTTP answers (HackSoft styleguide), in one shape:
RFC 9457 problem details, `application/problem+json`:

    {"type": "urn:keel:problem:<code>", "title": "Bad Request", "status": 400,
     "detail": "<a sentence a person can act on>", "code": "<code>", ...extra}

`detail` and `code` are what tests and the pages' scripts read; a DomainError's
extra keys (e.g. `line` of a bad attachment, the first decision of a twice-decided
approval) ride along; DRF validation errors carry their per-field messages in
`errors`."""
import re
import sys
from datetime import datetime
from datetime import timezone as dt_timezone
from http import HTTPStatus
from typing import Any

from django.core.exceptions import PermissionDenied
from django.core.validators import RegexValidator
from django.http import Http404, JsonResponse, QueryDict
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular import openapi
from drf_spectacular.plumbing import force_instance, is_basic_serializer
from drf_spectacular.utils import OpenApiParameter, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from config.ids import MAX_ID
from config.outage import RETRY_AFTER_SECONDS, database_away, database_busy, reconnecting_page
from config.words import is_words, words_render

PROBLEM_CONTENT_TYPE = "application/problem+json"


class DomainError(Exception):
    """A refusal a person can act on. Services raise it; the API maps it to HTTP."""

    status_code = 400
    code = "invalid"

    def __init__(self, message: Any, *, code: str | None = None, extra: dict[str, Any] | None = None):
        # The message may be words (config.words): `message` is then their rendering in the
        # language active now (the API's detail), `words` their meaning, for a reader who reads
        # another language (a run's question that quotes the refusal).
        self.words = message
        if is_words(message):
            message = words_render(message)
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


class InvalidId(DomainError):  # raised by config.forms.id_parse
    code = "invalid_id"


PROBLEM_MEMBERS_KEPT = ("type", "title", "detail", "code")

# `title` in the reader's language: the status phrases the API answers with.
STATUS_TITLES = {
    400: gettext_lazy("Bad Request"), 401: gettext_lazy("Unauthorized"), 403: gettext_lazy("Forbidden"),
    404: gettext_lazy("Not Found"), 405: gettext_lazy("Method Not Allowed"), 406: gettext_lazy("Not Acceptable"),
    409: gettext_lazy("Conflict"), 413: gettext_lazy("Request Entity Too Large"),
    415: gettext_lazy("Unsupported Media Type"), 422: gettext_lazy("Unprocessable Entity"),
    429: gettext_lazy("Too Many Requests"), 500: gettext_lazy("Internal Server Error"),
    503: gettext_lazy("Service Unavailable"),
}


def problem(http_status: int, detail: str, code: str, **extra: Any) -> dict[str, Any]:
    """The body of an RFC 9457 problem: standard members first, then the extras.

    One extra may replace a standard member: `status`. A twice-decided approval
    answers 409 with the approval's status ("expired"), which scripts and tests
    read; RFC 9457 tells consumers to ignore a `status` that is not a number, and
    the HTTP status line still carries 409."""
    title = str(STATUS_TITLES.get(http_status, HTTPStatus(http_status).phrase))
    body = {"type": f"urn:keel:problem:{code}", "title": title, "status": http_status, "detail": str(detail),
            "code": code}
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


def request_refusal(exc: BaseException) -> tuple[int, str, str, dict[str, Any]] | None:
    """(status, code, detail, extra) for what Django and Keel's parsers raise while they read
    a request; None for anything else. Django raises these lazily, wherever request.POST,
    request.body or request.data is first read (a view, the CSRF check, a parser), so the
    API's exception handler and the page handlers both ask here."""
    from django.conf import settings
    from django.core.exceptions import (
        BadRequest,
        RequestDataTooBig,
        SuspiciousOperation,
        TooManyFieldsSent,
        TooManyFilesSent,
    )
    from django.http import UnreadablePostError
    from django.http.multipartparser import MultiPartParserError

    if isinstance(exc, exceptions.APIException):  # Keel's RequestTooLarge, ControlCharacters
        detail = exc.detail if not isinstance(exc.detail, (list, dict)) else " ".join(_validation_summary(exc.detail))
        return exc.status_code, _first_code(exc.get_codes()), str(detail), dict(getattr(exc, "extra", {}))
    if isinstance(exc, DomainError):
        return exc.status_code, exc.code, exc.message, exc.extra
    if isinstance(exc, RequestDataTooBig):
        return 413, "payload_too_large", _("The request body is larger than %(kb)s KB.") % {
            "kb": (settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0) // 1024}, {}
    if isinstance(exc, TooManyFieldsSent):
        return 400, "too_many_fields", _("The request has more than %(max)s fields.") % {
            "max": settings.DATA_UPLOAD_MAX_NUMBER_FIELDS}, {}
    if isinstance(exc, TooManyFilesSent):
        return 400, "too_many_files", _("The request has more than %(max)s files.") % {
            "max": settings.DATA_UPLOAD_MAX_NUMBER_FILES}, {}
    if isinstance(exc, UnreadablePostError):
        return 400, "body_unreadable", _("The request body could not be read to its end; send it again."), {}
    if isinstance(exc, MultiPartParserError):
        return 400, "multipart_invalid", _("The multipart body is malformed: %(exc)s") % {"exc": exc}, {}
    if isinstance(exc, (BadRequest, SuspiciousOperation)):
        return 400, "bad_request", _("The request is malformed."), {}
    return None


def exception_handler(exc: Exception, context: dict) -> Response | None:
    if isinstance(exc, DomainError):
        response = Response(problem(exc.status_code, exc.message, exc.code, **exc.extra), status=exc.status_code,
                            headers=getattr(exc, "headers", None))
        return _as_problem(response, context)
    response = drf_exception_handler(exc, context)  # Http404, PermissionDenied and APIException; headers kept
    if response is None:
        refusal = request_refusal(exc)  # Django's own: a body too large, too many fields…
        if refusal is None:
            return None  # a bug: Django's 500 handling, never a made-up body
        status, code, detail, extra = refusal
        return _as_problem(Response(problem(status, detail, code, **extra), status=status), context)
    if isinstance(exc, exceptions.ValidationError):
        sentences = _validation_summary(exc.detail)
        response.data = problem(response.status_code, _("Invalid request.") + " " + " ".join(sentences), "invalid",
                                errors=response.data)
    else:
        detail = exc.detail if isinstance(exc, exceptions.APIException) else response.data.get("detail", "")
        code = _first_code(exc.get_codes()) if isinstance(exc, exceptions.APIException) else "error"
        if isinstance(exc, Http404):
            code = "not_found"
        elif isinstance(exc, PermissionDenied):
            code = "permission_denied"
        response.data = problem(response.status_code, str(detail if not isinstance(detail, (list, dict))
                                                           else " ".join(_validation_summary(detail))), code,
                                **getattr(exc, "extra", {}))
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


# --- Django's error handlers (config/urls.py) and the answers of config.requests ----------
# One rule for all of them: under /api/ a problem, elsewhere Keel's error page; and none
# may raise. Django's own handlers are decorated with requires_csrf_token, whose check
# reads request.POST on a POST: when the body is what failed (not UTF-8, too large), the
# 400 handler raised again, then the 500 handler, and the server answered a plain-text
# 500. These never read the body, and fall back to a page without a template.

ERROR_PAGE_FALLBACK = ('<!doctype html><html><head><meta charset="utf-8"><title>{status} · Keel</title></head>'
                       '<body data-testid="error-page"><h1>{status} {title}</h1><p>{detail}</p></body></html>')


def is_api_request(request) -> bool:
    try:
        return request.path.startswith("/api/")
    except Exception:  # noqa: BLE001 - a handler must answer whatever the request holds
        return False


def problem_response(status: int, detail: str, code: str, **extra: Any) -> JsonResponse:
    return JsonResponse(problem(status, detail, code, **extra), status=status, content_type=PROBLEM_CONTENT_TYPE)


def error_page(request, status: int, detail: str = "", template: str = "4xx.html"):
    """Keel's error page (templates/4xx.html, or the 403/404/500 page) with `status`; if the
    template cannot be rendered (a broken database behind the top bar, a broken engine), a
    bare page that still says what happened."""
    from django.http import HttpResponse
    from django.template import loader
    from django.utils.html import escape

    title = str(STATUS_TITLES.get(status, HTTPStatus(status).phrase))
    context = {"status": status, "title": title, "detail": detail}
    for with_request in (True, False):  # the top bar needs the request; a failing one is left out
        try:
            body = loader.render_to_string(template, context, request=request if with_request else None)
            return HttpResponse(body, status=status, content_type="text/html; charset=utf-8")
        except Exception:  # noqa: BLE001 - an error page must never raise again
            continue
    return HttpResponse(ERROR_PAGE_FALLBACK.format(status=status, title=escape(title), detail=escape(detail)),
                        status=status, content_type="text/html; charset=utf-8")


def refusal_response(request, status: int, detail: str, code: str, **extra: Any):
    """A refused request, as the caller reads it: a problem under /api/, else the 4xx page."""
    if is_api_request(request):
        return problem_response(status, detail, code, **extra)
    return error_page(request, status, detail)


def bad_request(request, exception=None):
    """handler400: what Django raised while it read the request (a body too large: 413; too
    many fields: 400; malformed multipart…), as a problem under /api/ and as the page."""
    refusal = request_refusal(exception) if exception is not None else None
    status, code, detail, extra = refusal or (400, "bad_request", _("The request is malformed."), {})
    return refusal_response(request, status, detail, code, **extra)


def permission_denied(request, exception=None):  # noqa: ARG001 - Django's handler403 signature
    if is_api_request(request):
        return problem_response(403, _("You do not have permission to perform this action."), "permission_denied")
    return error_page(request, 403, template="403.html")


def api_not_found(request, exception=None):  # noqa: ARG001 - Django's handler404 signature
    """Unknown URLs under /api/ answer a problem, pages answer the HTML 404 page."""
    if is_api_request(request):
        try:
            path = request.path
        except Exception:  # noqa: BLE001
            path = "?"
        return problem_response(404, _("No API endpoint at %(path)s.") % {"path": path}, "not_found")
    return error_page(request, 404, template="404.html")


def api_server_error(request):
    """handler500: under /api/ a bug still answers a problem (no traceback, no HTML). The
    database out of reach is no bug: 503 with Retry-After (config.outage). The exception is
    the one being handled (asgiref re-raises it in the thread it runs this in). A database
    that is up but busy says so: the client waits its turn, nothing is down."""
    exc = sys.exc_info()[1]
    busy = database_busy(exc)
    if busy or database_away(exc):
        if not is_api_request(request):
            return reconnecting_page(busy=busy)
        said = (_("Keel is busy right now; nothing was changed by this request. Try again in %(seconds)s seconds.")
                if busy else _("Keel cannot reach its database right now; nothing was changed by this "
                               "request. Try again in %(seconds)s seconds."))
        response = problem_response(503, said % {"seconds": RETRY_AFTER_SECONDS},
                                    "database_busy" if busy else "database_unavailable")
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
    if is_api_request(request):
        return problem_response(500, _("Something went wrong on our side; it has been logged."), "server_error")
    # 500.html stands alone (no top bar): whatever broke may be what the top bar reads.
    return error_page(None, 500, template="500.html")


# --- The schema's error answers ----------------------------------------------------------

class ProblemSerializer(serializers.Serializer):
    """RFC 9457 problem details: the body of every 4xx and 5xx answer of the API."""

    type = serializers.CharField(help_text="urn:keel:problem:<code>")
    title = serializers.CharField(help_text="the HTTP status phrase")
    status = serializers.JSONField(help_text="the HTTP status code; a twice-decided approval's 409 carries the "
                                             "approval's status (e.g. \"approved\") instead")
    detail = serializers.CharField(help_text="a sentence a person can act on")
    code = serializers.CharField(help_text="a stable machine-readable code")
    errors = serializers.JSONField(required=False, help_text="per-field messages of an invalid request")

    class Meta:
        ref_name = "Problem"


class StrictStringMixin:
    """A string in a request is a JSON string. DRF's CharField also takes numbers
    (`{"title": 0}` became "0"), which the schema does not say and a typo in a
    script should not get past: anything but a string is a clear 400. Its length is
    the length sent, as the schema's maxLength says (DRF measures it after trimming)."""

    def run_validation(self, data=serializers.empty):
        if isinstance(data, str) and self.max_length is not None and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        return super().run_validation(data)

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictCharField(StrictStringMixin, serializers.CharField):
    pass


class StrictSlugField(StrictStringMixin, serializers.SlugField):
    pass


class StrictRegexField(StrictStringMixin, serializers.RegexField):
    pass


# --- Numbers: only ASCII digits -----------------------------------------------------------
# Python's int() and Decimal() read any Unicode digit: "١٢" (Arabic-Indic) is 12, "１２"
# (fullwidth) too, and "²" passes str.isdigit() and then fails int(). A number a request
# carries is a JSON number, or text of ASCII digits; nothing else.
_INTEGER_TEXT = re.compile(r"[ \t]*[+-]?[0-9]{1,20}[ \t]*", re.ASCII)
_DECIMAL_TEXT = re.compile(r"[ \t]*[+-]?(?:[0-9]{1,20}(?:\.[0-9]{0,20})?|\.[0-9]{1,20})[ \t]*", re.ASCII)


def strict_int(value: object) -> int:
    """int() for what a request carries: an int (never a bool), a float with no fraction,
    or ASCII digits with an optional sign and blanks around; ValueError for anything else."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a number")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INTEGER_TEXT.fullmatch(value):
        return int(value)
    raise ValueError(f"{str(value)[:40]!r} is not a whole number")


def strict_moment(value: object) -> datetime:
    """An ISO date-time a request carries, as an aware moment in UTC; ValueError for text that
    is not one, has no offset, or lands outside the calendar once converted. (PostgreSQL refuses
    offsets beyond ±15:59 that Python accepts, so nothing reaches a query unconverted.)"""
    try:
        moment = datetime.fromisoformat(str(value))
        if moment.tzinfo is None:
            raise ValueError(f"{str(value)[:40]!r} has no time zone")
        return moment.astimezone(dt_timezone.utc)
    except OverflowError:
        raise ValueError(f"{str(value)[:40]!r} is outside the calendar")


def strict_decimal(value: object):
    """Decimal() for text a request carries: ASCII digits, a sign, one decimal point; an
    int; ValueError for anything else (Decimal() also reads "١٢", "1e3", "1_000", "NaN")."""
    from decimal import Decimal

    if isinstance(value, int) and not isinstance(value, bool):
        return Decimal(value)
    if isinstance(value, str) and _DECIMAL_TEXT.fullmatch(value):
        return Decimal(value.strip())
    raise ValueError(f"{str(value)[:40]!r} is not a decimal number")


class StrictIntegerField(serializers.IntegerField):
    """DRF's IntegerField reads int(str(data)): "١٢" became 12, and a JSON string "12" an
    integer the schema does not promise. Here a JSON body's integer is a JSON number (2,
    or 2.0; never true or "2"), and a query string's or a form's, where every value is
    text, is ASCII digits."""

    def to_internal_value(self, data):
        if isinstance(data, str) and isinstance(getattr(self.root, "initial_data", None), QueryDict):
            try:
                data = strict_int(data)
            except ValueError:
                self.fail("invalid")
        elif isinstance(data, bool) or not isinstance(data, (int, float)):
            self.fail("invalid")
        return super().to_internal_value(data)


def _at_most(limit: int) -> str:
    """A regular expression for the decimal numbers 1 … limit (no leading zeros)."""
    digits = str(limit)
    options = [f"[1-9][0-9]{{0,{len(digits) - 2}}}"] if len(digits) > 1 else []
    for i, d in enumerate(digits):
        low = "1" if i == 0 else "0"
        if d > low:
            options.append(f"{digits[:i]}[{low}-{int(d) - 1}][0-9]{{{len(digits) - i - 1}}}")
    options.append(digits)
    return "|".join(options)


# A business id in a request: ASCII digits (blanks around them trimmed), 1 … 2^63-1, as
# config.forms.id_parse reads it (Keel's ids are random 63-bit numbers: up to 19 digits).
ID_PATTERN = f"^[ \\t]*({_at_most(MAX_ID)})[ \\t]*$"


def results_of(serializer_class: type[serializers.Serializer], name: str):
    """The schema of a list answer as the API sends it: `{"results": [...]}`."""
    serializer = inline_serializer(name, {"results": serializer_class(many=True)})
    serializer.keel_results = True  # AutoSchema names the operation `…_list`
    return serializer


IDEMPOTENCY_KEY_MAX_LENGTH = 200
IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key", {"type": "string", "minLength": 1, "maxLength": IDEMPOTENCY_KEY_MAX_LENGTH,
                        "pattern": "^[ -~]*[!-~][ -~]*$"}, OpenApiParameter.HEADER, required=True,
    description="Unique per write (not blank, at most 200 visible ASCII characters); send the same key to "
                "retry it. Same key with a different body answers 422; while the first is still running, 409.")

def idempotent_write_errors() -> dict:
    """The answers of a write that takes an Idempotency-Key, besides 400/401/403/404:
    the state does not allow it or its key's first request is still running (409),
    the key was used with another request (422)."""
    from drf_spectacular.utils import OpenApiResponse

    return {409: OpenApiResponse(description="the record's state does not allow this, or the first request with "
                                             "this Idempotency-Key is still running"),
            422: OpenApiResponse(description="this Idempotency-Key was used with another request, or the rules "
                                             "of the system of record refuse it")}


# Strings Keel refuses whatever their length: a control character always (NUL, the
# other C0 controls but tab, line feed and carriage return, DEL, C1: config.parsers
# refuses them in every body and query), and blank (empty or whitespace-only once
# trimmed) unless a field allows blank. (A lone surrogate, "\\ud800", is refused too, but
# a pattern that names the surrogates is one schemathesis cannot use: it drops it.)
_CONTROL = "\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f"
NO_CONTROL = f"^[^{_CONTROL}]*$"
NOT_BLANK_NO_CONTROL = f"^[^{_CONTROL}]*[^\\s{_CONTROL}][^{_CONTROL}]*$"
NOT_EMPTY_NO_CONTROL = f"^[^{_CONTROL}]+$"

# Which failures each kind of operation can answer, besides what a view declares.
AUTHENTICATED_ERRORS = ("401", "403")  # no or a revoked token / a role or CSRF refusal
PATH_ERRORS = ("404",)  # another tenant's or an unknown id
INPUT_ERRORS = ("400",)  # a malformed body or query
BODY_ERRORS = ("413", "415")  # too large / not a media type the operation parses


class AutoSchema(openapi.AutoSchema):
    """drf-spectacular's AutoSchema with unique names for nested serializers and
    every error answer documented as a problem.

    Views declare `InputSerializer`/`OutputSerializer` inside themselves (HackSoft
    style); spectacular names each component after the class alone, so every
    "InputSerializer" became one component "Input" and three endpoints were
    documented with another endpoint's body. Name them after their view instead:
    `MessageApi.InputSerializer` → `MessageInput`.

    Every operation documents the failures it can answer (401/403 when it needs a
    caller, 404 with an id in its path, 400 with a body or a query, 413/415 with a
    body, plus the 409/422/429… its view declares), each as
    `application/problem+json` with the Problem schema: one error shape everywhere."""

    def get_serializer_name(self, serializer, direction):
        name = super().get_serializer_name(serializer, direction)
        outer, _, inner = type(serializer).__qualname__.rpartition(".")
        if outer and "<locals>" not in outer and name == inner:
            view = outer.rpartition(".")[2].removesuffix("Api").removesuffix("View")
            return f"{view}{name}"  # spectacular then drops the "Serializer" suffix
        return name

    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        """Request strings say what Keel refuses: no control character, and not blank
        (after trimming whitespace, when the field trims) unless blank is allowed."""
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        if (direction == "request" and isinstance(field, serializers.CharField) and isinstance(schema, dict)
                and schema.get("type") == "string" and "pattern" not in schema and "format" not in schema
                and not any(isinstance(v, RegexValidator) for v in field.validators)):
            if field.allow_blank:
                schema["pattern"] = NO_CONTROL
            else:
                schema["pattern"] = NOT_BLANK_NO_CONTROL if field.trim_whitespace else NOT_EMPTY_NO_CONTROL
                schema["minLength"] = max(schema.get("minLength", 0), 1)
        return schema

    def _insert_field_validators(self, field, schema):
        """spectacular documents a blank-allowed string with a pattern as `oneOf: [the
        string, {maxLength: 0}]`; "" matches both when the pattern allows it, and `oneOf`
        then refuses what the API accepts. Such a string is one schema; any other is `anyOf`."""
        super()._insert_field_validators(field, schema)
        options = schema.get("oneOf")
        if (isinstance(options, list) and len(options) == 2 and options[1] == {"type": "string", "maxLength": 0}
                and isinstance(options[0], dict)):
            inner = options[0]
            if ("format" not in inner and not inner.get("minLength")
                    and re.search(inner.get("pattern", ""), "") is not None):
                del schema["oneOf"]
                schema.update(inner)
            else:
                schema["anyOf"] = schema.pop("oneOf")

    def _process_override_parameters(self, direction="request"):
        """A filter serializer's optional number that is left blank (`?limit=`) is absent to DRF
        (its default), as a form with an empty field sends it: the schema says blank is taken."""
        result = super()._process_override_parameters(direction)
        serializer_fields = {name for parameter in self.get_override_parameters()
                             if not isinstance(parameter, OpenApiParameter) and is_basic_serializer(parameter)
                             for name in force_instance(parameter).fields}
        for (name, location), parameter in result.items():
            schema = (parameter or {}).get("schema")
            if (name in serializer_fields and location == OpenApiParameter.QUERY and not parameter.get("required")
                    and isinstance(schema, dict) and schema.get("type") in ("integer", "number")):
                default = schema.pop("default", None)
                parameter["schema"] = {"anyOf": [schema, {"type": "string", "maxLength": 0}]}
                if default is not None:
                    parameter["schema"]["default"] = default
        return result

    def _get_parameters(self):
        """Query strings say what config.requests refuses in any query: a control character."""
        parameters = super()._get_parameters()
        for parameter in parameters:
            schema = parameter.get("schema")
            if (parameter.get("in") == "query" and isinstance(schema, dict) and schema.get("type") == "string"
                    and not {"pattern", "enum", "format"} & set(schema)):
                schema["pattern"] = NO_CONTROL
        return parameters

    def get_operation_id(self):
        """A list answered as `{"results": [...]}` is still a list: `v1_runs_list`, not
        `v1_runs_retrieve` (which collides with `runs/{id}/`)."""
        operation_id = super().get_operation_id()
        if getattr(self.get_response_serializers(), "keel_results", False):
            operation_id = operation_id.removesuffix("_retrieve") + ("" if operation_id.endswith("_list") else "_list")
        return operation_id

    def _get_request_body(self, direction="request"):
        """A body given as a plain schema with required members (a multipart upload)
        is itself required: without it the request is refused."""
        body = super()._get_request_body(direction)
        if body and not body.get("required") and any(
                isinstance(media.get("schema"), dict) and media["schema"].get("required")
                for media in body.get("content", {}).values()):
            body["required"] = True
        return body

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        parameters = self._get_parameters()
        codes = set()
        if self.get_auth():
            codes.update(AUTHENTICATED_ERRORS)
        if any(p.get("in") == "path" for p in parameters):
            codes.update(PATH_ERRORS)
        has_body = self._get_request_body() is not None
        if has_body or any(p.get("in") in ("query", "header") for p in parameters):
            codes.update(INPUT_ERRORS)
        if has_body:
            codes.update(BODY_ERRORS)
        codes.update(code for code in responses if code[:1] in "45")
        problem_ref = self.resolve_serializer(ProblemSerializer, "response").ref
        for code in sorted(codes):
            declared = responses.get(code, {})
            responses[code] = {
                "content": {PROBLEM_CONTENT_TYPE: {"schema": problem_ref}},
                "description": declared.get("description") or HTTPStatus(int(code)).phrase,
            }
        return dict(sorted(responses.items()))
