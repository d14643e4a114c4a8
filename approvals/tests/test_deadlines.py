"""Deadlines per tool, reminders before them (once), expiry."""
from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from approvals.matrix import matrix_rule_update
from approvals.models import ApprovalReminder
from approvals.selectors import reminders_for
from approvals.services import (
    approval_decide,
    approval_reminders_send,
    approvals_expire_overdue,
    deadline_seconds,
)
from config.api import Conflict
from timeline.models import Event
from tests.helpers import membership, waiting_approval


pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _deadlines_from_the_matrix(demo, monkeypatch):
    """The demo, no broker, and no KEEL_APPROVAL_DEADLINE_SECONDS from the environment."""
    monkeypatch.delenv("KEEL_APPROVAL_DEADLINE_SECONDS", raising=False)


def test_it_takes_the_deadline_from_the_matrix():
    matrix_rule_update(membership=membership("ada"), tool="import_template", roles=["approver", "admin"],
                       deadline_seconds=3 * 3600, remind_before_seconds=600, limits={},
                       above_limit_role="admin")
    approval = waiting_approval()
    assert approval.deadline - approval.created_at == pytest.approx(timedelta(hours=3), abs=timedelta(seconds=5))


def test_the_environment_overrides_every_deadline(monkeypatch):
    monkeypatch.setenv("KEEL_APPROVAL_DEADLINE_SECONDS", "2")
    assert deadline_seconds("import_template", membership("ada").tenant_id) == 2


def test_it_reminds_the_approvers_once_before_the_deadline(django_capture_on_commit_callbacks):
    approval = waiting_approval()
    assert approval_reminders_send(now=timezone.now()) == 0  # 24 h left: too early
    soon = approval.deadline - timedelta(minutes=30)
    with django_capture_on_commit_callbacks(execute=True):
        assert approval_reminders_send(now=soon) == 1
        assert approval_reminders_send(now=soon + timedelta(minutes=1)) == 0  # once
    reminder = ApprovalReminder.objects.get(approval=approval)
    assert reminder.recipients == ["ada", "bob"]  # alice asked; she is not reminded
    assert len(mail.outbox) == 1 and set(mail.outbox[0].to) == {"ada@demo.example", "bob@demo.example"}
    assert "due in 30 min" in mail.outbox[0].subject
    assert approval.summary in mail.outbox[0].body
    event = Event.objects.get(run=approval.run, type="approval.reminded")
    assert event.data["to"] == ["ada", "bob"]
    assert [r.approval_id for r in reminders_for(membership("bob"))] == [approval.id]
    assert reminders_for(membership("alice")) == []


def test_each_approver_gets_the_reminder_in_the_language_they_chose(django_capture_on_commit_callbacks):
    bob = membership("bob")
    bob.language = "zh-hans"
    bob.save(update_fields=["language"])
    approval = waiting_approval()
    with django_capture_on_commit_callbacks(execute=True):
        assert approval_reminders_send(now=approval.deadline - timedelta(minutes=30)) == 1
    by_to = {tuple(m.to): m for m in mail.outbox}
    assert set(by_to) == {("ada@demo.example",), ("bob@demo.example",)}
    english, chinese = by_to[("ada@demo.example",)], by_to[("bob@demo.example",)]
    assert "due in 30 min" in english.subject and "Decide it in the approvals inbox" in english.body
    assert "30 分钟" in chinese.subject and "审批" in chinese.subject
    assert "审批台" in chinese.body and "Decide it" not in chinese.body
    # The summary is stored as words: each reads it in their language too.
    assert approval.summary in english.body and "导入新薪资组“Shanghai Sales”" in chinese.body
    assert f"/approvals/{approval.id}/" in chinese.body


def test_the_reminders_link_is_absolute_so_a_mail_client_can_open_it(django_capture_on_commit_callbacks, settings):
    settings.KEEL_BASE_URL = "https://keel.example.com"
    approval = waiting_approval()
    with django_capture_on_commit_callbacks(execute=True):
        approval_reminders_send(now=approval.deadline - timedelta(minutes=30))
    [email] = mail.outbox
    assert f"inbox: https://keel.example.com/approvals/{approval.id}/" in email.body


def test_it_reminds_only_admins_of_an_approval_routed_to_admins():
    matrix_rule_update(membership=membership("ada"), tool="import_template", roles=["approver", "admin"],
                       deadline_seconds=3600, remind_before_seconds=600, limits={"headcount": 0},
                       above_limit_role="admin")
    approval = waiting_approval()
    approval_reminders_send(now=approval.deadline - timedelta(minutes=5))
    assert ApprovalReminder.objects.get(approval=approval).recipients == ["ada"]


def test_it_does_not_remind_a_decided_approval():
    approval = waiting_approval()
    approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="approved")
    assert approval_reminders_send(now=approval.deadline - timedelta(minutes=5)) == 0
    assert not mail.outbox


def test_an_expired_approval_blocks_the_run_and_cannot_be_decided():
    approval = waiting_approval()
    assert approvals_expire_overdue(now=approval.deadline + timedelta(seconds=1)) == 1
    approval.run.refresh_from_db()
    assert approval.run.status == "blocked" and "expired" in approval.run.status_reason
    with pytest.raises(Conflict) as refused:
        approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="approved")
    assert refused.value.extra["status"] == "expired"


def test_the_top_bar_counts_reminders_addressed_to_the_approver(rf):
    from console.context_processors import pending_approvals

    approval = waiting_approval()
    approval_reminders_send(now=approval.deadline - timedelta(minutes=5))
    request = rf.get("/")
    request.user = membership("bob").user
    assert pending_approvals(request) == {"pending_approvals": 1, "approval_reminders": 1}
    request.user = membership("alice").user
    assert pending_approvals(request) == {"pending_approvals": 1, "approval_reminders": 0}
