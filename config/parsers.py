"""The API's parsers: DRF's, behind Keel's limits. Every body is read the same way:

- its charset names a text encoding Keel reads — UTF-8, or US-ASCII, its subset — or the
  request is a 415 (`charset_check`). Python's codecs also "decode" bz2, zlib, base64,
  hex, uu…: a 177-byte body labelled `charset=bz2` would become 200 MB of "[". JSON
  is UTF-8 (RFC 8259 §8.1) and Keel's pages are UTF-8, so browsers post UTF-8; a wider
  list would only widen what an attacker may send;
- its text is decoded incrementally and refused once it passes the limit (`text_decode`),
  so no decoder can make more of a body than the limit allows;
- its JSON may nest at most KEEL_JSON_MAX_DEPTH levels: Python's json module recurses
  once per bracket, and ~50,000 "[" raise RecursionError, which DRF does not catch.
  The limit is checked on the text, before json.loads sees it;
- no text in it (a JSON string or key at any depth, a form or multipart field, a file
  name) holds a control character (`control_characters_check`): NUL, the other C0
  controls but tab, line feed and carriage return, DEL and the C1 controls. PostgreSQL's
  text and jsonb refuse NUL (a 500), and the others are invisible in any page;
- nor a lone surrogate ("\\ud800", a legal JSON escape): it is no character, so neither
  UTF-8 nor PostgreSQL can hold it (jsonb refused it, a renderer failed on it: a 500);
- and every string and key in it is at most KEEL_JSON_MAX_CHARS long, every list and object
  at most KEEL_JSON_MAX_ITEMS (`sizes_check`): the byte limit alone lets one field be a
  megabyte, and what a server builds from a field (a name shown on every page, a row per
  item) grows with it. A field with a tighter bound of its own (an allowance's name) says so
  where it is read."""
from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterable
from itertools import accumulate
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.files.uploadhandler import FileUploadHandler
from django.http.multipartparser import MultiPartParserError
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

# The text encodings Keel reads, by codecs' canonical name (so "UTF8", "utf_8" and
# "us-ascii" are accepted under any of their aliases).
TEXT_CHARSETS = ("utf-8", "ascii")
DECODE_CHUNK = 64 * 1024

# Control characters no text field may hold (tab, line feed and carriage return may);
# the schema says the same of every request string (config.api.NO_CONTROL).
CONTROL_CHARACTERS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# Half of a UTF-16 pair with no other half; only a JSON escape can make one.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class RequestTooLarge(APIException, RequestDataTooBig):
    """413. Also Django's RequestDataTooBig, so that Django, when it meets this while it
    parses a page's form (an upload handler raises it), answers a 400-family page
    (config.api.bad_request) and marks the body as read instead of a 500."""

    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "payload_too_large"


class UnsupportedCharset(APIException):
    status_code = status.HTTP_415_UNSUPPORTED_MEDIA_TYPE
    default_code = "unsupported_charset"


