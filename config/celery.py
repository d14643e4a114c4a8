import os

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("keel")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_init.connect
def _keep_database_connection(**kwargs) -> None:
    """A prefork worker process runs one task at a time: one persistent database
    connection each spares every task a new connection (several ms on PostgreSQL)."""
    from django.db import connections

    for connection in connections.all():
        connection.settings_dict["CONN_MAX_AGE"] = int(os.environ.get("KEEL_WORKER_CONN_MAX_AGE", "300"))
