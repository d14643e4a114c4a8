"""Bodies decoded safely and one error contract: a request's
charset names a text encoding Keel reads (UTF-8, or its subset US-ASCII) or it is a 415;
an oversized body is a 413, too many fields a 400 — a problem under /api/, Keel's error
page on the pages — and no error handler raises again."""
from __future__ import annotations

import bz2
import json
import tracemalloc

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, RequestFactory

from expenses.models import ExpenseClaim, Invoice
from timeline.models import Conversation

PROBLEM = "application/problem+json"
MB = 1024 * 1024
CREDENTIALS = b'{"username": "alice", "password": "keel-demo"}'
# Codecs Python's codecs.decode() knows that are no text encodings, or that turn a few
# bytes into many: each answered a 500 on every JSON endpoint.
NOT_TEXT = ["bz2", "zlib", "base64", "hex", "quopri", "rot13", "uu", "punycode"]
# Text encodings Keel does not read (JSON is UTF-8, RFC 8259 §8.1; Keel's pages are UTF-8,
# so browsers post UTF-8), and names no codec has.
OTHER_TEXT = ["utf-16", "utf-32", "latin-1", "cp500", "koi8-r", "no-such-charset"]


@pytest.fixture(scope="module")
def bomb() -> bytes:
    """The issue's probe: bz2 of 200 MB of "[" (177 bytes)."""
    compressor = bz2.BZ2Compressor(9)
    chunk = b"[" * MB
    body = b"".join(compressor.compress(chunk) for _ in range(200)) + compressor.flush()
    assert len(body) < 200
    return body


def token_for(username: str) -> str:
    response = Client().post("/api/v1/auth/token/", {"username": username, "password": "keel-demo"},
                             content_type="application/json")
    assert response.status_code == 200, response.content
    return response.json()["token"]


def api(username: str) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Token {token_for(username)}", raise_request_exception=True)


def post_raw(client: Client, path: str, body: bytes, content_type: str, **extra):
    # Client.post re-encodes a body to the content type's charset; generic() sends the bytes.
    return client.generic("POST", path, body, content_type=content_type, **extra)


def assert_problem(response, status: int, code: str | None = None) -> dict:
    assert response.status_code == status, (response.status_code, response.content[:300])
    assert response["Content-Type"] == PROBLEM, response["Content-Type"]
    problem = response.json()
    assert problem["status"] == status and problem["detail"]
    if code:
        assert problem["code"] == code, problem
    return problem


def assert_error_page(response, status: int, words: str) -> str:
    assert response.status_code == status, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("text/html"), response["Content-Type"]
    page = response.content.decode()
    assert 'data-testid="error-page"' in page and words in page, page[:600]
    return page


# --- Charsets -------------------------------------------------------------------------------

@pytest.mark.django_db
def test_the_bz2_bomb_is_a_415_unread_without_growing_memory(bomb, monkeypatch):
    """Refused by its declared charset before a byte of it is expanded: nothing
    decompresses it, so it costs neither time nor memory."""
    expanded: list[int] = []
    real_decompress, real_decompressor = bz2.decompress, bz2.BZ2Decompressor
    monkeypatch.setattr(bz2, "decompress", lambda data, *a: expanded.append(len(data)) or real_decompress(data, *a))
    monkeypatch.setattr(bz2, "BZ2Decompressor", lambda *a: expanded.append(-1) or real_decompressor(*a))
    client = Client()
    tracemalloc.start()
    try:
        response = post_raw(client, "/api/v1/auth/token/", bomb, "application/json; charset=bz2")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    problem = assert_problem(response, 415, "unsupported_charset")
    assert "bz2" in problem["detail"] and "UTF-8" in problem["detail"]
    assert expanded == [], "the body was decompressed"
    assert peak < 20 * MB, f"{peak / MB:.1f} MB"


@pytest.mark.parametrize("charset", NOT_TEXT + OTHER_TEXT)
def test_a_charset_keel_does_not_read_is_a_415_on_the_anonymous_token_endpoint(db, charset):
    response = post_raw(Client(), "/api/v1/auth/token/", CREDENTIALS, f"application/json; charset={charset}")
    assert_problem(response, 415, "unsupported_charset")


