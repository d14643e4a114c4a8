"""The database out of reach answers 503 with Retry-After — a problem for the API, a plain
"reconnecting" page for a person — and a bug is still a 500; /healthz and /readyz say
what a load balancer needs, naming the dependency that is down."""
from unittest import mock

import psycopg_pool
import pytest
from django.contrib.auth.models import User
from django.db import OperationalError
from django.test import Client

from config.database_health import DatabaseBusy

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def client(username: str = "alice") -> Client:
    c = Client(raise_request_exception=False)
    c.force_login(User.objects.get(username=username))
    return c


def test_the_api_answers_503_with_retry_after_when_the_database_is_away():
    with mock.patch("workflows.apis.runs_filtered", side_effect=OperationalError("connection refused")):
        response = client().get("/api/v1/runs/")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert response.json()["code"] == "database_unavailable"


def test_a_pool_that_found_no_connection_is_an_outage_too():
    with mock.patch("workflows.apis.runs_filtered", side_effect=psycopg_pool.PoolTimeout("couldn't get a connection")):
        response = client().get("/api/v1/runs/")
    assert response.status_code == 503 and response["Retry-After"]


def test_a_pool_busy_past_its_wait_answers_503_saying_busy_not_away():
    with mock.patch("workflows.apis.runs_filtered", side_effect=DatabaseBusy("no connection came free")):
        response = client().get("/api/v1/runs/")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert response.json()["code"] == "database_busy" and "busy" in response.json()["detail"]
    with mock.patch("console.views.runs.runs_grid", side_effect=DatabaseBusy("no connection came free")):
        page = client().get("/runs/")
    assert page.status_code == 503 and "Keel is busy" in page.content.decode()


def test_a_page_says_keel_is_reconnecting():
    with mock.patch("console.views.runs.runs_grid", side_effect=OperationalError("server closed the connection")):
        response = client().get("/runs/")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert "Keel is reconnecting" in response.content.decode()


def test_a_bug_is_still_a_500():
    with mock.patch("workflows.apis.runs_filtered", side_effect=ValueError("a bug")):
        response = client().get("/api/v1/runs/")
    assert response.status_code == 500 and "Retry-After" not in response


def test_healthz_answers_without_the_database():
    with mock.patch("config.outage._database", side_effect=OperationalError("refused")):
        response = Client().get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


def test_readyz_names_the_dependency_that_is_down():
    assert Client().get("/readyz").json()["checks"]["database"] == "ok"
    with mock.patch("config.outage._database", side_effect=OperationalError("connection refused")):
        response = Client().get("/readyz")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["database"] == "down: OperationalError: connection refused"
    assert body["checks"]["broker"].startswith("ok")
