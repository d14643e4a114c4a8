"""Hostile input against the production topology (PostgreSQL, Redis, a `celery
worker`, the ASGI server): each hostile input measured, as a test that
fails on a 5xx, on any write to the business tables, or on an answer slower than
a same-run baseline request by more than a ratio (never a wall-clock number).

Addresses: the Keel under test trusts X-Forwarded-For from 127.0.0.1 (KEEL_TRUSTED_PROXIES,
as behind a local proxy), so each throttling test speaks from an address of its own and
locks out no other test."""
from __future__ import annotations

import json
import os
import secrets
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

import psycopg
import pytest

from tests.support import ROOT, Api, Session, keel_start, keel_stop
from tests.workbooks import xlsx_bomb

COOLOFF_SECONDS = 8
# A hostile request may cost this many baseline requests, no more. Generous, because
# a busy machine is noisy; the failures it guards against were 100x–1000x (a 38 s bomb).
SLOWER_AT_MOST = 10
# Tables a refused request may touch: log-in bookkeeping, never business data.
BOOKKEEPING = ("axes_", "django_session", "knox_authtoken", "auth_user", "django_celery")


pytestmark = pytest.mark.keel("production", {"KEEL_LOGIN_COOLOFF_SECONDS": str(COOLOFF_SECONDS),
                                          "KEEL_TRUSTED_PROXIES": "127.0.0.1"}, workers=1)


# --- Helpers ------------------------------------------------------------------------------