@pytest.mark.parametrize("charset", NOT_TEXT)
def test_a_charset_keel_does_not_read_is_a_415_on_every_kind_of_endpoint(demo, charset):
    alice = api("alice")
    before = Conversation.objects.count()
    assert_problem(post_raw(alice, "/api/v1/conversations/", b'{"title": "x"}',
                            f"application/json; charset={charset}"), 415, "unsupported_charset")
    conversation = alice.post("/api/v1/conversations/", {}, content_type="application/json").json()["id"]
    assert_problem(post_raw(alice, f"/api/v1/conversations/{conversation}/messages/", b"--x--\r\n",
                            f"multipart/form-data; boundary=x; charset={charset}"), 415, "unsupported_charset")
    assert Conversation.objects.count() == before + 1


@pytest.mark.asyncio
@pytest.mark.parametrize("charset", ["punycode", "bz2", "hex"])
async def test_a_query_labelled_with_a_charset_keel_does_not_read_is_a_415_not_a_500(charset):
    """Django reads the query string in the request's charset while it builds the request,
    before any middleware: through the ASGI application Keel serves."""
    from channels.testing import HttpCommunicator

    from config.asgi import application

    response = await HttpCommunicator(application, "GET", "/api/v1/runs/?status=running",
                                      headers=[(b"host", b"testserver"),
                                               (b"content-type", f"text/plain; charset={charset}".encode())]
                                      ).get_response(timeout=10)
    assert response["status"] == 415, response
    assert dict((k.lower(), v) for k, v in response["headers"])[b"content-type"] == PROBLEM.encode()
    assert json.loads(response["body"])["code"] == "unsupported_charset"


@pytest.mark.parametrize("charset", ["utf-8", "UTF-8", "utf8", '"utf-8"', "us-ascii", "ascii"])
def test_utf8_under_any_of_its_names_and_ascii_are_read(db, charset):
    response = post_raw(Client(), "/api/v1/auth/token/", b'{"username": "nobody", "password": "x"}',
                        f"application/json; charset={charset}")
    assert_problem(response, 400, "invalid_credentials")


def test_an_ascii_body_with_a_byte_past_ascii_is_a_400(db):
    response = post_raw(Client(), "/api/v1/auth/token/", '{"username": "é", "password": "x"}'.encode(),
                        "application/json; charset=us-ascii")
    assert_problem(response, 400, "json_encoding")


def browser() -> Client:
    """A browser that has opened the log-in page: it holds a CSRF cookie, so Django's CSRF
    check reads the form of every POST it sends (without one it refuses unread)."""
    client = Client(enforce_csrf_checks=True)
    assert client.get("/login/").status_code == 200 and client.cookies.get("csrftoken")
    return client


@pytest.mark.parametrize("charset", ["bz2", "latin-1", "utf-16"])
def test_the_log_in_form_in_another_charset_is_the_415_page(db, charset):
    response = post_raw(browser(), "/login/", b"username=alice&password=keel-demo",
                        f"application/x-www-form-urlencoded; charset={charset}")
    assert_error_page(response, 415, "UTF-8")


def test_a_page_form_that_says_utf8_in_other_words_is_read_as_utf8(demo):
    client = Client()
    response = post_raw(client, "/login/", b"username=alice&password=keel-demo",
                        "application/x-www-form-urlencoded; charset=UTF8")
    assert response.status_code == 302 and client.get("/").status_code == 200


def test_the_decoded_text_is_capped_while_it_is_decoded():
    from config.parsers import RequestTooLarge, text_decode

    assert text_decode("añb".encode(), "utf-8", max_chars=3) == "añb"
    with pytest.raises(RequestTooLarge):
        text_decode(b"a" * (4 * MB), "utf-8", max_chars=MB)


# --- Sizes and counts ----------------------------------------------------------------------

@pytest.mark.django_db
def test_a_json_body_over_2_mb_is_a_413_problem_not_an_html_400():
    big = json.dumps({"username": "x" * (3 * MB), "password": "y"})
    assert_problem(Client().post("/api/v1/auth/token/", big, content_type="application/json"), 413,
                   "payload_too_large")


def test_a_json_body_over_2_mb_on_an_authenticated_endpoint_is_a_413_problem(demo):
    before = Conversation.objects.count()
    response = api("alice").post("/api/v1/conversations/", json.dumps({"title": "x" * (3 * MB)}),
                                 content_type="application/json")
    assert_problem(response, 413, "payload_too_large")
    assert Conversation.objects.count() == before


