"""A worker's database connection between tasks: checked again only when it sat idle."""
from unittest import mock

import pytest
from django.db import connection

from config import celery

pytestmark = pytest.mark.django_db


def test_a_connection_a_task_just_used_is_not_checked_again_but_an_idle_one_is():
    connection.ensure_connection()
    with mock.patch.object(connection, "health_check_enabled", True):
        with mock.patch.object(celery.time, "monotonic", return_value=1000.0):
            celery._connections_after_task()
        with mock.patch.object(celery.time, "monotonic", return_value=1000.5):
            celery._connections_before_task()
        assert connection.health_check_done  # no SELECT 1 before the next task's first statement
        with mock.patch.object(celery.time, "monotonic", return_value=1000.5 + celery.FRESH_SECONDS):
            celery._connections_before_task()
        assert not connection.health_check_done  # idle a while: checked at its first use


def test_celery_sees_every_celery_setting_as_django_has_it():
    from django.conf import settings

    names = [name for name in dir(settings) if name.startswith("CELERY_")]
    assert "CELERY_TASK_ACKS_LATE" in names
    for name in names:
        assert celery.app.conf[name.removeprefix("CELERY_").lower()] == getattr(settings, name), name
