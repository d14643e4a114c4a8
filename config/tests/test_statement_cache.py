"""The hot path's statements are prepared; nothing else is remembered by the connection."""
import pytest
from django.contrib.auth.models import User
from django.db import connection

from config import sql

pytestmark = pytest.mark.django_db

ONE = sql.Statement("SELECT %(n)s::int + 1")


def prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def test_it_prepares_a_hot_path_statement_on_first_use():
    assert sql.execute(ONE, {"n": 41}, fetch="one") == (42,)
    assert sql.execute(ONE, {"n": 1}, fetch="one") == (2,)
    assert prepared_statements().count(ONE.positional) == 1


def test_it_keeps_no_text_of_an_orm_statement_and_its_values():
    sql.execute(ONE, {"n": 1}, fetch="one")
    big = "x" * 1_000_000
    for n in range(3):
        User.objects.filter(username=f"{big}{n}").exists()
    # psycopg remembers statement texts only while preparing is on, and it is on only for
    # the hot path's own statement: a client-bound text (here 1 MB each) is never kept.
    assert connection.connection.prepare_threshold is None
    assert not any(big in text for text in prepared_statements())