def test_a_multipart_request_with_20000_fields_is_a_400_problem(demo):
    alice = api("alice")
    conversation = alice.post("/api/v1/conversations/", {}, content_type="application/json").json()["id"]
    fields = {f"f{i}": "1" for i in range(20_000)} | {"text": "hello"}
    problem = assert_problem(alice.post(f"/api/v1/conversations/{conversation}/messages/", fields), 400,
                             "too_many_fields")
    assert "1000" in problem["detail"]


def test_a_json_endpoint_sent_a_form_with_20000_fields_is_still_a_problem(db):
    response = Client().post("/api/v1/auth/token/", {f"f{i}": "1" for i in range(20_000)})
    assert response.status_code in (400, 415) and response["Content-Type"] == PROBLEM


def test_a_log_in_form_with_20000_fields_is_the_400_page(db):
    body = "&".join(f"f{i}=1" for i in range(20_000)).encode()
    response = post_raw(browser(), "/login/", body, "application/x-www-form-urlencoded")
    assert_error_page(response, 400, "more than 1000 fields")


def test_a_page_form_over_2_mb_is_the_413_page(db):
    body = b"username=" + b"x" * (3 * MB)
    response = post_raw(browser(), "/login/", body, "application/x-www-form-urlencoded")
    assert_error_page(response, 413, "larger than 2048 KB")


def test_a_big_multipart_post_to_a_page_that_takes_no_upload_is_the_413_page(db):
    response = browser().post("/login/", {"username": "alice", "file": SimpleUploadedFile("a.bin", b"x" * (3 * MB))})
    assert_error_page(response, 413, "larger than 2048 KB")


def test_a_multipart_post_with_20000_fields_to_a_page_is_the_400_page(db):
    response = browser().post("/login/", {f"f{i}": "1" for i in range(20_000)})
    assert_error_page(response, 400, "more than 1000 fields")


def test_a_big_multipart_post_to_an_unknown_page_is_the_404_page(db):
    """Django's 404 handler checks CSRF too, reading the form it was not asked about."""
    response = browser().post("/no-such-page/", {"file": SimpleUploadedFile("a.bin", b"x" * (3 * MB))})
    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")


class BrokenStream:
    """A body whose connection breaks off while it is read (Django: UnreadablePostError)."""

    def read(self, *args):
        raise OSError("connection reset by peer")

    readline = read


def test_a_body_that_cannot_be_read_to_its_end_is_a_400_problem(db):
    response = Client().generic("POST", "/api/v1/auth/token/", b"x" * 100, content_type="application/json",
                                **{"wsgi.input": BrokenStream()})
    assert_problem(response, 400, "body_unreadable")


def test_a_page_form_that_cannot_be_read_to_its_end_is_the_400_page(db):
    response = browser().generic("POST", "/login/", b"x" * 100, content_type="application/x-www-form-urlencoded",
                                 **{"wsgi.input": BrokenStream()})
    assert_error_page(response, 400, "send it again")


# --- The invoice route: 5 MB, through the API too ------------------------------------------

PDF_HEAD = b"%PDF-1.4\n1 0 obj<<>>endobj\n"


def pdf_of(size: int) -> bytes:
    tail = b"\ntrailer<<>>\n%%EOF\n"
    return PDF_HEAD + b"0" * (size - len(PDF_HEAD) - len(tail)) + tail


def a_claim(alice: Client) -> ExpenseClaim:
    response = alice.post("/api/v1/expenses/claims/", {"category": "lodging", "city": "Beijing",
                                                       "start_date": "2026-11-16", "nights": 2, "amount": "1400"},
                          content_type="application/json", HTTP_IDEMPOTENCY_KEY="claim-1")
    assert response.status_code == 201, response.content
    return ExpenseClaim.objects.get(id=int(response.json()["application_id"]))


def test_the_invoice_api_takes_a_4_mb_pdf_as_the_readme_and_the_pages_say(demo):
    alice = api("alice")
    claim = a_claim(alice)
    response = alice.post(f"/api/v1/expenses/claims/{claim.id}/invoices/",
                          {"file": SimpleUploadedFile("hotel.pdf", pdf_of(4 * MB), "application/pdf")},
                          HTTP_IDEMPOTENCY_KEY="invoice-1")
    assert response.status_code == 201, response.content[:300]
    assert Invoice.objects.get(claim=claim).size == 4 * MB


