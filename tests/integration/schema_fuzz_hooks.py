"""Schemathesis hooks for tests/integration/test_schema_fuzz.py (loaded by the
`schemathesis` process through SCHEMATHESIS_HOOKS; pytest does not collect it).

Every request carries the fuzzing user's API token (KEEL_FUZZ_TOKEN). The two
operations that revoke tokens (`DELETE auth/token/`, `POST auth/token/revoke-all/`)
would sign the fuzzer itself out half-way, so each of their cases logs in a second
user (KEEL_FUZZ_REVOKER) and revokes that user's fresh token instead: both
operations are still exercised for real, on every case.

Keel refuses a control character in any text of a body (config.parsers: NUL, the C0
controls but tab, line feed and carriage return, DEL, C1), whether the schema declares
the field or not. The schema says so of every declared string (its `pattern`); of a
property *name*, and of the values of properties it does not declare, OpenAPI 3.0 has
no way to say it. So a positive case (one the schema says must be accepted) drops the
undeclared names that hold one and the control characters of the free texts; negative
cases are sent as drawn."""
from __future__ import annotations

import json
import os
import re
import urllib.request

import schemathesis
from schemathesis.generation.meta import TestPhase
from schemathesis.specs.openapi.checks import negative_data_rejection

REVOKING = {("DELETE", "/api/v1/auth/token/"), ("POST", "/api/v1/auth/token/revoke-all/")}
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # config.parsers.CONTROL_CHARACTERS


def _log_in(base_url: str, username: str, password: str) -> str:
    req = urllib.request.Request(base_url + "/api/v1/auth/token/", method="POST",
                                 data=json.dumps({"username": username, "password": password}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read())["token"]


@schemathesis.auth(refresh_interval=None)
class KeelToken:
    def get(self, case, ctx):
        if (case.operation.method.upper(), case.operation.path) in REVOKING:
            username, _, password = os.environ["KEEL_FUZZ_REVOKER"].partition(":")
            return _log_in(os.environ["KEEL_FUZZ_BASE_URL"], username, password)
        return os.environ["KEEL_FUZZ_TOKEN"]

    def set(self, case, data, ctx):
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Token {data}"


def _without_control_characters(value):
    if isinstance(value, str):
        return CONTROL.sub("", value)
    if isinstance(value, dict):
        return {key: _without_control_characters(item) for key, item in value.items()
                if not (isinstance(key, str) and CONTROL.search(key))}
    if isinstance(value, list):
        return [_without_control_characters(item) for item in value]
    return value


@schemathesis.hook
def before_call(ctx, case, kwargs):
    # Right before sending, so every phase's cases pass here (the stateful phase's too).
    meta = case.meta
    if meta is not None and meta.generation.mode.is_positive and isinstance(case.body, (dict, list, str)):
        case.body = _without_control_characters(case.body)


@schemathesis.check
def negative_data_rejection_outside_links(ctx, response, case):
    """schemathesis's `negative_data_rejection` (invalid input is refused), run instead of it
    (test_schema_fuzz.py excludes the original) in every phase but the stateful one. There a
    link fills a case's path from an earlier response after the case was drawn negative, so a
    valid request is flagged schema-violating (schemathesis/schemathesis#2983: CI's seeds
    1796226859 and another flagged `POST runs/{id}/replay/`, which has no body and an
    unconstrained string id). The examples, coverage and fuzzing phases check invalid input on
    every operation; the stateful phase checks the chains and what they answer."""
    meta = case.meta
    if meta is not None and meta.phase.name == TestPhase.STATEFUL:
        return None
    if response.status_code == 413:  # a body over the size limit, refused unread (config/parsers.py): a
        return None  # rejection schemathesis's list leaves out (CI's seed 1796435021, 2 MB to payroll/trial/)
    return negative_data_rejection(ctx, response, case)
