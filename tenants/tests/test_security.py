"""Hostile input and account security, fast: the id and number parsers, the JSON
parser's limits, one error shape, expiring and revocable tokens, log-in
throttling, production settings, response headers and the websocket Origin."""
from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from axes.models import AccessAttempt, AccessFailureLog
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from knox.models import AuthToken

from config.api import DomainError
from config.forms import InvalidNumber, id_parse, int_parse, number_parse
from config.ids import MAX_ID
from config.parsers import json_depth
from config.security import origin_tuple, websocket_origin_allowed
from payroll.models import PayrollGroup
from timeline.models import Conversation

ROOT = Path(__file__).resolve().parents[2]
PROBLEM = "application/problem+json"


def token_post(username: str, password: str = "keel-demo", address: str = "10.0.0.1"):
    return Client().post("/api/v1/auth/token/", {"username": username, "password": password},
                         content_type="application/json", REMOTE_ADDR=address)


def token_for(username: str) -> str:
    response = token_post(username)
    assert response.status_code == 200, response.content
    return response.json()["token"]


def api(token: str) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Token {token}")


def form_login(username: str, password: str = "keel-demo", address: str = "10.0.0.1"):
    client = Client(REMOTE_ADDR=address)
    return client, client.post("/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


# --- id_parse -----------------------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [("1", 1), ("4821093377", 4821093377), (" 42 ", 42), (7, 7),
                                             (str(MAX_ID), MAX_ID)])
def test_id_parse_reads_ascii_digits_and_ints(value, expected):
    assert id_parse(value) == expected


@pytest.mark.parametrize("value", ["²", "12²", "٣", "１２", "0", "-1", str(MAX_ID + 1), "9" * 400, "1e3", "12ab", "",
                                   "0x1f", True, False, 1.5, None, [], {"id": 1}, 0, -5, 2**63])
def test_id_parse_refuses_anything_else_with_a_400_that_says_what_an_id_is(value):
    with pytest.raises(DomainError) as caught:
        id_parse(value, what="The template id")
    assert caught.value.status_code == 400 and caught.value.code == "invalid_id"
    assert caught.value.message.startswith("The template id must be an id")


# --- number_parse -------------------------------------------------------------------------

@pytest.mark.parametrize("text, places, expected", [("8", 0, Decimal(8)), ("1,000", 0, Decimal(1000)),
                                                    ("0.5", 2, Decimal("0.5")), ("2.50", 1, Decimal("2.5")),
                                                    (" 12 ", 0, Decimal(12))])
def test_number_parse_reads_plain_decimal_text(text, places, expected):
    assert number_parse(text, what="Hours", minimum=0, maximum=10_000, places=places) == expected


@pytest.mark.parametrize("text", ["inf", "-inf", "Infinity", "nan", "1e300", "1E3", "²", "٣", "0x10", "1.5.1",
                                  "10001", "-1", "0.001", "9" * 25, "1_000", "--1", "+"])
def test_number_parse_refuses_infinite_huge_unicode_and_out_of_range_numbers(text):
    with pytest.raises(InvalidNumber) as caught:
        number_parse(text, what="The deadline", minimum=0, maximum=10_000, places=2)
    assert caught.value.status_code == 400
    assert caught.value.message == "The deadline must be a number with at most 2 decimals from 0 to 10000."


def test_number_parse_treats_blank_as_absent_unless_required():
    assert number_parse("  ", what="Limit", minimum=0, maximum=5) is None
    with pytest.raises(InvalidNumber, match="Limit is required"):
        number_parse("", what="Limit", minimum=0, maximum=5, required=True)
    assert int_parse("3", what="Limit", minimum=0, maximum=5) == 3


# --- The JSON parser ----------------------------------------------------------------------

def test_json_depth_ignores_brackets_inside_strings():
    assert json_depth('{"a": ["[[[", {"b": "]]]\\"["}]}') == 3
    assert json_depth("[" * 100_000) == 100_000


