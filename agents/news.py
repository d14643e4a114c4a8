"""Closing the loop: Keel tells the conversation what its run did, so the person who asked
never has to go and look.

The engine and the approval gate write timeline events; agents subscribes to them
(timeline.services.event_subscribe, registered in AgentsConfig.ready) and a Celery task
turns each one into a Keel message in the conversation: the run waits for an approver
(who), asks a question (with the options as buttons), completes, rolls back (why), fails
(why, and what to do), is rejected (by whom, with the comment) or is replanned.

What the message says is the run's domain's to say (workflows.news: a domain registers
its words per blueprint; a blueprint that registers none gets generic words). This
module only gathers what the domain may want to know — who may approve, why the matrix
routes it so, who rejected it — and stores the message as meaning: `Message.words`,
rendered in each reader's language, with its English in `Message.text` for search and
API clients. One message per event (Message.news_of), so a redelivered task posts
nothing twice; the message is pushed like any reply."""
from __future__ import annotations

from django.db import IntegrityError, transaction

from approvals.models import ApprovalRequest, ApprovalStatus
from approvals.services import approval_recipients
from config.words import words_english
from timeline.models import Event
from timeline.services import event_append
from workflows.models import Node, Run, RunStatus
from workflows.news import News, RunNews, news_tell
from workflows.tools import question_words

from .models import Message

NEWS_TYPES = ("run.status", "approval.requested", "approval.rejected", "input.requested", "plan.replanned",
              "record.")
# `record.*`: a domain says, in its own words, that another run changed or deleted records this
# conversation's run made (data: words, link); posted as said.
# A run's status changes the conversation is told about (the others — running, waiting — are not news).
TOLD_STATUSES = (RunStatus.COMPLETED, RunStatus.ROLLED_BACK, RunStatus.FAILED, RunStatus.BLOCKED, RunStatus.STOPPED)


def approvers_for(approval: ApprovalRequest) -> list[str]:
    """The people who may decide this approval, by name (the matrix's roles, not the requester)."""
    return [m.user.get_full_name() or m.user.username for m in approval_recipients(approval)]


def _approval(data: dict) -> ApprovalRequest | None:
    return (ApprovalRequest.objects.filter(id=int(data.get("approval") or 0)).select_related("decided_by").first())


def _question(run: Run, data: dict) -> News | None:
    """A run's question is already the tool's own words: posted as asked (its words, rendered
    for each reader of the chat), with its options."""
    node = Node.objects.filter(run=run, key=data.get("node"), status="awaiting_input", retired_in__isnull=True).first()
    question = (node.question or {}) if node else {}
    said = question_words(question)
    if not said:
        return None
    return News(words=said, options=question.get("options") or [], link=question.get("link") or {})


def news_compose(event: Event) -> News | None:
    """The message an event calls for, or None. None for a replay's sandbox run: nobody
    reads its conversation, and it is deleted as the replay ends."""
    run = Run.objects.filter(id=event.run_id, tenant__sandbox=False).first() if event.run_id else None
    if run is None:
        return None
    data = event.data or {}
    if event.type.startswith("record.") and data.get("words"):
        return News(words=data["words"], link=data.get("link") or {})
    if event.type == "input.requested":
        return _question(run, data)
    if event.type in ("approval.requested", "approval.rejected"):
        approval = _approval(data)
        decider = approval.decided_by if approval and approval.decided_by_id else None
        return news_tell(RunNews(
            run=run, kind=event.type, data=data, approval=approval,
            approvers=approvers_for(approval) if approval else [],
            routing_reason=(approval.routing_reason_words or approval.routing_reason) if approval else data.get("routing", ""),
            measures=(approval.measures or {}) if approval else {},
            decided_by=(decider.get_full_name() or decider.username) if decider else str(data.get("by") or ""),
            comment=data.get("comment") or ""))
    if event.type == "plan.replanned":
        return news_tell(RunNews(run=run, kind=event.type, data=data, reason=data.get("reason") or ""))
    if event.type == "run.status" and data.get("to") in TOLD_STATUSES:
        to = data["to"]
        if to in (RunStatus.BLOCKED, RunStatus.STOPPED) and \
                ApprovalRequest.objects.filter(run=run, status=ApprovalStatus.REJECTED).exists():
            return None  # the rejection message already said why
        return news_tell(RunNews(run=run, kind=f"run.{to}", data=data,
                                 reason=data.get("reason") or run.status_reason or ""))
    return None


def news_post(event_id: int) -> Message | None:
    """Post the message an event calls for, once; push it to the conversation."""
    event = Event.objects.filter(id=event_id).first()
    if event is None or not event.type.startswith(NEWS_TYPES):
        return None
    news = news_compose(event)
    if news is None:
        return None
    text = words_english(news.words)
    link = _link_stored(news.link)
    key = f"event:{event.id}"
    try:
        with transaction.atomic():
            message = Message.objects.create(conversation_id=event.conversation_id, role=Message.Role.ASSISTANT,
                                             text=text, words=news.words, intent="news", run_id=event.run_id,
                                             options=news.options, link=link, news_of=key,
                                             event_seq=event.seq)
            # The chat reads in the order things happened, not the order workers posted the news:
            # a rejection before the replan it caused, though both tasks ran at once.
            Message.objects.filter(id=message.id).update(created_at=event.created_at)
            message.created_at = event.created_at
            # API clients read `text` (English); a reader's page renders `words` in their language.
            event_append(conversation_id=event.conversation_id, run_id=event.run_id, type="message.news",
                         data={"text": text, "words": news.words, "options": news.options, "link": link,
                               "about": event.type})
    except IntegrityError:
        return None  # posted already: a redelivery
    return message


def _link_stored(link: dict) -> dict:
    """{href, label (English), label_words (as meaning)}: the label rendered per reader by Message.link_shown."""
    if not link.get("href"):
        return {}
    return {"href": link["href"], "label": words_english(link.get("label")), "label_words": link.get("label")}