def http(keel, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None,
         address: str | None = None, timeout: float = 120) -> tuple[int, dict[str, str], bytes]:
    headers = dict(headers or {})
    if address:
        headers["X-Forwarded-For"] = address
    req = urllib.request.Request(keel.base_url + path, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def timed(call) -> tuple[object, float]:
    started = time.perf_counter()
    result = call()
    return result, time.perf_counter() - started


def median_seconds(call, times: int = 5) -> float:
    return statistics.median(timed(call)[1] for _ in range(times))


def business_state(keel) -> dict[str, str]:
    """A digest of every table except log-in bookkeeping: any insert, update or
    delete changes it."""
    with psycopg.connect(keel.env["DATABASE_URL"]) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")]
        state = {}
        for table in tables:
            if table.startswith(BOOKKEEPING):
                continue
            row = conn.execute(f'SELECT count(*), md5(coalesce(string_agg(t::text, \'|\' ORDER BY t::text), \'\')) '
                               f'FROM "{table}" t').fetchone()
            state[table] = f"{row[0]}:{row[1]}"
    return state


def assert_no_5xx(status: int, what: str) -> None:
    assert status < 500, f"{what} answered {status}"


def token_json(keel, username: str, password: str, address: str = "10.99.0.1") -> tuple[int, dict, dict]:
    status, headers, raw = http(keel, "POST", "/api/v1/auth/token/",
                                json.dumps({"username": username, "password": password}).encode(),
                                {"Content-Type": "application/json"}, address)
    return status, headers, json.loads(raw or b"null")


def form_log_in(keel, username: str, password: str, address: str) -> tuple[int, str]:
    """One log-in through the HTML form, as a browser sends it (CSRF cookie and token)."""
    jar = urllib.request.HTTPCookieProcessor()
    opener = urllib.request.build_opener(jar, _NoRedirect)
    opener.addheaders = [("X-Forwarded-For", address)]
    opener.open(keel.base_url + "/login/").read()
    csrf = next(c.value for c in jar.cookiejar if c.name == "csrftoken")
    body = urllib.parse.urlencode({"username": username, "password": password,
                                   "csrfmiddlewaretoken": csrf}).encode()
    try:
        with opener.open(urllib.request.Request(keel.base_url + "/login/", data=body,
                                                headers={"Referer": keel.base_url + "/login/"})) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # a successful log-in answers 302: report it as such
        return None


def multipart(filename: str, content: bytes, text: str) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    body = (f'--{boundary}\r\nContent-Disposition: form-data; name="text"\r\n\r\n{text}\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="attachment"; filename="{filename}"\r\n'
            f"Content-Type: application/octet-stream\r\n\r\n").encode() + content + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


# --- Deeply nested JSON -------------------------------------------------------------------

NESTED = ("[" * 50_000 + "]" * 50_000).encode()  # 100 KB: RecursionError (500) before


def test_deeply_nested_json_on_the_token_endpoint_is_a_quick_400_that_writes_nothing(keel):
    def shallow():  # the baseline: the same endpoint, a malformed body it refuses
        return http(keel, "POST", "/api/v1/auth/token/", b'{"username": ', {"Content-Type": "application/json"})

    baseline = median_seconds(shallow)
    before = business_state(keel)
    status, headers, raw = http(keel, "POST", "/api/v1/auth/token/", NESTED, {"Content-Type": "application/json"})
    assert_no_5xx(status, "nested JSON on auth/token/")
    problem = json.loads(raw)
    assert status == 400 and problem["code"] == "json_too_deep" and "more than 32 levels deep" in problem["detail"]
    assert headers["Content-Type"] == "application/problem+json"
    assert business_state(keel) == before
    # Timed as the baseline is, the median of five: one request alone can meet a stall of the machine's.
    seconds = median_seconds(lambda: http(keel, "POST", "/api/v1/auth/token/", NESTED,
                                          {"Content-Type": "application/json"}))
    assert seconds < SLOWER_AT_MOST * baseline, (seconds, baseline)


def test_deeply_nested_json_on_an_authenticated_endpoint_is_a_quick_400_that_writes_nothing(keel):
    alice = Api(keel.base_url, "alice")
    auth = {"Authorization": f"Token {alice.token}", "Content-Type": "application/json"}
    refused_run = json.dumps({"blueprint": "no_such_blueprint", "params": {}}).encode()
    baseline = median_seconds(lambda: http(keel, "POST", "/api/v1/runs/", refused_run, auth))
    nested = b'{"blueprint": "payroll_group_setup", "params": ' + NESTED + b"}"
    before = business_state(keel)
    status, _, raw = http(keel, "POST", "/api/v1/runs/", nested, auth)
    assert_no_5xx(status, "nested JSON on runs/")
    assert status == 400 and json.loads(raw)["code"] == "json_too_deep"
    assert business_state(keel) == before
    # Timed as the baseline is, the median of five: one request alone can meet a stall of the machine's.
    seconds = median_seconds(lambda: http(keel, "POST", "/api/v1/runs/", nested, auth))
    assert seconds < SLOWER_AT_MOST * baseline, (seconds, baseline)


def test_deeply_nested_json_on_the_messages_endpoint_is_a_400(keel):
    alice = Api(keel.base_url, "alice")
    _, conversation = alice.post("/api/v1/conversations/", {"title": "nested"})
    status, _, _ = http(keel, "POST", f"/api/v1/conversations/{conversation['id']}/messages/",
                        b'{"text": ' + NESTED + b"}",
                        {"Authorization": f"Token {alice.token}", "Content-Type": "application/json"})
    assert status == 400


# --- Ids that are not ids -----------------------------------------------------------------

def test_a_unicode_digit_template_id_is_a_400_that_writes_nothing(keel):
    bob = Api(keel.base_url, "bob")
    before = business_state(keel)
    for template_id in ("²", "٣", "１２", "9" * 40, "-1"):
        status, body = bob.request("POST", "/api/v1/payroll/groups/", {"template_id": template_id, "name": "G"},
                                   headers={"Idempotency-Key": uuid.uuid4().hex})
        assert_no_5xx(status, f"template_id={template_id!r}")
        assert status == 400 and "not an id" in body["detail"], body
    assert business_state(keel) == before


def test_a_unicode_digit_conversation_id_is_a_400(keel):
    alice = Api(keel.base_url, "alice")
    status, _ = alice.post("/api/v1/runs/", {"blueprint": "payroll_group_setup", "conversation": "²",
                                             "params": {"request": "x", "group_name": "G"}})
    assert status == 400


# --- The XLSX bomb through the messages endpoint ------------------------------------------

def test_an_xlsx_bomb_is_refused_as_fast_as_a_small_bad_file_and_stalls_no_one(keel):
    alice = Api(keel.base_url, "alice")
    _, conversation = alice.post("/api/v1/conversations/", {"title": "bomb"})
    path = f"/api/v1/conversations/{conversation['id']}/messages/"
    text = "set up a monthly payroll group for our Shanghai sales team with commission"

    def upload(filename: str, content: bytes):
        body, content_type = multipart(filename, content, text)
        return http(keel, "POST", path, body, {"Authorization": f"Token {alice.token}", "Content-Type": content_type})

    small_bad = b"employee_no\nD-9999\n"  # read to the end, refused (no such employee)
    baseline = median_seconds(lambda: upload("team.csv", small_bad))
    assert upload("team.csv", small_bad)[0] == 400

    bomb = xlsx_bomb()
    before = business_state(keel)
    (status, headers, raw), seconds = timed(lambda: upload("team.xlsx", bomb))
    assert_no_5xx(status, "the XLSX bomb")
    problem = json.loads(raw)
    assert status == 400 and problem["code"] == "attachment_too_large" and "unpacks to" in problem["detail"]
    assert business_state(keel) == before
    assert seconds < SLOWER_AT_MOST * baseline, (seconds, baseline)

    # Four bombs at once leave an unrelated request as quick as it was.
    me = lambda: http(keel, "GET", "/api/v1/me/", headers={"Authorization": f"Token {alice.token}"})  # noqa: E731
    quiet = median_seconds(me)
    threads = [threading.Thread(target=upload, args=("team.xlsx", bomb)) for _ in range(4)]
    for thread in threads:
        thread.start()
    busy = median_seconds(me, times=3)
    for thread in threads:
        thread.join(timeout=120)
    assert busy < SLOWER_AT_MOST * quiet, (busy, quiet)
    assert business_state(keel) == before


# --- Fifty wrong passwords ----------------------------------------------------------------

def test_fifty_wrong_passwords_through_the_form_lock_the_account_there_not_the_office_nor_the_owner(keel):
    statuses = [form_log_in(keel, "alice", "wrong", "10.50.0.1")[0] for _ in range(50)]
    assert_no_5xx(max(statuses), "wrong passwords on the form")
    assert statuses[:4] == [400] * 4 and set(statuses[4:]) == {429}
    status, page = form_log_in(keel, "alice", "keel-demo", "10.50.0.1")  # the right password, the guesser's address
    assert status == 429 and "Too many failed log-ins" in page
    # A colleague behind the same address, with no failures of their own, gets in.
    assert form_log_in(keel, "bob", "keel-demo", "10.50.0.1")[0] == 302
    assert form_log_in(keel, "bob", "keel-demo", "10.50.0.3")[0] == 302
    time.sleep(1.1)  # the account's delay elsewhere: a second after its fifth failure
    assert form_log_in(keel, "alice", "keel-demo", "10.50.0.2")[0] == 302  # alice at her own desk


def test_fifty_wrong_passwords_through_the_token_endpoint_lock_the_pair_until_the_cool_off(keel):
    answers = [token_json(keel, "dora", "wrong", "10.51.0.1") for _ in range(50)]
    statuses = [status for status, _, _ in answers]
    assert_no_5xx(max(statuses), "wrong passwords on auth/token/")
    assert statuses[:4] == [400] * 4 and set(statuses[4:]) == {429}
    status, headers, problem = token_json(keel, "dora", "keel-demo", "10.51.0.1")
    assert status == 429 and problem["code"] == "login_throttled"
    assert 0 < int(headers["Retry-After"]) <= COOLOFF_SECONDS  # what is left of the first lock
    assert token_json(keel, "ada", "keel-demo", "10.51.0.3")[0] == 200  # other users unaffected
    time.sleep(int(headers["Retry-After"]) + 1)  # the refused attempts did not extend it
    assert token_json(keel, "dora", "keel-demo", "10.51.0.1")[0] == 200


def test_wrong_passwords_from_many_addresses_lock_no_one_out():
    """Anyone may aim wrong passwords at an approver or the admin; and with no proxy configured
    (the default), X-Forwarded-For chooses no address."""
    keel = keel_start("production", {"KEEL_LOGIN_COOLOFF_SECONDS": str(COOLOFF_SECONDS)})
    try:
        statuses = [token_json(keel, "bob", "wrong", f"10.52.0.{i}")[0] for i in range(5)]
        assert statuses == [400] * 4 + [429]  # five "addresses" were one (127.0.0.1): its pair lock
        time.sleep(1.1)  # past the account's delay: what refuses now is the lock on 127.0.0.1
        status, headers, _ = token_json(keel, "bob", "keel-demo", "10.52.0.99")
        assert status == 429 and int(headers["Retry-After"]) > 2
    finally:
        keel_stop(keel)
    keel = keel_start("production", {"KEEL_LOGIN_COOLOFF_SECONDS": str(COOLOFF_SECONDS),
                                     "KEEL_TRUSTED_PROXIES": "127.0.0.1", "KEEL_LOGIN_DELAY_MAX_SECONDS": "2"})
    try:
        answers = [token_json(keel, "ada", "wrong", f"10.53.0.{i}") for i in range(20)]
        assert_no_5xx(max(status for status, _, _ in answers), "wrong passwords from many addresses")
        assert all(int(headers.get("Retry-After", "0")) <= 2 for _, headers, _ in answers)  # a delay, no lock
        time.sleep(2.5)
        assert token_json(keel, "ada", "keel-demo", "10.53.0.99")[0] == 200
    finally:
        keel_stop(keel)


# --- Tokens expire and are revoked --------------------------------------------------------

def test_a_token_expires_and_each_log_in_gets_a_new_one(keel):
    first, second = Api(keel.base_url, "bob"), Api(keel.base_url, "bob")
    assert first.token != second.token
    with psycopg.connect(keel.env["DATABASE_URL"]) as conn:  # ten hours from now, as if they had passed
        conn.execute("UPDATE knox_authtoken SET expiry = now() - interval '1 second' "
                     "WHERE token_key = %s", (first.token[:15],))
    assert first.request("GET", "/api/v1/me/")[0] == 401
    assert second.request("GET", "/api/v1/me/")[0] == 200


def test_delete_revokes_the_presented_token_and_revoke_all_the_rest(keel):
    one, two, three = (Api(keel.base_url, "ada") for _ in range(3))
    status, _ = one.request("DELETE", "/api/v1/auth/token/")
    assert status == 204 and one.request("GET", "/api/v1/me/")[0] == 401
    assert two.request("GET", "/api/v1/me/")[0] == 200
    status, body = two.post("/api/v1/auth/token/revoke-all/")
    assert status == 200 and body["tokens_revoked"] >= 2
    assert two.request("GET", "/api/v1/me/")[0] == 401 and three.request("GET", "/api/v1/me/")[0] == 401


# --- Headers, origins, production settings ------------------------------------------------

def test_pages_are_served_with_a_strict_policy_and_foreign_origins_get_no_socket(keel):
    import asyncio

    import websockets
    from websockets.exceptions import InvalidStatus

    status, headers, _ = http(keel, "GET", "/login/")
    assert status == 200 and "'unsafe-inline'" not in headers["Content-Security-Policy"]
    assert "script-src 'self'" in headers["Content-Security-Policy"] and "camera=()" in headers["Permissions-Policy"]

    cookie = Session(keel.base_url, "alice").cookie_header()  # a page elsewhere would ride on alice's cookies

    async def connect(origin: str):
        url = keel.base_url.replace("http://", "ws://") + "/ws/tenant/"
        async with websockets.connect(url, additional_headers={"Origin": origin, "Cookie": cookie}):
            return True

    port = int(keel.base_url.rsplit(":", 1)[1])
    with pytest.raises(InvalidStatus) as refused:
        asyncio.run(connect(f"http://127.0.0.1:{port + 1}"))  # same host, another port
    assert refused.value.response.status_code == 403
    assert asyncio.run(connect(keel.base_url))  # the page's own origin is let in


def _manage_check_deploy(env: dict[str, str]) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("KEEL_", "SECRET_KEY", "ALLOWED_HOSTS"))}
    return subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], cwd=ROOT,
                          env={**base, **env}, capture_output=True, text=True, timeout=120)


def test_production_refuses_the_demo_key_and_check_deploy_passes_the_documented_environment():
    refused = _manage_check_deploy({"KEEL_ENV": "production"})
    assert refused.returncode != 0 and "SECRET_KEY is the public demo key" in refused.stderr
    documented = _manage_check_deploy({"KEEL_ENV": "production", "SECRET_KEY": secrets.token_urlsafe(64),
                                       "KEEL_TLS": "1", "ALLOWED_HOSTS": "keel.example.com",
                                       "CSRF_TRUSTED_ORIGINS": "https://keel.example.com"})
    assert documented.returncode == 0, documented.stdout + documented.stderr