@pytest.mark.django_db
def test_deeply_nested_json_on_the_token_endpoint_is_a_clear_400():
    body = "[" * 50_000 + "]" * 50_000
    response = Client().post("/api/v1/auth/token/", body, content_type="application/json")
    assert response.status_code == 400 and response["Content-Type"] == PROBLEM
    problem = response.json()
    assert problem["code"] == "json_too_deep" and "more than 32 levels deep" in problem["detail"]


def test_deeply_nested_json_on_an_authenticated_endpoint_writes_nothing(demo):
    client = Client()
    client.force_login(get_user_model().objects.get(username="alice"))
    before = Conversation.objects.count()
    response = client.post("/api/v1/conversations/", '{"title": ' + "[" * 5000 + "]" * 5000 + "}",
                           content_type="application/json")
    assert response.status_code == 400 and response.json()["code"] == "json_too_deep"
    assert Conversation.objects.count() == before


@pytest.mark.django_db
def test_an_oversized_json_body_is_413_and_nan_is_400():
    big = json.dumps({"username": "x" * (1024 * 1024 + 10), "password": "y"})
    response = Client().post("/api/v1/auth/token/", big, content_type="application/json")
    assert response.status_code == 413 and response.json()["code"] == "payload_too_large"
    response = Client().post("/api/v1/auth/token/", '{"username": NaN, "password": "x"}',
                             content_type="application/json")
    assert response.status_code == 400 and "NaN" in response.json()["detail"]


def test_an_upload_past_the_limit_is_stopped_while_it_streams_in(demo):
    from django.core.files.uploadedfile import SimpleUploadedFile

    token = token_for("alice")
    conversation = api(token).post("/api/v1/conversations/", {}, content_type="application/json").json()["id"]
    before = Conversation.objects.count()
    response = api(token).post(f"/api/v1/conversations/{conversation}/messages/",
                               {"text": "hi", "attachment": SimpleUploadedFile("t.csv", b"x" * (6 * 1024 * 1024))})
    assert response.status_code == 413  # past the chat's cap (its largest attachment kind, 5 MB + the form)
    assert Conversation.objects.count() == before


# --- One error shape ----------------------------------------------------------------------

@pytest.mark.django_db
def test_a_validation_error_is_a_problem_with_the_fields_in_errors():
    response = Client().post("/api/v1/auth/token/", {"username": "alice"}, content_type="application/json")
    assert response.status_code == 400 and response["Content-Type"] == PROBLEM
    problem = response.json()
    assert problem["type"] == "urn:keel:problem:invalid" and problem["title"] == "Bad Request"
    assert problem["status"] == 400 and problem["code"] == "invalid"
    assert problem["detail"].startswith("Invalid request. password:") and "password" in problem["errors"]


@pytest.mark.django_db
def test_unknown_api_paths_and_anonymous_calls_answer_problems():
    missing = Client().get("/api/v1/no-such-thing/")
    assert missing.status_code == 404 and missing["Content-Type"] == PROBLEM
    assert missing.json()["code"] == "not_found" and missing.json()["status"] == 404
    anonymous = Client().get("/api/v1/me/")
    assert anonymous.status_code in (401, 403) and anonymous.json()["code"] == "not_authenticated"


def test_a_domain_errors_extra_keys_ride_along(demo):
    # A bad attachment's problem keeps the line the person has to fix.
    from django.core.files.uploadedfile import SimpleUploadedFile

    token = token_for("alice")
    conversation = api(token).post("/api/v1/conversations/", {}, content_type="application/json").json()["id"]
    response = api(token).post(f"/api/v1/conversations/{conversation}/messages/",
                               {"text": "set up payroll", "attachment": SimpleUploadedFile("t.csv", b"id\n1\n")})
    problem = response.json()
    assert response.status_code == 400 and problem["line"] == 1 and problem["code"] == "attachment_header"
    assert problem["type"] == "urn:keel:problem:attachment_header" and problem["detail"].startswith("Line 1:")


# --- The schema ---------------------------------------------------------------------------

