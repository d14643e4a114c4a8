"""Twenty identical imports released together on PostgreSQL: one group, one answer.

Each thread has its own database connection (Django opens one per thread) and goes
through the real API path (DRF view → service → idempotency record)."""
import threading

import pytest
from django.core.management import call_command
from django.db import connection
from rest_framework.test import APIClient

from payroll.models import GroupItem, IdempotencyRecord, PayrollGroup, PayrollTemplate
from tenants.models import Membership

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 20


def test_twenty_identical_imports_create_one_group_and_answer_one_body():
    call_command("seed_demo", verbosity=0)
    bob = Membership.objects.get(user__username="bob").user
    template = PayrollTemplate.objects.get(code="cn-sh-monthly-salaried", version=1)
    body = {"template_id": str(template.id), "name": "Shanghai staff"}
    barrier = threading.Barrier(THREADS)
    answers: list[tuple[int, bytes]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def call() -> None:
        try:
            client = APIClient()
            client.force_authenticate(bob)
            barrier.wait(timeout=30)
            response = client.post("/api/v1/payroll/groups/", body, format="json", HTTP_IDEMPOTENCY_KEY="same-key")
            with lock:
                answers.append((response.status_code, response.content))
        except BaseException as exc:  # surfaced below, not lost in the thread
            with lock:
                errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=call) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    assert len(answers) == THREADS

    successes = [content for status, content in answers if status == 201]
    conflicts = [content for status, content in answers if status == 409]
    assert len(successes) + len(conflicts) == THREADS, sorted({s for s, _ in answers})
    assert successes and len(set(successes)) == 1  # byte-identical
    assert all(b"still in progress" in c for c in conflicts)

    assert PayrollGroup.objects.count() == 1
    group = PayrollGroup.objects.get()
    assert GroupItem.objects.filter(group=group).count() == template.items.count()
    record = IdempotencyRecord.objects.get(key="same-key")
    assert record.state == "done" and record.response_body.encode() == successes[0]
    # A late retry replays the same bytes.
    client = APIClient()
    client.force_authenticate(bob)
    late = client.post("/api/v1/payroll/groups/", body, format="json", HTTP_IDEMPOTENCY_KEY="same-key")
    assert late.status_code == 201 and late.content == successes[0]
