"""Configuration that fails closed: an unknown KEEL_ENV refuses to start, a
guessable SECRET_KEY is refused in production, and log-in throttling locks an account per
account and an address per address, with backoff, so that one person cannot lock out
everyone behind the same address."""
from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone as tz
from pathlib import Path

import pytest
from axes.models import AccessFailureLog
from django.core.management import call_command
from django.test import Client

from tenants.login_throttle import Limit, lockouts

ROOT = Path(__file__).resolve().parents[2]


# --- KEEL_ENV and SECRET_KEY --------------------------------------------------------------

# Settings only: a PostgreSQL address nobody connects to while settings load (without one, they
# would start the embedded PostgreSQL).
NO_DATABASE = {"DATABASE_URL": "postgres://keel@127.0.0.1:1/unused"}


STARTED = "from django.conf import settings; print('started', settings.KEEL_ENV)"


def settings_load(env: dict[str, str], then: str = STARTED) -> subprocess.CompletedProcess:
    """Load the settings in a new process under `env` (and nothing of ours from this one's), then run `then`."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("KEEL_", "SECRET_KEY", "DATABASE_URL",
                                                                        "REDIS_URL", "ALLOWED_HOSTS"))}
    return subprocess.run([sys.executable, "-c", "import django; django.setup(); " + then],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**base, "DJANGO_SETTINGS_MODULE": "config.settings", **NO_DATABASE, **env})


@pytest.mark.parametrize("value", ["prod", "Prod", "staging", "produktion", "test", "1"])
def test_an_unknown_keel_env_refuses_to_start_naming_the_allowed_values(value):
    result = settings_load({"KEEL_ENV": value, "SECRET_KEY": secrets.token_urlsafe(64)})
    assert result.returncode != 0 and "started" not in result.stdout
    assert "ImproperlyConfigured" in result.stderr and f"KEEL_ENV={value!r}" in result.stderr
    assert "development, production" in result.stderr


@pytest.mark.parametrize("env, expected", [
    ({}, "development"),
    ({"KEEL_ENV": ""}, "development"),
    ({"KEEL_ENV": "development"}, "development"),
    pytest.param({"KEEL_ENV": " Production ", "SECRET_KEY": secrets.token_urlsafe(64)}, "production",
                 id="Production, with a random key"),
])
def test_the_two_keel_envs_start(env, expected):
    result = settings_load(env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["started", expected]


@pytest.mark.parametrize("key, words", [
    ("abcde" * 12, "'abcde' repeated 12 times"),
    ("Password123!" * 5, "'Password123!' repeated 5 times"),
    pytest.param(secrets.token_hex(16) * 2, "repeated 2 times", id="a random key pasted twice"),
    ("abcdefghijklmnopq" * 3 + "xyz", "it repeats itself"),
    ("x" * 40 + "0123456789abcdef", "it repeats itself"),
    ("a" * 30 + "b" * 30, "only 2 distinct characters"),
])
def test_production_refuses_a_guessable_secret_key_and_says_why(key, words):
    result = settings_load({"KEEL_ENV": "production", "SECRET_KEY": key})
    assert result.returncode != 0 and "started" not in result.stdout
    assert "KEEL_ENV=production refuses to start" in result.stderr and "too short or too simple" in result.stderr
    assert words in result.stderr


def test_production_refuses_fast_password_hashing_and_development_uses_it():
    refused = settings_load({"KEEL_ENV": "production", "SECRET_KEY": secrets.token_urlsafe(64),
                             "KEEL_FAST_PASSWORD_HASHING": "1"})
    assert refused.returncode != 0 and "started" not in refused.stdout
    assert "KEEL_FAST_PASSWORD_HASHING is on" in refused.stderr
    hashers = settings_load({}, then="from django.contrib.auth.hashers import make_password; "
                                     "print(make_password('keel-demo').split('$')[0])")
    assert hashers.stdout.strip() == "pbkdf2_sha256", hashers.stderr  # unless asked for, full strength


def test_random_keys_of_every_usual_kind_start_in_production():
    from django.core.management.utils import get_random_secret_key

    for key in (get_random_secret_key(), secrets.token_urlsafe(64), secrets.token_hex(32)):
        result = settings_load({"KEEL_ENV": "production", "SECRET_KEY": key})
        assert result.returncode == 0, (key, result.stderr)


# --- The lock-out rule, as a pure function ------------------------------------------------

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=tz.utc)
RULE = Limit(failures=3, window=timedelta(minutes=15), base=timedelta(minutes=15), cap=timedelta(hours=2),
             memory=timedelta(hours=24))


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def failures(*minutes: float) -> list[tuple[datetime, bool]]:
    return [(at(m), True) for m in minutes]


def test_locks_grow_with_each_lock_out_and_stop_at_the_cap():
    # Three failures lock; each lock-out within a day doubles the next: 15, 30, 60, 120, 120 minutes.
    events, start, lengths = [], 0.0, []
    for _ in range(5):
        events += failures(start, start + 1, start + 2)
        end = lockouts(events, RULE)[-1][1]
        lengths.append((end - at(start + 2)) / timedelta(minutes=1))
        start = (end - T0) / timedelta(minutes=1) + 1
    assert lengths == [15, 30, 60, 120, 120]


def test_failures_inside_a_lock_neither_extend_it_nor_count_toward_the_next():
    locks = lockouts(failures(0, 1, 2, 5, 10, 16.5, 17), RULE)
    assert locks == [(at(2), at(17))]  # 5, 10, 16.5 fell inside; 17 is the first of a new count


def test_failures_spread_wider_than_the_window_never_lock():
    assert lockouts(failures(0, 10, 20, 30, 40, 50), RULE) == []


def test_a_success_forgets_failures_and_lock_outs():
    events = failures(0, 1, 2) + failures(20, 21, 22) + [(at(60), False)] + failures(61, 62, 63)
    assert lockouts(events, RULE)[-1] == (at(63), at(78))  # the first lock's length again
    assert lockouts(failures(0, 1) + [(at(2), False)] + failures(3), RULE) == []


def test_lock_outs_older_than_the_memory_no_longer_lengthen_the_next():
    events = failures(0, 1, 2) + failures(25 * 60, 25 * 60 + 1, 25 * 60 + 2)
    assert lockouts(events, RULE)[-1] == (at(25 * 60 + 2), at(25 * 60 + 17))


# --- Through the log-in form and the token endpoint ---------------------------------------

def token_post(username: str, password: str = "keel-demo", address: str = "10.0.0.1"):
    return Client().post("/api/v1/auth/token/", {"username": username, "password": password},
                         content_type="application/json", REMOTE_ADDR=address)


def form_login(username: str, password: str = "keel-demo", address: str = "10.0.0.1"):
    client = Client(REMOTE_ADDR=address)
    return client.post("/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def rewind(seconds: float) -> None:
    """As if the recorded failures had happened `seconds` earlier."""
    for row in AccessFailureLog.objects.all():
        AccessFailureLog.objects.filter(id=row.id).update(attempt_time=row.attempt_time - timedelta(seconds=seconds))


def test_one_person_failing_behind_an_offices_address_locks_out_no_colleague(demo, settings):
    """The issue's probe: thirty failed log-ins from one address used to lock every account
    behind it. Now the accounts that failed wait; bob, with no failures of his own, gets in."""
    settings.KEEL_LOGIN_ADDRESS_FAILURES = 30
    office = "10.30.0.1"
    for i in range(30):
        token_post(f"guess{i % 6}", "wrong", address=office)
    assert token_post("guess0", "wrong", address=office).status_code == 429
    assert token_post("bob", address=office).status_code == 200
    assert form_login("ada", address=office).status_code == 302
    # dora mistypes once at the locked address: she waits for the address's lock like the sprayer.
    assert token_post("dora", "wrong", address=office).status_code == 429
    assert token_post("dora", address=office).status_code == 429
    assert token_post("dora", address="10.30.0.2").status_code == 200  # dora elsewhere is fine


def test_a_locked_account_from_a_shared_address_is_that_account_only(demo):
    for _ in range(5):
        form_login("alice", "wrong", address="10.31.0.1")
    assert form_login("alice", address="10.31.0.1").status_code == 429
    assert form_login("bob", address="10.31.0.1").status_code == 302  # same address, no failures of his own


def test_attempts_while_locked_do_not_extend_the_lock(demo):
    for _ in range(5):
        token_post("dora", "wrong")
    rewind(600)  # the lock started ten minutes ago
    rewound = time.monotonic()
    for _ in range(20):  # refused unchecked, and not recorded
        assert token_post("dora", "wrong").status_code == 429
    assert AccessFailureLog.objects.filter(username="dora").count() == 5
    locked = token_post("dora")
    left = 300 - (time.monotonic() - rewound)  # what is left of 15 min (the attempts take time on a busy machine)
    assert locked.status_code == 429 and left - 2 <= int(locked["Retry-After"]) <= 300
    rewind(301)
    assert token_post("dora").status_code == 200


def test_a_second_lock_out_lasts_twice_as_long(demo):
    for _ in range(5):
        token_post("dora", "wrong")
    rewind(901)  # the first lock (15 minutes) is over
    for _ in range(4):
        assert token_post("dora", "wrong").status_code == 400
    again = token_post("dora", "wrong")
    assert again.status_code == 429 and again.json()["code"] == "login_throttled"
    assert again["Retry-After"] == "1800" and "30 minutes" in again.json()["detail"]
    rewind(1000)
    assert token_post("dora").status_code == 429  # 15 minutes would have been over by now
    rewind(801)
    assert token_post("dora").status_code == 200


def test_an_admin_unlocks_with_axes_commands(demo):
    for _ in range(5):
        token_post("dora", "wrong")
    assert token_post("dora").status_code == 429
    call_command("axes_reset_username", "dora")
    assert token_post("dora").status_code == 200


def test_a_much_guessed_account_keeps_its_newest_failures_and_still_locks(demo, settings):
    settings.AXES_ACCESS_FAILURE_LOG_PER_USER_LIMIT = 5  # 1000 in production
    for _ in range(5):
        token_post("dora", "wrong")
    rewind(3600)  # an hour ago: the log is full, the lock long over
    oldest = set(AccessFailureLog.objects.values_list("id", flat=True))
    for _ in range(4):
        assert token_post("dora", "wrong").status_code == 400
    assert token_post("dora", "wrong").status_code == 429
    kept = set(AccessFailureLog.objects.filter(username="dora").values_list("id", flat=True))
    assert len(kept) == 5 and not kept & oldest
