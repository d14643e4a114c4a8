"""ID and account numbers never reach what the agent keeps: an HR export carrying them, attached
in the chat and imported by an approved run, leaves no raw number in any frame, payload, run
parameter, tool call, message, event, receipt or log line; the admin's own import of the same
export writes them on the employees and stores none of them in its receipt."""
import logging

import pytest
from django.apps import apps
from django.core import serializers

from payroll.models import Employee
from payroll.records.services import employee_identities_import
from tests.helpers import drive
from tests.month_inputs import resident_id
from tests.payroll import actor_for
from workflows.models import Run

from .test_trial_run import SETUP, approve, started

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]

ID_NUMBER = resident_id("31011519910303123")
ACCOUNT = "6228480402564890018"
EXPORT = ("工号,姓名,部门,城市,基本工资,证件类型,证件号码,银行账号,开户银行\n"
          f"T-3001,孙丽,Sales,Shanghai,16000,居民身份证,{ID_NUMBER},{ACCOUNT},中国农业银行上海分行\n"
          "T-3002,钱伟,Sales,Shanghai,14000,护照,E99887766,6222600260001072444,交通银行\n").encode()
RAW = (ID_NUMBER, ACCOUNT, "E99887766", "6222600260001072444")


def everything_the_agent_keeps() -> str:
    """Every row of the apps that record runs, frames, messages, events, approvals and receipts."""
    text = []
    for label in ("timeline", "workflows", "agents", "approvals", "outbox", "idempotency", "memory"):
        for model in apps.get_app_config(label).get_models():
            text.append(serializers.serialize("json", model.objects.all()))
    from payroll.models import IdempotencyRecord, Snapshot

    text += [serializers.serialize("json", IdempotencyRecord.objects.all()),
             serializers.serialize("json", Snapshot.objects.all())]
    return "\n".join(text)


def test_an_import_run_of_an_export_with_id_and_bank_columns_stores_no_number(caplog):
    caplog.set_level(logging.DEBUG)
    run, _conv = started(SETUP.format(name="Private Sales"), ("export.csv", EXPORT))
    run = approve(run)
    assert run.status == "completed", run.status_reason
    assert Employee.objects.filter(employee_no__in=["T-3001", "T-3002"]).count() == 2
    kept = everything_the_agent_keeps()
    assert "T-3001" in kept  # the scan reads what the run wrote: the employees it created are in it
    for number in RAW:
        assert number not in kept, number
        assert number not in caplog.text, number
    # The admin's import writes them where they belong, and its stored receipt names nobody's number.
    employee_identities_import(actor=actor_for("ada"), file=EXPORT, filename="export.csv", idempotency_key="ids")
    assert Employee.objects.get(employee_no="T-3001").id_number == ID_NUMBER
    kept = everything_the_agent_keeps()
    for number in RAW:
        assert number not in kept, number
        assert number not in caplog.text, number
    assert drive(Run.objects.get(id=run.id)).status == "completed"