def test_the_schema_needs_a_log_in_and_names_each_body_once(demo):
    assert Client().get("/api/schema/?format=json").status_code in (401, 403)
    schema = api(token_for("dora")).get("/api/schema/?format=json").json()
    components = schema["components"]["schemas"]
    # Before, every nested InputSerializer was one component "Input" ({title}).
    assert "Input" not in components
    assert "text" in components["MessageInput"]["properties"]
    assert "blueprint" in components["RunListCreateInput"]["properties"]
    post = schema["paths"]["/api/v1/runs/"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert post["$ref"].endswith("/RunListCreateInput")
    members = schema["paths"]["/api/v1/members/"]["get"]["responses"]["200"]["content"]["application/json"]
    assert members["schema"]["$ref"].endswith("/MemberList")  # {"results": […]}, as the endpoint answers


# --- Tokens -------------------------------------------------------------------------------

def test_each_log_in_gets_its_own_expiring_token(demo):
    first, second = token_post("bob").json(), token_post("bob").json()
    assert first["token"] != second["token"]
    expiry = timezone.datetime.fromisoformat(first["expiry"].replace("Z", "+00:00"))
    assert timezone.now() + timedelta(hours=9) < expiry <= timezone.now() + timedelta(hours=10, minutes=1)
    assert api(first["token"]).get("/api/v1/me/").json()["username"] == "bob"


def test_an_expired_token_is_refused(demo):
    token = token_for("bob")
    AuthToken.objects.filter(user__username="bob").update(expiry=timezone.now() - timedelta(seconds=1))
    response = api(token).get("/api/v1/me/")
    assert response.status_code == 401 and response.json()["detail"] == "Invalid token."


def test_delete_revokes_the_presented_token_only(demo):
    kept, revoked = token_for("bob"), token_for("bob")
    assert api(revoked).delete("/api/v1/auth/token/").status_code == 204
    assert api(revoked).get("/api/v1/me/").status_code == 401
    assert api(kept).get("/api/v1/me/").status_code == 200
    assert Client().delete("/api/v1/auth/token/").status_code == 401  # nothing presented, nothing revoked


def test_sign_out_everywhere_by_api_revokes_every_token_and_session(demo):
    browser, _ = form_login("bob")
    one, two = token_for("bob"), token_for("bob")
    alices = token_for("alice")
    response = api(one).post("/api/v1/auth/token/revoke-all/")
    assert response.status_code == 200 and response.json() == {"tokens_revoked": 2, "sessions_ended": 1}
    assert api(two).get("/api/v1/me/").status_code == 401
    assert browser.get("/").status_code == 302  # back to the log-in page
    assert api(alices).get("/api/v1/me/").status_code == 200  # other users unaffected


def test_the_home_pages_button_signs_out_everywhere(demo):
    browser, _ = form_login("ada")
    other_browser, _ = form_login("ada")
    token = token_for("ada")
    page = browser.get("/").content.decode()
    assert 'data-testid="sign-out-everywhere"' in page
    response = browser.post("/sign-out-everywhere/", follow=True)
    assert "Signed out everywhere: 2 sessions ended, 1 API token revoked." in response.content.decode()
    assert other_browser.get("/").status_code == 302 and browser.get("/").status_code == 302
    assert api(token).get("/api/v1/me/").status_code == 401


def test_logging_out_in_the_browser_revokes_the_users_tokens(demo):
    browser, _ = form_login("bob")
    token = token_for("bob")
    assert browser.post("/logout/").status_code == 302
    assert api(token).get("/api/v1/me/").status_code == 401


def test_a_password_change_revokes_tokens_and_validators_refuse_weak_passwords(demo):
    browser, _ = form_login("bob")
    token = token_for("bob")
    weak = browser.post("/password/", {"old_password": "keel-demo", "new_password1": "password123",
                                       "new_password2": "password123"})
    assert weak.status_code == 200 and "too common" in weak.content.decode()
    assert api(token).get("/api/v1/me/").status_code == 200  # nothing changed yet
    strong = "tidal-Orchard-73-quay"
    done = browser.post("/password/", {"old_password": "keel-demo", "new_password1": strong,
                                       "new_password2": strong}, follow=True)
    assert "Password changed" in done.content.decode()
    assert api(token).get("/api/v1/me/").status_code == 401
    assert token_post("bob", strong).status_code == 200


def test_a_password_set_anywhere_else_revokes_tokens_too(demo):
    token = token_for("oscar")
    oscar = get_user_model().objects.get(username="oscar")
    oscar.set_password("a-new-long-passphrase")
    oscar.save()
    assert api(token).get("/api/v1/me/").status_code == 401


def test_a_token_header_that_is_not_utf8_is_a_401_not_a_500(demo):
    response = Client(HTTP_AUTHORIZATION="Token \xff\xfe").get("/api/v1/me/")
    assert response.status_code == 401


# --- Log-in throttling --------------------------------------------------------------------

def rewind(seconds: float) -> None:
    """As if every recorded failure had happened `seconds` earlier."""
    for row in AccessFailureLog.objects.all():
        AccessFailureLog.objects.filter(id=row.id).update(attempt_time=row.attempt_time - timedelta(seconds=seconds))


def test_five_wrong_passwords_from_one_address_lock_the_account_there_only(demo):
    for _ in range(4):
        assert form_login("alice", "wrong", address="10.1.0.1")[1].status_code == 400
    assert form_login("alice", "wrong", address="10.1.0.1")[1].status_code == 429  # the fifth locks
    client, response = form_login("alice", address="10.1.0.1")  # the right password, the same address
    assert response.status_code == 429 and "_auth_user_id" not in client.session
    assert "Too many failed log-ins" in response.content.decode()
    assert int(response["Retry-After"]) == 900
    rewind(2)  # the account's delay elsewhere (a second after the fifth failure) is over
    assert form_login("alice", address="10.1.0.99")[1].status_code == 302  # alice at her own desk
    assert form_login("bob", address="10.1.0.1")[1].status_code == 302  # other users unaffected


def test_failures_from_many_addresses_slow_the_account_and_never_lock_it(demo):
    """Anyone may send wrong passwords for an approver or the admin from many addresses: the
    account waits a growing delay between attempts (at most a minute), never a lock."""
    for i in range(4):
        assert token_post("bob", "wrong", address=f"10.5.0.{i}").status_code == 400
    assert token_post("bob", "wrong", address="10.5.0.4").status_code == 429  # the fifth: a second's wait
    delayed = token_post("bob", address="10.5.0.99")
    assert delayed.status_code == 429 and delayed["Retry-After"] == "1"
    assert "1 seconds" in delayed.json()["detail"]
    rewind(2)
    assert token_post("bob", "wrong", address="10.5.0.5").status_code == 429  # the sixth: two seconds
    assert token_post("bob", address="10.5.0.99")["Retry-After"] == "2"
    for n in range(7, 20):  # an attacker who waits out each delay: it doubles, up to a minute
        rewind(61)
        token_post("bob", "wrong", address=f"10.5.0.{n}")
    assert token_post("bob", address="10.5.0.99")["Retry-After"] == "60"
    rewind(61)
    assert token_post("bob", address="10.5.0.99").status_code == 200


def test_the_token_endpoint_shares_the_count_and_answers_429(demo):
    for _ in range(3):
        form_login("carol-does-not-exist", "x")
        form_login("alice", "wrong", address="10.2.0.1")
    assert token_post("alice", "wrong", address="10.2.0.1").status_code == 400
    assert token_post("alice", "wrong", address="10.2.0.1").status_code == 429  # the fifth, counted with the form's
    response = token_post("alice", address="10.2.0.1")
    assert response.status_code == 429 and response["Content-Type"] == PROBLEM
    assert response.json()["code"] == "login_throttled" and response["Retry-After"] == "900"
    assert token_post("bob", address="10.2.0.1").status_code == 200


def test_an_address_spraying_many_accounts_is_locked_for_the_accounts_it_tried(demo, settings):
    settings.KEEL_LOGIN_ADDRESS_FAILURES = 12  # 30 in production; fewer log-ins keep the test quick
    for i in range(12):
        form_login(f"guess{i}", "wrong", address="10.3.0.1")
    assert token_post("guess0", address="10.3.0.1").status_code == 429  # one failure, below the account's limit
    # bob, behind the same address with no failures of his own, still gets in.
    assert token_post("bob", address="10.3.0.1").status_code == 200
    assert token_post("guess0", address="10.3.0.2").status_code == 400  # elsewhere, just a wrong account


def test_the_lock_lifts_after_the_cool_off(demo):
    for _ in range(5):
        token_post("dora", "wrong")
    assert token_post("dora").status_code == 429
    AccessFailureLog.objects.update(attempt_time=timezone.now() - timedelta(seconds=901))
    assert token_post("dora").status_code == 200


def test_a_success_forgets_the_accounts_failures_but_not_the_addresss(demo, settings):
    settings.KEEL_LOGIN_ADDRESS_FAILURES = 12
    for i in range(4):
        form_login("alice", "wrong", address="10.4.0.1")
    assert form_login("alice", address="10.4.0.1")[1].status_code == 302
    assert not AccessAttempt.objects.filter(username="alice").exists()
    for i in range(11):
        form_login(f"guess{i}", "wrong", address="10.4.0.2")
    assert form_login("bob", address="10.4.0.2")[1].status_code == 302  # does not clear guess* failures
    assert token_post("oscar", address="10.4.0.2", password="wrong").status_code == 429


# --- Production settings ------------------------------------------------------------------

# Settings only: a PostgreSQL address nobody connects to while settings load (without one, they
# would start the embedded PostgreSQL).
NO_DATABASE = {"DATABASE_URL": "postgres://keel@127.0.0.1:1/unused"}


def _settings_in_subprocess(env: dict[str, str], code: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("KEEL_", "SECRET_KEY", "DATABASE_URL",
                                                                        "REDIS_URL", "ALLOWED_HOSTS"))}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**base, "DJANGO_SETTINGS_MODULE": "config.settings", **NO_DATABASE, **env})


