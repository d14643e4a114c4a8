"""Schemathesis hooks for tests/integration/test_schema_fuzz.py (loaded by the
`schemathesis` process through SCHEMATHESIS_HOOKS; pytest does not collect it).

Every request carries the fuzzing user's API token (KEEL_FUZZ_TOKEN). The two
operations that revoke tokens (`DELETE auth/token/`, `POST auth/token/revoke-all/`)
would sign the fuzzer itself out half-way, so each of their cases logs in a second
user (KEEL_FUZZ_REVOKER) and revokes that user's fresh token instead: both
operations are still exercised for real, on every case."""
from __future__ import annotations

import json
import os
import urllib.request

import schemathesis

REVOKING = {("DELETE", "/api/v1/auth/token/"), ("POST", "/api/v1/auth/token/revoke-all/")}


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
