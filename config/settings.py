"""Keel settings: one file, read from the environment.

With nothing set, Keel runs embedded: SQLite, an in-memory channel layer and a
Celery worker on threads inside the server process (see config/embedded.py).
With DATABASE_URL and REDIS_URL set, the same code runs on PostgreSQL, Redis
and separate `celery worker` processes.
"""
import os
import warnings
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    return [v.strip() for v in value.split(",") if v.strip()] if value else default


# The embedded default key is for demos on one machine only; production sets SECRET_KEY.
SECRET_KEY = os.environ.get("SECRET_KEY", "keel-embedded-demo-key-not-for-production")
DEBUG = env_bool("KEEL_DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "django_htmx",
    "template_partials",
    "config",
    "tenants",
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
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
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
else:
    DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3",
                             "NAME": os.environ.get("KEEL_SQLITE_PATH", str(BASE_DIR / "db.sqlite3"))}}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The embedded worker writes from threads beside the server: WAL lets readers
    # go on during a write, IMMEDIATE takes the write lock at BEGIN (no deadlocked
    # upgrades), and the busy timeout waits instead of failing with "locked".
    DATABASES["default"].setdefault("OPTIONS", {}).update({
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    })
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
EMBEDDED = not os.environ.get("REDIS_URL")

# --- Redis, Celery, Channels -----------------------------------------------------
REDIS_URL = os.environ.get("REDIS_URL", "")
CHANNEL_CAPACITY = 2000  # the default 100 drops group_send bursts silently
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
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
# The sweeper recovers expired leases and undispatched nodes and expires approvals.
CELERY_BEAT_SCHEDULE = {
    "sweep": {"task": "workflows.tasks.sweep", "schedule": float(os.environ.get("KEEL_SWEEP_SECONDS", "5"))},
    "hr-outbox": {"task": "hr.tasks.outbox_sweep", "schedule": float(os.environ.get("KEEL_OUTBOX_SECONDS", "2"))},
    "approval-reminders": {"task": "approvals.tasks.approval_reminders",
                           "schedule": float(os.environ.get("KEEL_REMINDER_SECONDS", "30"))},
}
KEEL_LEASE_SECONDS = float(os.environ.get("KEEL_LEASE_SECONDS", "30"))
KEEL_EMBEDDED_WORKER_THREADS = int(os.environ.get("KEEL_WORKER_THREADS", "4"))

# --- Auth, API -----------------------------------------------------------------------
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "config.api.exception_handler",
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser",
                               "rest_framework.parsers.MultiPartParser",
                               "rest_framework.parsers.FormParser"],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Keel API",
    "DESCRIPTION": "Execution-agent console for payroll setup. Business ids are strings.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
}
DATA_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

# --- Mail (approval reminders) -------------------------------------------------------
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "keel@localhost")

# --- I18N, static ----------------------------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
WHITENOISE_USE_FINDERS = True  # serve from static/ without collectstatic in the embedded mode
# Without collectstatic there is no STATIC_ROOT yet; the finders serve everything.
warnings.filterwarnings("ignore", message="No directory at", )

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("KEEL_LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "INFO"}},
}