LOAD = "import django; django.setup(); from django.conf import settings as s; "


@pytest.mark.parametrize("env, words", [
    ({}, "demo key"),
    ({"SECRET_KEY": "keel-embedded-demo-key-not-for-production"}, "demo key"),
    ({"SECRET_KEY": "short"}, "too short"),
    pytest.param({"SECRET_KEY": "x" * 64 + secrets.token_hex(8), "KEEL_DEBUG": "1"}, "KEEL_DEBUG is on",
                 id="KEEL_DEBUG on"),
])
def test_production_refuses_to_start_on_the_demo_key_or_with_debug(env, words):
    result = _settings_in_subprocess({"KEEL_ENV": "production", **env}, LOAD + "print('started')")
    assert result.returncode != 0 and "started" not in result.stdout
    assert "KEEL_ENV=production refuses to start" in result.stderr and words in result.stderr


def test_behind_tls_cookies_are_secure_and_hsts_is_on():
    result = _settings_in_subprocess({"KEEL_TLS": "1"}, LOAD + "print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, "
                                     "s.SECURE_HSTS_SECONDS, s.SECURE_SSL_REDIRECT, s.SECURE_PROXY_SSL_HEADER)")
    assert result.stdout.split() == ["True", "True", "31536000", "True", "('HTTP_X_FORWARDED_PROTO',", "'https')"]


