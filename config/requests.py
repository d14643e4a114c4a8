"""What every request must be before any view, form or parser reads it (a view that checked
for itself would be the one that forgot):

- its charset is one Keel reads (config.parsers.charset_check; else 415). Django reads the
  query string and a form in the request's charset, and takes any name codecs.lookup()
  knows (bz2, punycode…): it must be checked before anything reads either;
- its query parameters hold no control character and none passes KEEL_QUERY_MAX_CHARS (else
  400 naming the parameter);
- a JSON body declared larger than KEEL_JSON_MAX_BYTES is a 413 before it is read;
- a urlencoded form is read here, once, within Django's limits, and its fields hold no
  control character (else 413 / 400 naming the field);
- a multipart form is parsed where it always is, lazily (a view may first change its
  upload handlers: expenses.uploads); its fields are checked as it is parsed;
- a urlencoded form is read only on a route that reads one (`route_body_types`: an API
  view reads what its parsers take, a page what it declares with `body_types` — the
  upload pages, multipart only — any other page either kind of form); elsewhere it is
  refused unread, a 415 problem (API) or the 400 page. So the request checks never read
  a form before an upload route sets its upload handlers (reading it first made setting
  them raise: a 500), and a form sent where JSON or a file is expected says so.

Refusals are a problem under /api/ and Keel's 4xx page elsewhere (config.api). This runs
in `__call__`, before any middleware's process_view — the CSRF check reads request.POST
there — so it sits after the middleware that set the language and the user, which the
error page shows.

One check cannot wait for a middleware: Django sets request.encoding from the charset
while it builds the request, and setting it reads the query string in that charset at
once. A GET with a query and `Content-Type: text/plain; charset=punycode` (or bz2, hex…)
raised while the request was built, before any middleware or handler: a 500. Keel's
request classes (`ASGIRequest`, `WSGIRequest`, served by `ASGIHandler`/`WSGIHandler` from
config/asgi.py and config/wsgi.py) take only a charset Keel reads as the encoding, and
leave any other in content_params for the middleware to refuse."""
from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.core.handlers import asgi, wsgi
from django.http import HttpRequest, HttpResponse, UnreadablePostError
from django.urls import Resolver404, resolve
from django.utils.http import parse_header_parameters
from django.utils.translation import gettext as _
from rest_framework.exceptions import UnsupportedMediaType
from rest_framework.utils.mediatypes import media_type_matches

from config.api import is_api_request, refusal_response, request_refusal
from config.parsers import (
    ControlCharacters,
    RequestTooLarge,
    UnsupportedCharset,
    charset_check,
    control_characters_check,
    form_texts,
    query_sizes_check,
)

FORM = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"


def _is_json(content_type: str) -> bool:
    return content_type == "application/json" or content_type.endswith("+json")


def body_types(*media_types: str):
    """A page view's declaration of the bodies it reads (FORM, MULTIPART): any other body is
    refused before anything reads it. Without one a page reads a form of either kind."""
    def declare(view):
        view.keel_body_types = frozenset(media_types)
        return view
    return declare


def route_body_types(request: HttpRequest) -> frozenset[str] | None:
    """The media types the request's route reads: an API view's parsers', a page's declared
    ones (`body_types`); None when the route says nothing (or there is no route)."""
    try:
        view = resolve(request.path_info).func
    except Resolver404:
        return None
    declared = getattr(view, "keel_body_types", None)
    if declared is None and hasattr(getattr(view, "cls", None), "parser_classes"):  # a DRF view
        declared = frozenset(parser.media_type for parser in view.cls.parser_classes)
    return declared


class RequestChecksMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            self.check(request)
        except (UnsupportedCharset, UnsupportedMediaType, ControlCharacters, RequestDataTooBig, TooManyFieldsSent,
                UnreadablePostError) as exc:
            if isinstance(exc, (RequestDataTooBig, TooManyFieldsSent, UnsupportedMediaType)):
                request._mark_post_parse_error()  # nothing after this reads the body again
            status, code, detail, extra = request_refusal(exc)
            if isinstance(exc, UnsupportedMediaType) and not is_api_request(request):
                status = 400  # a page's form sent to the wrong page: the 400 page, as any malformed form
            return refusal_response(request, status, detail, code, **extra)
        return self.get_response(request)

    def check(self, request: HttpRequest) -> None:
        content_type = request.content_type or ""
        charset = (request.content_params or {}).get("charset")
        if charset is not None:
            codec = charset_check(charset)
            # Django itself refuses a form whose charset is not spelt "utf-8" (UTF8, ascii).
            request.encoding = "utf-8" if content_type in (FORM, MULTIPART) else codec
        control_characters_check((key, text) for key, text in form_texts(request.GET))
        query_sizes_check(request.GET)
        length = _content_length(request)
        if length and content_type == FORM:
            readable = route_body_types(request)
            if readable is not None and not any(media_type_matches(t, content_type) for t in readable):
                raise UnsupportedMediaType(content_type, detail=_(
                    "This address does not read a %(type)s body; send %(types)s.")
                    % {"type": content_type[:80], "types": _(" or ").join(sorted(readable))})
        if _is_json(content_type) and length > settings.KEEL_JSON_MAX_BYTES:
            raise RequestTooLarge(_("The JSON body is larger than %(kb)s KB.")
                                  % {"kb": settings.KEEL_JSON_MAX_BYTES // 1024})
        if request.method == "POST" and content_type == FORM:
            control_characters_check(form_texts(request.POST))
        elif request.method == "POST" and content_type == MULTIPART:
            _check_multipart_as_parsed(request)


def _content_length(request: HttpRequest) -> int:
    value = request.META.get("CONTENT_LENGTH") or "0"
    return int(value) if value.isascii() and value.isdigit() else 0


def _check_multipart_as_parsed(request: HttpRequest) -> None:
    """Check the multipart form's fields when Django parses it (request.POST or .FILES),
    not now: Django hands upload handlers the files only, never the fields, and a view
    may set its own upload handlers before it reads the form. (The API's multipart views
    parse with config.parsers.MultiPartParser, which checks the same.)"""
    parse = request.parse_file_upload

    def parse_checked(META: dict[str, Any], post_data):
        data, files = parse(META, post_data)
        control_characters_check(form_texts(data, files))  # a MultiPartParserError: Django's 400
        return data, files

    request.parse_file_upload = parse_checked


class _TextCharsetOnly:
    def _set_content_type_params(self, meta: dict[str, Any]) -> None:
        self.content_type, self.content_params = parse_header_parameters(meta.get("CONTENT_TYPE", ""))
        if "charset" in self.content_params:
            try:
                self.encoding = charset_check(self.content_params["charset"])
            except UnsupportedCharset:
                pass  # left at DEFAULT_CHARSET; RequestChecksMiddleware answers 415


class ASGIRequest(_TextCharsetOnly, asgi.ASGIRequest):
    def __init__(self, scope, body_file):
        super().__init__(scope, body_file)
        # A chunked body has no Content-Length, and DRF and Django's forms read a body of
        # that length: nothing, so a JSON body sent chunked was taken for an empty one.
        # The ASGI handler has read the whole body by now; its length is known.
        if "CONTENT_LENGTH" not in self.META:
            body_file.seek(0, 2)
            size = body_file.tell()
            body_file.seek(0)
            if size:
                self.META["CONTENT_LENGTH"] = str(size)


class WSGIRequest(_TextCharsetOnly, wsgi.WSGIRequest):
    pass


class ASGIHandler(asgi.ASGIHandler):
    request_class = ASGIRequest


class WSGIHandler(wsgi.WSGIHandler):
    request_class = WSGIRequest