def test_the_invoice_api_refuses_6_mb_with_a_413_that_names_the_5_mb_limit(demo):
    alice = api("alice")
    claim = a_claim(alice)
    response = alice.post(f"/api/v1/expenses/claims/{claim.id}/invoices/",
                          {"file": SimpleUploadedFile("hotel.pdf", pdf_of(6 * MB), "application/pdf")},
                          HTTP_IDEMPOTENCY_KEY="invoice-2")
    assert "5 MB" in assert_problem(response, 413)["detail"]
    assert not Invoice.objects.filter(claim=claim).exists()


def test_the_staging_api_takes_a_4_mb_pdf_too(demo):
    response = api("alice").post("/api/v1/expenses/invoices/",
                                 {"file": SimpleUploadedFile("hotel.pdf", pdf_of(4 * MB), "application/pdf")})
    assert response.status_code == 201, response.content[:300]


def test_the_chat_keeps_the_cap_of_its_largest_attachment_kind(demo):
    # The messages API takes any kind of file a domain accepts in the chat (an invoice: 5 MB),
    # so its cap is that kind's; past it the request is refused while it streams in, and a
    # smaller file of a kind with a lower limit (an employee list: 1 MB) is refused by its kind.
    alice = api("alice")
    conversation = alice.post("/api/v1/conversations/", {}, content_type="application/json").json()["id"]
    response = alice.post(f"/api/v1/conversations/{conversation}/messages/",
                          {"text": "hi", "attachment": SimpleUploadedFile("t.csv", b"x" * (6 * MB))})
    assert_problem(response, 413)
    response = alice.post(f"/api/v1/conversations/{conversation}/messages/",
                          {"text": "hi", "attachment": SimpleUploadedFile("t.csv", b"x" * (3 * MB))})
    assert_problem(response, 400, "attachment_too_large")


# --- Handlers never raise again ------------------------------------------------------------

def broken_post():
    """A POST whose body Django refuses each time it is read (the form is not UTF-8), from
    a browser with a CSRF cookie (so a CSRF check reads the form)."""
    request = RequestFactory().generic("POST", "/console/", b"a=1",
                                       content_type="application/x-www-form-urlencoded; charset=latin-1")
    request.COOKIES["csrftoken"] = "k" * 32
    request.session = {}
    from django.contrib.auth.models import AnonymousUser

    request.user = AnonymousUser()
    return request


@pytest.mark.parametrize("handler, status", [("bad_request", 400), ("permission_denied", 403),
                                             ("api_not_found", 404)])
def test_the_page_handlers_answer_without_reading_a_broken_body(db, handler, status):
    from django.core.exceptions import BadRequest

    import config.api

    response = getattr(config.api, handler)(broken_post(), exception=BadRequest("x"))
    assert response.status_code == status and response["Content-Type"].startswith("text/html")


def test_the_500_handler_answers_a_broken_post_with_the_500_page(db):
    from config.api import api_server_error

    response = api_server_error(broken_post())
    assert response.status_code == 500 and b"Something went wrong" in response.content


def test_the_handlers_answer_even_when_their_template_cannot_be_rendered(db, monkeypatch):
    from django.template import loader

    import config.api

    def broken(*args, **kwargs):
        raise RuntimeError("the template engine is broken")

    monkeypatch.setattr(loader, "get_template", broken)
    monkeypatch.setattr(loader, "render_to_string", broken)
    for handler, status in [("bad_request", 400), ("permission_denied", 403), ("api_not_found", 404)]:
        assert getattr(config.api, handler)(broken_post(), exception=None).status_code == status
    assert config.api.api_server_error(broken_post()).status_code == 500
    api_request = RequestFactory().post("/api/v1/runs/", b"{}", content_type="application/json")
    assert config.api.bad_request(api_request, exception=None)["Content-Type"] == PROBLEM


# --- One body policy: a route reads what it takes, and nothing else is read -----------------

FORM_BODY = "text=hi&form_key=f"


@pytest.mark.parametrize("route", ["/api/v1/conversations/{conversation}/messages/",
                                   "/api/v1/expenses/claims/{claim}/invoices/", "/api/v1/expenses/invoices/"])