class ControlCharacters(APIException, MultiPartParserError):
    """400 naming every field that holds a control character (`extra["errors"]`, as a
    validation error's). Also a MultiPartParserError, so that Django, meeting it while it
    parses a page's multipart form, marks the form as read and answers the 400 page
    (config.api.bad_request) instead of a 500."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "control_character"

    def __init__(self, detail: str, errors: dict[str, list[str]]):
        super().__init__(detail)
        self.extra = {"errors": errors}


def charset_check(charset: str | None) -> str:
    """The codec to decode a body labelled `charset` with: "utf-8" (the default when no
    charset is named) or "ascii"; anything else is UnsupportedCharset (415)."""
    if charset is None or not charset.strip():
        return "utf-8"
    try:
        codec = codecs.lookup(charset.strip())
    except (LookupError, ValueError, TypeError):  # unknown, or holds a NUL
        codec = None
    if codec is None or not codec._is_text_encoding or codec.name not in TEXT_CHARSETS:
        raise UnsupportedCharset(
            _("The request's charset “%(charset)s” is not one Keel reads: send UTF-8 text (charset=utf-8).")
            % {"charset": charset.strip()[:40]})
    return codec.name


def text_decode(raw: bytes, encoding: str, *, max_chars: int) -> str:
    """`raw` decoded with `encoding`, chunk by chunk, refused (RequestTooLarge, 413) as soon
    as the text passes `max_chars`: a decoder never makes more of a body than the limit.
    UnicodeDecodeError when the bytes are not `encoding`."""
    decoder = codecs.getincrementaldecoder(encoding)(errors="strict")
    pieces, size = [], 0
    for start in range(0, len(raw), DECODE_CHUNK):
        final = start + DECODE_CHUNK >= len(raw)
        piece = decoder.decode(raw[start:start + DECODE_CHUNK], final=final)
        size += len(piece)
        if size > max_chars:
            raise RequestTooLarge(_("The body is larger than %(kb)s KB once decoded.") % {"kb": max_chars // 1024})
        pieces.append(piece)
    if not raw:
        pieces.append(decoder.decode(b"", final=True))
    return "".join(pieces)


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


def json_parse(raw: bytes, *, encoding: str | None = "utf-8", max_bytes: int | None = None,
               max_depth: int | None = None):
    """Parse a JSON body with Keel's limits; UnsupportedCharset (415), ParseError (400),
    RequestTooLarge (413) or ControlCharacters (400) with a sentence a person can act on."""
    max_bytes = max_bytes if max_bytes is not None else settings.KEEL_JSON_MAX_BYTES
    max_depth = max_depth if max_depth is not None else settings.KEEL_JSON_MAX_DEPTH
    codec = charset_check(encoding)
    if len(raw) > max_bytes:
        raise RequestTooLarge(_("The JSON body is larger than %(kb)s KB.") % {"kb": max_bytes // 1024})
    try:
        text = text_decode(raw, codec, max_chars=max_bytes)
    except UnicodeDecodeError:
        raise ParseError(_("JSON parse error - the body is not valid %(encoding)s text.") % {"encoding": codec},
                         code="json_encoding")
    if json_depth(text, stop_above=max_depth) > max_depth:
        raise ParseError(_("JSON parse error - the body nests more than %(max_depth)s levels deep; at most %(max_depth)s are accepted.")
                         % {"max_depth": max_depth},
                         code="json_too_deep")
    parse_constant = _refuse_constant if api_settings.STRICT_JSON else None  # NaN, Infinity: not JSON
    try:
        data = json.loads(text, parse_constant=parse_constant)
    except RecursionError:  # not reachable under the depth limit; never a 500 all the same
        raise ParseError(_("JSON parse error - the body nests too deeply."), code="json_too_deep")
    except ValueError as exc:  # includes JSONDecodeError and ints longer than Python accepts
        raise ParseError(_("JSON parse error - %(exc)s") % {"exc": exc})
    control_characters_check(_json_texts(data))
    sizes_check(data, max_chars=settings.KEEL_JSON_MAX_CHARS, max_items=settings.KEEL_JSON_MAX_ITEMS)
    return data


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


def _json_texts(data: Any, path: str = "") -> Iterable[tuple[str, str]]:
    """(where, text) for every key and string of a parsed JSON value, "params.group_name"
    and "skills.1" style; iterative (the depth is bounded, but a wide body is not)."""
    stack = [(path, data)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            yield where, value
        elif isinstance(value, dict):
            for key, item in value.items():
                yield where, key  # a key is named by the object that holds it
                stack.append((f"{where}.{key}" if where else key, item))
        elif isinstance(value, list):
            stack.extend((f"{where}.{i}" if where else str(i), item) for i, item in enumerate(value))


def control_characters_check(texts: Iterable[tuple[str, str]]) -> None:
    """ControlCharacters (400) naming each field whose text holds a control character or a lone surrogate
    (the field's path; the body itself when it is a bare string)."""
    errors: dict[str, list[str]] = {}
    for where, text in texts:
        # A key may hold a lone surrogate too; the answer names it by its escape, which
        # UTF-8 can carry.
        where = LONE_SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", where)
        if where in errors:
            continue
        if found := CONTROL_CHARACTERS.search(text):
            errors[where] = [_("Control characters are not allowed (U+%(code)s at position %(position)s).")
                             % {"code": f"{ord(found.group()):04X}", "position": found.start() + 1}]
        elif found := LONE_SURROGATE.search(text):
            errors[where] = [_("A lone surrogate (U+%(code)s at position %(position)s) is no character; send "
                               "the character itself, or both halves of its pair.")
                             % {"code": f"{ord(found.group()):04X}", "position": found.start() + 1}]
    if errors:
        sentences = " ".join(f"{where}: {messages[0]}" if where else messages[0] for where, messages in errors.items())
        # `errors` carries each field's messages as DRF validation errors do; a key of
        # the body's top level (where == "") is filed under non_field_errors.
        raise ControlCharacters(_("Invalid request.") + " " + sentences,
                                {where or "non_field_errors": m for where, m in errors.items()})


class TooLarge(ControlCharacters):
    """400 naming every field whose text is longer, or whose list or object holds more, than
    a request may carry."""

    default_code = "field_too_large"


def sizes_check(data: Any, *, max_chars: int, max_items: int) -> None:
    """TooLarge naming each string or key over `max_chars` and each list or object over
    `max_items` of a parsed JSON value (iterative, as _json_texts)."""
    errors: dict[str, list[str]] = {}

    def too_long(where: str, text: str) -> None:
        errors.setdefault(where, [_("At most %(max)s characters; this one has %(count)s.")
                                  % {"max": max_chars, "count": len(text)}])

    stack = [("", data)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            if len(value) > max_chars:
                too_long(where, value)
        elif isinstance(value, (dict, list)):
            if len(value) > max_items:
                errors.setdefault(where, [_("At most %(max)s items; this one has %(count)s.")
                                          % {"max": max_items, "count": len(value)}])
                continue
            if isinstance(value, dict):
                for key, item in value.items():
                    if len(key) > max_chars:
                        too_long(where, key)
                        continue
                    stack.append((f"{where}.{key}" if where else key, item))
            else:
                stack.extend((f"{where}.{i}" if where else str(i), item) for i, item in enumerate(value))
    if errors:
        sentences = " ".join(f"{where}: {messages[0]}" if where else messages[0] for where, messages in errors.items())
        raise TooLarge(_("Invalid request.") + " " + sentences,
                       {where or "non_field_errors": m for where, m in errors.items()})


def query_sizes_check(query) -> None:
    """TooLarge naming each query parameter whose name or value passes KEEL_QUERY_MAX_CHARS."""
    limit = settings.KEEL_QUERY_MAX_CHARS
    errors = {key: [_("At most %(max)s characters; this one has %(count)s.") % {"max": limit, "count": len(text)}]
              for key, text in form_texts(query) if len(text) > limit}
    if errors:
        raise TooLarge(_("Invalid request.") + " " + " ".join(f"{k[:100]}: {m[0]}" for k, m in errors.items()),
                       {k[:100]: m for k, m in errors.items()})


def form_texts(data, files=None) -> Iterable[tuple[str, str]]:
    """(where, text) for a form's field names and values and its files' names."""
    for key, values in data.lists():
        yield key, key
        for value in values:
            if isinstance(value, str):
                yield key, value
    for key, uploads in (files.lists() if files is not None else ()):
        yield key, key
        for upload in uploads:
            yield key, upload.name or ""


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
            charset_check(encoding)
            raise ParseError(_("JSON parse error - the body is empty; send a JSON object."), code="json_empty")
        return json_parse(raw, encoding=encoding, max_bytes=limit)


class MultiPartParser(parsers.MultiPartParser):
    """DRF's MultiPartParser, reading only Keel's text charsets and refusing control
    characters in field names, values and file names."""

    def parse(self, stream, media_type=None, parser_context=None):
        charset_check((parser_context or {}).get("encoding"))
        parsed = super().parse(stream, media_type, parser_context)
        control_characters_check(form_texts(parsed.data, parsed.files))
        return parsed


class UploadSizeLimit(FileUploadHandler):
    """First in FILE_UPLOAD_HANDLERS: stops a multipart upload once it passes
    `max_bytes` (KEEL_UPLOAD_MAX_BYTES), while it streams in. DATA_UPLOAD_MAX_MEMORY_SIZE
    does not count file parts, so without this a 1 GB "attachment" is written to a
    temporary file in full before any view can look at its size. A route that takes a
    larger file puts a subclass with its own `max_bytes` in its place (expenses.uploads)."""

    @property
    def max_bytes(self) -> int:
        return settings.KEEL_UPLOAD_MAX_BYTES

    def refusal(self) -> RequestTooLarge:
        return RequestTooLarge(_("The upload is larger than %(kb)s KB.") % {"kb": self.max_bytes // 1024})

    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        if content_length and content_length > self.max_bytes:
            raise self.refusal()

    def receive_data_chunk(self, raw_data, start):
        if start + len(raw_data) > self.max_bytes:
            raise self.refusal()
        return raw_data  # the next handler stores it

    def file_complete(self, file_size):
        return None  # the next handler builds the file
