"""The chat reads in the order things happened, and marks what came since
the reader's last visit. A rejection with replan is told before the replan it caused, even
when the workers post the replan's news first; a person who comes back finds a marker before
the news that arrived while they were away, and none once they have read it."""
import pytest

from agents.news import NEWS_TYPES, news_post
from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from timeline.models import Event
from tests.helpers import client_for, drive, membership, run_to_approval

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def chat(conversation_id, username="alice") -> str:
    return client_for(username).get(f"/conversations/{conversation_id}/").content.decode()


def test_a_rejection_is_told_before_the_replan_it_caused_whatever_order_the_news_is_posted_in():
    run = run_to_approval()
    approval = ApprovalRequest.objects.get(run=run)
    approval_decide(membership=membership("bob"), approval_id=approval.id, verdict="rejected",
                    comment="wrong template", replan=True)
    events = [e for e in Event.objects.filter(conversation_id=run.conversation_id).order_by("seq")
              if e.type.startswith(NEWS_TYPES)]
    kinds = [e.type for e in events]
    assert kinds.index("approval.rejected") < kinds.index("plan.replanned"), kinds
    for event in reversed(events):  # the workers post the replan's news first
        news_post(event.id)
    html = chat(run.conversation_id)
    assert "wrong template" in html and html.index("wrong template") < html.index("I changed the plan"), html


def test_news_that_came_while_alice_was_away_is_marked_and_the_marker_goes_once_she_has_read_it():
    run = run_to_approval()
    first = chat(run.conversation_id)
    assert 'data-testid="unread-marker"' not in first  # her first visit: nothing to mark

    for event in Event.objects.filter(conversation_id=run.conversation_id).order_by("seq"):
        if event.type.startswith(NEWS_TYPES):
            news_post(event.id)  # the approval is requested while she is away
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                    verdict="approved")
    drive(run)
    for event in Event.objects.filter(conversation_id=run.conversation_id).order_by("seq"):
        if event.type.startswith(NEWS_TYPES):
            news_post(event.id)

    back = chat(run.conversation_id)
    assert back.count('data-testid="unread-marker"') == 1
    after = back.split('data-testid="unread-marker"', 1)[1]
    assert "Done" in after  # the completion came after her visit
    assert chat(run.conversation_id, "bob").count('data-testid="unread-marker"') == 0  # bob's first visit
    assert 'data-testid="unread-marker"' not in chat(run.conversation_id)  # read now
