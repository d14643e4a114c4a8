"""Nobody's records change behind their back. A whole-tenant restore that
deletes a group someone else's run set up tells that person in their conversation (what
went, by whose restore, a link to the restore run), and the old link to the group says it
was removed by that run instead of answering 404. The restore's panel waits only on people
who may decide it."""
import re

import pytest

from agents.news import news_post
from agents.models import Message
from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from payroll.models import PayrollGroup, RemovedGroup
from payroll.tests.test_tenant_restore import ask, snapshot
from timeline.models import Event
from tests.helpers import client_for, drive, membership, run_to_approval
from workflows.services import run_start

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}


def alices_group():
    run = run_to_approval("alice")
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                    verdict="approved")
    run = drive(run)
    assert run.status == "completed", run.status_reason
    return run, PayrollGroup.objects.get(name="Shanghai Sales")


def post_news(conversation_id):
    for event in Event.objects.filter(conversation_id=conversation_id).order_by("seq"):
        news_post(event.id)  # what the news task does on a worker; a second post is a no-op


def test_alice_is_told_when_adas_restore_deletes_her_group_and_her_old_link_says_so():
    sid = snapshot()
    made, group = alices_group()
    post_news(made.conversation_id)
    before = Message.objects.filter(conversation_id=made.conversation_id).count()

    restore = ask(sid)
    waiting = client_for("ada").get(f"/conversations/{restore.conversation_id}/").content.decode()
    assert re.search(r"Waiting on:</strong> an approver \(bob\)", waiting), "ada asked: she may not decide"
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=restore).id,
                    verdict="approved")
    assert drive(restore).status == "completed"
    assert not PayrollGroup.objects.filter(id=group.id).exists()

    post_news(made.conversation_id)
    post_news(made.conversation_id)  # redelivered: still one message
    told = Message.objects.filter(conversation_id=made.conversation_id).order_by("created_at")[before:]
    assert len(told) == 1, [m.text for m in told]
    news = told[0]
    assert "“Shanghai Sales”" in news.text and "Ada Zhao" in news.text and "restore" in news.text
    assert news.link["href"] == f"/runs/{restore.id}/"
    chat_zh = client_for("alice").get(f"/conversations/{made.conversation_id}/", **ZH).content.decode()
    assert "Shanghai Sales" in chat_zh and "整个租户恢复" in chat_zh, "alice reads it in her language"

    page = client_for("alice").get(f"/payroll/groups/{group.id}/")
    assert page.status_code == 410
    html = page.content.decode()
    assert "Ada Zhao" in html and f'href="/runs/{restore.id}/"' in html and f'href="/runs/{made.id}/"' in html
    assert client_for("alice").get("/payroll/groups/4242/").status_code == 404  # never was one
    assert client_for("oscar").get(f"/payroll/groups/{group.id}/").status_code == 404  # another tenant's


def test_a_restore_that_deletes_only_the_restorers_own_work_tells_nobody_else():
    sid = snapshot()
    restore = ask(sid)
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=restore).id,
                    verdict="approved")
    assert drive(restore).status == "completed"
    assert not Event.objects.filter(type__startswith="record.").exists()
    assert not RemovedGroup.objects.exists()


def test_alice_is_told_when_bobs_run_moves_employees_out_of_her_group():
    from payroll.models import Employee

    ids = [str(i) for i in Employee.objects.filter(tenant=membership("alice").tenant, group__isnull=True,
                                                   base_salary__gt=0).order_by("id").values_list("id", flat=True)[:3]]
    made = drive(run_start(membership=membership("alice"), blueprint="payroll_group_setup",
                           params={"request": "set up a monthly payroll group for our Shanghai sales team",
                                   "group_name": "Shanghai Sales", "employee_ids": ids}))
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=made).id,
                    verdict="approved")
    assert drive(made).status == "completed", made.status_reason
    group = PayrollGroup.objects.get(name="Shanghai Sales")
    moved = list(group.employees.values_list("id", flat=True)[:2])
    assert len(moved) == 2, "alice's group has her employees"
    post_news(made.conversation_id)
    before = Message.objects.filter(conversation_id=made.conversation_id).count()
    bobs = drive(run_start(membership=membership("bob"), blueprint="payroll_group_setup",
                           params={"request": "set up a monthly payroll group for our Shanghai sales team",
                                   "group_name": "Bob's Team", "employee_ids": [str(i) for i in moved]}))
    approval_decide(membership=membership("ada"), approval_id=ApprovalRequest.objects.get(run=bobs).id,
                    verdict="approved")
    assert drive(bobs).status == "completed", bobs.status_reason
    post_news(made.conversation_id)
    told = list(Message.objects.filter(conversation_id=made.conversation_id).order_by("created_at")[before:])
    assert len(told) == 1, [m.text for m in told]
    for employee in Employee.objects.filter(id__in=moved):
        assert f"{employee.name} ({employee.employee_no})" in told[0].text, told[0].text
    assert "were moved from your group “Shanghai Sales” to “Bob's Team” by Ada Zhao's approval of Bob Li's run" \
        in told[0].text, told[0].text
    assert told[0].link["href"] == f"/runs/{bobs.id}/"
