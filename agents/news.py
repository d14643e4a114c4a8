"""Closing the loop (issue 11): Keel tells the conversation what its run did.

The engine and the approval gate write timeline events; agents subscribes to them
(timeline.services.event_subscribe, registered in AgentsConfig.ready) and a Celery task
turns each one into a Keel message in the conversation, in the user's language: the run
waits for an approver (who), asks a question (with the options as buttons), completes
(naming the group, with a link), rolls back (why), fails (why, and what to do), is rejected
(by whom, with the comment) or is replanned. One message per event (Message.news_of), so
a redelivered task posts nothing twice; the message is pushed like any reply."""
from __future__ import annotations

import re

from django.db import IntegrityError, transaction
from django.urls import reverse

from approvals.models import ApprovalRequest, ApprovalStatus
from timeline.models import Event
from timeline.services import event_append
from workflows.models import Node, Run, RunStatus

from .answers import approvers_for, group_of
from .models import Message

NEWS_TYPES = ("run.status", "approval.requested", "approval.rejected", "input.requested", "plan.replanned")


def _zh(run: Run) -> bool:
    first = (Message.objects.filter(conversation_id=run.conversation_id, role=Message.Role.USER)
             .order_by("-created_at").values_list("text", flat=True).first())
    return bool(re.search(r"[\u4e00-\u9fff]", first or run.params.get("request", "")))


def _name(run: Run) -> str:
    return run.params.get("group_name") or run.blueprint.replace("_", " ")


def news_compose(event: Event) -> dict | None:
    """The message an event calls for, or None: {text, options, link}. None for a replay's
    sandbox run: nobody reads its conversation, and it is deleted as the replay ends."""
    run = Run.objects.filter(id=event.run_id, tenant__sandbox=False).first() if event.run_id else None
    if run is None:
        return None
    zh, name, data = _zh(run), _name(run), event.data or {}
    if event.type == "approval.requested":
        approval = ApprovalRequest.objects.filter(id=int(data.get("approval", 0))).first()
        who = approvers_for(approval) if approval else []
        listed = ("、".join(who) if zh else " or ".join(who)) or ("审批人" if zh else "an approver")
        return {"text": (f"“{name}”的导入正在等待{listed}审批。批准后我会继续。" if zh else
                         f"The import for “{name}” is waiting for {listed} to approve it. I'll carry on once "
                         "it is approved.")}
    if event.type == "approval.rejected":
        approval = ApprovalRequest.objects.filter(id=int(data.get("approval", 0))).select_related("decided_by").first()
        by = (approval.decided_by.get_full_name() or approval.decided_by.username) if approval else data.get("by")
        comment = data.get("comment") or ""
        if zh:
            text = f"{by}拒绝了“{name}”的导入" + (f"：“{comment}”" if comment else "") + "。"
            text += "我会换一个方案。" if data.get("replan") else "没有做任何更改；您可以调整需求后再试。"
        else:
            text = f"{by} rejected the import for “{name}”" + (f": “{comment}”" if comment else "") + "."
            text += (" I'll look for another plan." if data.get("replan") else
                     " Nothing was changed; tell me what to adjust and I'll start again.")
        return {"text": text}
    if event.type == "input.requested":
        node = Node.objects.filter(run=run, key=data.get("node"), status="awaiting_input",
                                   retired_in__isnull=True).first()
        question = (node.question or {}) if node else {}
        if not question.get("text"):
            return None
        return {"text": question["text"], "options": question.get("options") or []}
    if event.type == "plan.replanned":
        return {"text": (f"我调整了“{name}”的计划（第 {data.get('plan_version')} 版）：{data.get('reason', '')}" if zh else
                         f"I changed the plan for “{name}” (version {data.get('plan_version')}): "
                         f"{data.get('reason', '')}.")}
    if event.type == "run.status":
        to, reason = data.get("to"), data.get("reason") or run.status_reason or ""
        if to == RunStatus.COMPLETED:
            group = group_of(run)
            link = ({"href": reverse("payroll-group", args=[group.id]), "label": group.name} if group else {})
            shown = group.name if group else name
            return {"text": (f"完成了：薪资组“{shown}”已创建。" if zh else f"Done: the payroll group “{shown}” "
                                                                           "has been created."), "link": link}
        if to == RunStatus.ROLLED_BACK:
            return {"text": (f"“{name}”的导入失败，已用之前的快照回滚，配置恢复原样。原因：{reason}" if zh else
                             f"The import for “{name}” failed, so I rolled the configuration back to the snapshot "
                             f"taken before it. Why: {reason}.")}
        if to == RunStatus.FAILED:
            return {"text": (f"“{name}”的设置失败了：{reason}。您可以在运行面板重试，或告诉我换一个模板。" if zh else
                             f"The setup of “{name}” failed: {reason}. You can retry it from the run panel, or "
                             "tell me to use another template.")}
        if to in (RunStatus.BLOCKED, RunStatus.STOPPED):
            if ApprovalRequest.objects.filter(run=run, status=ApprovalStatus.REJECTED).exists():
                return None  # the rejection message already said why
            return {"text": (f"“{name}”的设置已停止：{reason}。" if zh else
                             f"The setup of “{name}” stopped: {reason}.")}
    return None


def news_post(event_id: int) -> Message | None:
    """Post the message an event calls for, once; push it to the conversation."""
    event = Event.objects.filter(id=event_id).first()
    if event is None or not event.type.startswith(NEWS_TYPES):
        return None
    news = news_compose(event)
    if news is None:
        return None
    key = f"event:{event.id}"
    try:
        with transaction.atomic():
            message = Message.objects.create(conversation_id=event.conversation_id, role=Message.Role.ASSISTANT,
                                             text=news["text"], intent="news", run_id=event.run_id,
                                             options=news.get("options") or [], link=news.get("link") or {},
                                             news_of=key)
            event_append(conversation_id=event.conversation_id, run_id=event.run_id, type="message.news",
                         data={"text": news["text"], "options": news.get("options") or [],
                               "link": news.get("link") or {}, "about": event.type})
    except IntegrityError:
        return None  # posted already: a redelivery
    return message