def test_check_deploy_is_clean_under_the_documented_production_environment():
    env = {"KEEL_ENV": "production", "SECRET_KEY": secrets.token_urlsafe(64), "KEEL_TLS": "1",
           "ALLOWED_HOSTS": "keel.example.com", "CSRF_TRUSTED_ORIGINS": "https://keel.example.com"}
    result = _settings_in_subprocess(env, "import sys; from django.core.management import execute_from_command_line;"
                                          "execute_from_command_line(['manage.py', 'check', '--deploy', "
                                          "'--fail-level', 'WARNING'])")
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


# --- Headers and pages --------------------------------------------------------------------

def test_pages_carry_a_strict_csp_and_a_permissions_policy(demo):
    client, _ = form_login("alice")
    response = client.get("/")
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "style-src 'self'" in policy and "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy
    assert "camera=()" in response["Permissions-Policy"]


INLINE = [(re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I), "an inline <script>"),
          (re.compile(r"<style\b", re.I), "a <style> block"),
          (re.compile(r"\sstyle=", re.I), "a style= attribute"),
          (re.compile(r"\son[a-z]+\s*=", re.I), "an inline event handler")]


def test_no_template_needs_unsafe_inline():
    found = [f"{path.relative_to(ROOT)}: {what}" for path in (ROOT / "templates").rglob("*.html")
             for pattern, what in INLINE if pattern.search(path.read_text())]
    assert found == []


