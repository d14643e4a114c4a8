"""The one idempotency protocol, over any domain's table (here: each of the three), in
both ways of holding a claim."""
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from config.api import Conflict, Unprocessable
from expenses.models import IdempotencyRecord as ExpenseRecord
from hr.models import IdempotencyRecord as HrRecord
from idempotency.models import IdempotencyState
from idempotency.services import KeyRequired, idempotent, key_checked, request_hash
from payroll.models import IdempotencyRecord as PayrollRecord
from tenants.models import Tenant
from tests.demo import demo_ensure

pytestmark = pytest.mark.django_db
TABLES = [PayrollRecord, ExpenseRecord, HrRecord]


@pytest.fixture
def tenant():
    demo_ensure()
    return Tenant.objects.get(slug="demo")


def call(records, tenant, *, key="k", request=None, work=None, **options):
    return idempotent(records, tenant_id=tenant.id, operation="op", key=key, request=request or {"a": 1},
                      work=work or (lambda record: (201, {"made": "once"})), **options)


@pytest.mark.parametrize("records", TABLES)
@pytest.mark.parametrize("in_one_transaction", [False, True])
def test_the_same_request_replays_the_stored_receipt_and_a_different_one_is_422(records, in_one_transaction, tenant):
    done = []
    work = lambda record: (done.append(1), (201, {"n": len(done), "text": "工资"}))[1]
    first = call(records, tenant, work=work, in_one_transaction=in_one_transaction)
    again = call(records, tenant, work=work, in_one_transaction=in_one_transaction)
    assert (first.replayed, again.replayed) == (False, True)
    assert first.body == again.body == {"n": 1, "text": "工资"} and again.status_code == 201 and done == [1]
    with pytest.raises(Unprocessable) as refused:
        call(records, tenant, request={"a": 2}, work=work, in_one_transaction=in_one_transaction)
    assert refused.value.code == "idempotency_key_reused" and done == [1]
    assert records.objects.get(key="k").state == IdempotencyState.DONE


@pytest.mark.parametrize("records", TABLES)
def test_a_held_key_is_409_until_its_lease_runs_out_then_one_caller_takes_it_over(records, tenant):
    held = records.objects.create(tenant=tenant, operation="op", key="k", request_hash=request_hash("op", {"a": 1}),
                                  lease_token="dead", expires_at=timezone.now() + timedelta(minutes=1))
    with pytest.raises(Conflict) as busy:
        call(records, tenant)
    assert busy.value.code == "idempotency_in_progress"
    records.objects.filter(pk=held.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    receipt = call(records, tenant)
    assert not receipt.replayed and receipt.body == {"made": "once"}
    record = records.objects.get(pk=held.pk)
    assert record.state == IdempotencyState.DONE and record.lease_token != "dead"


@pytest.mark.parametrize("records", TABLES)
def test_a_failed_attempt_is_forgotten_unless_it_left_state_a_retry_must_resume(records, tenant):
    def boom(record):
        raise RuntimeError("the work failed")

    with pytest.raises(RuntimeError):
        call(records, tenant, work=boom, atomic=False)
    assert not records.objects.exists()  # as if the request never came
    with pytest.raises(RuntimeError):
        call(records, tenant, work=boom, atomic=False, keeps_partial=lambda record: True)
    assert records.objects.get(key="k").state == IdempotencyState.FAILED
    assert call(records, tenant).body == {"made": "once"}  # the retry takes the failed claim over


@pytest.mark.parametrize("records", TABLES)
def test_in_one_transaction_a_crash_leaves_no_record_behind(records, tenant):
    def boom(record):
        records.objects.filter(pk=record.pk).update(response_body="half")
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        call(records, tenant, work=boom, in_one_transaction=True)
    assert not records.objects.exists()
    assert call(records, tenant, in_one_transaction=True).replayed is False


def test_keys_are_checked_and_tenants_do_not_share_them(tenant):
    with pytest.raises(KeyRequired):
        key_checked("  ")
    with pytest.raises(KeyRequired) as long:
        key_checked("x" * 201)
    assert long.value.code == "idempotency_key_too_long"
    other = Tenant.objects.get(slug="other")
    call(ExpenseRecord, tenant, in_one_transaction=True)
    assert call(ExpenseRecord, other, request={"b": 1}, in_one_transaction=True).replayed is False


def test_the_generic_app_names_no_domain():
    root = Path(__file__).resolve().parents[1]
    sources = [p for p in root.rglob("*.py") if "tests" not in p.parts]
    text = "\n".join(p.read_text(encoding="utf-8") for p in sources).lower()
    assert not [word for word in ("payroll", "expense", "claim_", "hr.", "tan_", "candidate", "invoice")
                if word in text]
