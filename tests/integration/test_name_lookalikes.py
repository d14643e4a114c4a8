"""Two people import groups whose names read the same ("P1 Group 01" and a Cyrillic
"Р1 Grоup 01"), released together on PostgreSQL: one group, the other answered 409,
as two imports of one name are. Each thread has its own
connection and goes through the real API path."""
import threading

import pytest
from django.core.management import call_command
from django.db import connection
from rest_framework.test import APIClient

from payroll.models import PayrollGroup, PayrollTemplate, RecordClaim
from tenants.models import Membership

pytestmark = pytest.mark.django_db(transaction=True)

ROUNDS = 5
CYRILLIC_P, CYRILLIC_O = "\u0420", "\u043e"


def test_two_lookalike_names_imported_at_once_make_one_group():
    call_command("seed_demo", verbosity=0)
    people = [Membership.objects.get(user__username=u).user for u in ("bob", "ada")]
    template = PayrollTemplate.objects.get(code="cn-sh-monthly-salaried", version=1)
    for round_ in range(ROUNDS):
        names = [f"P{round_} Group 01", f"{CYRILLIC_P}{round_} Gr{CYRILLIC_O}up 01"]
        barrier = threading.Barrier(2)
        answers: list[int] = []
        errors: list[BaseException] = []
        lock = threading.Lock()

        def call(user, name: str, key: str) -> None:
            try:
                client = APIClient()
                client.force_authenticate(user)
                barrier.wait(timeout=30)
                response = client.post("/api/v1/payroll/groups/", {"template_id": str(template.id), "name": name},
                                       format="json", HTTP_IDEMPOTENCY_KEY=key)
                with lock:
                    answers.append(response.status_code)
            except BaseException as exc:  # surfaced below, not lost in the thread
                with lock:
                    errors.append(exc)
            finally:
                connection.close()

        threads = [threading.Thread(target=call, args=(people[i], names[i], f"r{round_}-{i}")) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert not errors, errors
        assert sorted(answers) == [201, 409], (round_, answers)
        assert PayrollGroup.objects.filter(name__in=names).count() == 1
    assert not RecordClaim.objects.exists()  # each direct import gave its claim back
