"""The API's one JSON parser: DRF's, behind a size limit and a nesting limit.

Python's json module recurses once per bracket: ~50,000 "[" (100 KB) raise
RecursionError, which DRF does not catch (a 500 on every JSON endpoint, even the
anonymous token endpoint). Both limits are checked on the raw text, before
json.loads sees it, so no body can make the decoder recurse or allocate much."""
from __future__ import annotations

import codecs
import json
import re
from itertools import accumulate

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler
from django.utils.translation import gettext as _
from rest_framework import parsers, status
from rest_framework.exceptions import APIException, ParseError
from rest_framework.settings import api_settings

# A JSON string literal: what is inside one never opens or closes anything. An
# unterminated one runs to the end of the text, so every match attempt succeeds
# and the scan stays linear (a pattern that can fail rescans: quadratic).
_STRING = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class RequestTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "payload_too_large"


def json_depth(text: str, stop_above: int | None = None) -> int:
    """The deepest bracket nesting of a JSON text (strings ignored), without
    recursion; once past `stop_above` it stops counting and returns what it has."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub('""', text))
    deepest = 0
    for depth in accumulate(_STEP[c] for c in brackets):
        if depth > deepest:
            deepest = depth
            if stop_above is not None and deepest > stop_above:
                break
    return deepest


def json_parse(raw: bytes, *, encoding: str = "utf-8", max_bytes: int | None = None,
               max_depth: int | None = None):
    """Parse a JSON body with Keel's limits; ParseError (400) or RequestTooLarge (413)
    with a sentence a person can act on."""
    max_bytes = max_bytes if max_bytes is not None else settings.KEEL_JSON_MAX_BYTES
    max_depth = max_depth if max_depth is not None else settings.KEEL_JSON_MAX_DEPTH
    if len(raw) > max_bytes:
        raise RequestTooLarge(f"The JSON body is larger than {max_bytes // 1024} KB.")
    try:
        text = codecs.decode(raw, encoding)
    except (UnicodeDecodeError, LookupError):
        raise ParseError(_("JSON parse error - the body is not valid %(encoding)s text.") % {"encoding": encoding},
                         code="json_encoding")
    if json_depth(text, stop_above=max_depth) > max_depth:
        raise ParseError(_("JSON parse error - the body nests more than %(max_depth)s levels deep; at most %(max_depth)s are accepted.")
                         % {"max_depth": max_depth},
                         code="json_too_deep")
    parse_constant = _refuse_constant if api_settings.STRICT_JSON else None  # NaN, Infinity: not JSON
    try:
        return json.loads(text, parse_constant=parse_constant)
    except RecursionError:  # not reachable under the depth limit; never a 500 all the same
        raise ParseError(_("JSON parse error - the body nests too deeply."), code="json_too_deep")
    except ValueError as exc:  # includes JSONDecodeError and ints longer than Python accepts
        raise ParseError(_("JSON parse error - %(exc)s") % {"exc": exc})


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


class JSONParser(parsers.JSONParser):
    """DRF's JSONParser with Keel's limits; reads at most one byte past the limit."""

    def parse(self, stream, media_type=None, parser_context=None):
        parser_context = parser_context or {}
        encoding = parser_context.get("encoding", settings.DEFAULT_CHARSET)
        limit = settings.KEEL_JSON_MAX_BYTES
        raw = stream.read(limit + 1) if stream is not None else b""
        if not raw.strip():
            # DRF's own parser answers an empty body with a parse error too, but
            # with a message about "Expecting value: line 1 column 1".
            raise ParseError(_("JSON parse error - the body is empty; send a JSON object."), code="json_empty")
        return json_parse(raw, encoding=encoding, max_bytes=limit)


class UploadSizeLimit(FileUploadHandler):
    """First in FILE_UPLOAD_HANDLERS: stops a multipart upload once it passes
    KEEL_UPLOAD_MAX_BYTES, while it streams in. DATA_UPLOAD_MAX_MEMORY_SIZE does
    not count file parts, so without this a 1 GB "attachment" is written to a
    temporary file in full before any view can look at its size."""

    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        if content_length and content_length > settings.KEEL_UPLOAD_MAX_BYTES:
            raise RequestTooLarge(f"The upload is larger than {settings.KEEL_UPLOAD_MAX_BYTES // 1024} KB.")

    def receive_data_chunk(self, raw_data, start):
        if start + len(raw_data) > settings.KEEL_UPLOAD_MAX_BYTES:
            raise RequestTooLarge(f"The upload is larger than {settings.KEEL_UPLOAD_MAX_BYTES // 1024} KB.")
        return raw_data  # the next handler stores it

    def file_complete(self, file_size):
        return None  # the next handler builds the file