# --- Websocket Origin ---------------------------------------------------------------------

def scope(origin: str | None, host: str = "127.0.0.1:8000", scheme: str = "ws") -> dict:
    headers = [(b"host", host.encode())] + ([(b"origin", origin.encode())] if origin is not None else [])
    return {"type": "websocket", "scheme": scheme, "headers": headers}


@pytest.mark.parametrize("origin, host, allowed", [
    ("http://127.0.0.1:8000", "127.0.0.1:8000", True),
    ("http://localhost:8000", "localhost:8000", True),
    ("http://127.0.0.1:9000", "127.0.0.1:8000", False),    # another port of the same machine
    ("https://127.0.0.1:8000", "127.0.0.1:8000", False),   # another scheme
    ("http://127.0.0.1", "127.0.0.1:8000", False),         # port 80 is not 8000
    ("http://evil.example", "127.0.0.1:8000", False),
    ("http://evil.example:8000", "evil.example:8000", False),  # a host not in ALLOWED_HOSTS
    ("null", "127.0.0.1:8000", False),
    (None, "127.0.0.1:8000", False),
])
def test_the_websocket_origin_must_match_scheme_host_and_port(origin, host, allowed):
    assert websocket_origin_allowed(scope(origin, host)) is allowed


def test_a_csrf_trusted_origin_may_open_a_websocket(settings):
    settings.CSRF_TRUSTED_ORIGINS = ["https://console.example.com"]
    assert websocket_origin_allowed(scope("https://console.example.com", "127.0.0.1:8000"))
    assert not websocket_origin_allowed(scope("https://console.example.com:8443", "127.0.0.1:8000"))
    assert origin_tuple("https://console.example.com:443") == ("https", "console.example.com", 443)


@pytest.mark.asyncio
async def test_the_asgi_app_refuses_a_socket_from_another_port():
    from channels.testing import WebsocketCommunicator

    from config.asgi import application

    communicator = WebsocketCommunicator(application, "/ws/tenant/", headers=[
        (b"origin", b"http://127.0.0.1:9999"), (b"host", b"127.0.0.1:8000")])
    connected, _ = await communicator.connect()
    assert not connected


def test_the_demo_data_is_untouched_by_all_of_the_above(demo):
    """Throttling and refusals write only axes' own rows, never business data."""
    groups = PayrollGroup.objects.count()
    for _ in range(6):
        token_post("alice", "wrong")
    Client().post("/api/v1/auth/token/", "[" * 10_000, content_type="application/json")
    assert PayrollGroup.objects.count() == groups


def test_the_500_handler_answers_api_callers_a_problem_and_pages_the_html_page():
    from django.test import RequestFactory

    from config.api import api_server_error

    api_error = api_server_error(RequestFactory().get("/api/v1/runs/"))
    assert api_error.status_code == 500 and api_error["Content-Type"] == PROBLEM
    assert json.loads(api_error.content)["code"] == "server_error"
    assert api_server_error(RequestFactory().get("/console/"))["Content-Type"].startswith("text/html")