def test_a_form_body_to_an_upload_endpoint_is_a_415_problem_that_writes_nothing(demo, route):
    alice = api("alice")
    conversation = alice.post("/api/v1/conversations/", {}, content_type="application/json").json()["id"]
    claim = a_claim(alice)
    response = alice.post(route.format(conversation=conversation, claim=claim.id), FORM_BODY,
                          content_type="application/x-www-form-urlencoded", HTTP_IDEMPOTENCY_KEY="form-1")
    problem = assert_problem(response, 415, "unsupported_media_type")
    assert "multipart/form-data" in problem["detail"]
    assert not Invoice.objects.exists()
    assert not Conversation.objects.get(id=int(conversation)).activities.exists()


@pytest.mark.parametrize("route", ["/conversations/{conversation}/upload/", "/expenses/claims/{claim}/invoice/"])
def test_a_form_body_to_an_upload_page_is_the_400_page_that_writes_nothing(demo, route):
    alice = api("alice")
    conversation = alice.post("/api/v1/conversations/", {}, content_type="application/json").json()["id"]
    claim = a_claim(alice)
    page = Client(raise_request_exception=True)
    page.login(username="alice", password="keel-demo")
    response = page.post(route.format(conversation=conversation, claim=claim.id), FORM_BODY,
                         content_type="application/x-www-form-urlencoded")
    assert_error_page(response, 400, "multipart/form-data")
    assert not Invoice.objects.exists()


def test_the_invoice_page_still_takes_its_file(demo):
    claim = a_claim(api("alice"))
    page = Client(raise_request_exception=True)
    page.login(username="alice", password="keel-demo")
    response = page.post(f"/expenses/claims/{claim.id}/invoice/",
                         {"form_key": "f", "file": SimpleUploadedFile("hotel.pdf", pdf_of(MB), "application/pdf")})
    assert response.status_code == 302 and Invoice.objects.get(claim=claim).size == MB


def test_a_chunked_json_body_with_no_content_length_is_read(demo):
    """Through the ASGI application Keel serves, as a client that streams its body sends it."""
    from asgiref.sync import async_to_sync
    from channels.testing import HttpCommunicator

    from config.asgi import application

    response = async_to_sync(HttpCommunicator(application, "POST", "/api/v1/auth/token/", body=CREDENTIALS, headers=[
        (b"host", b"testserver"), (b"content-type", b"application/json"), (b"transfer-encoding", b"chunked")]
    ).get_response)(timeout=10)
    assert response["status"] == 200, response["body"][:300]
    assert json.loads(response["body"])["token"]


def test_a_json_string_longer_than_a_request_may_carry_is_a_400_naming_it_and_starts_nothing(demo):
    from tests.helpers import client_for
    from workflows.models import Run

    client = client_for("alice")
    before = Run.objects.count()
    body = {"blueprint": "payroll_group_setup",
            "params": {"request": "set up a monthly payroll group for Shanghai", "group_name": "Sales",
                       "note": "x" * 20001}}
    response = client.post("/api/v1/runs/", body, content_type="application/json")
    assert response.status_code == 400, response.content
    problem = response.json()
    assert problem["code"] == "field_too_large" and "params.note" in problem["detail"]
    assert "20000" in problem["detail"] and Run.objects.count() == before


def test_a_json_list_with_more_items_than_a_request_may_carry_is_a_400_naming_it(demo):
    from tests.helpers import client_for

    response = client_for("alice").post("/api/v1/payroll/trial/",
                                         {"city": "Shanghai", "months": 1, "employees": [{}] * 10001}, content_type="application/json")
    assert response.status_code == 400 and response.json()["code"] == "field_too_large"
    assert "employees" in response.json()["detail"] and "10000" in response.json()["detail"]


def test_a_query_parameter_longer_than_a_request_may_carry_is_a_400_naming_it(demo):
    from tests.helpers import client_for

    client = client_for("alice")
    # A parameter the list does not read: only the request's own bound can refuse it.
    assert client.get("/api/v1/runs/", {"utm_source": "b" * 1000}).status_code == 200
    response = client.get("/api/v1/runs/", {"utm_source": "b" * 1001})
    assert response.status_code == 400 and response.json()["code"] == "field_too_large"
    assert "utm_source" in response.json()["detail"]
    assert client.get("/runs/", {"utm_source": "b" * 1001}).status_code == 400  # a page too
