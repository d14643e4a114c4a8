"""The console: the list of conversations and one conversation's chat with its live run panel."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from tenants.models import Membership
from tenants.selectors import membership_for_user
from timeline.selectors import conversation_get_for, conversations_for
from timeline.services import conversation_create

from ..selectors import latest_run_for, messages_for, run_panel


@login_required
@require_http_methods(["GET", "POST"])
def console(request: HttpRequest) -> HttpResponse:
    membership = membership_for_user(request.user)
    if request.method == "POST":
        conversation = conversation_create(tenant_id=membership.tenant_id, user_id=membership.user_id,
                                           title=request.POST.get("title", "").strip())
        return redirect("conversation", conversation_id=conversation.id)
    conversations = conversations_for(membership).prefetch_related("runs")[:50]
    return render(request, "timeline/console.html", {"membership": membership, "conversations": conversations})


def _conversation_context(membership: Membership, conversation) -> dict:
    run = latest_run_for(conversation)
    return {"membership": membership, "conversation": conversation, "messages_": messages_for(conversation),
            "panel": run_panel(membership, run) if run else None}


@login_required
@require_GET
def conversation_page(request: HttpRequest, conversation_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    conversation = conversation_get_for(membership, conversation_id)
    return render(request, "timeline/conversation.html", _conversation_context(membership, conversation))


@login_required
@require_GET
def conversation_panel(request: HttpRequest, conversation_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    conversation = conversation_get_for(membership, conversation_id)
    return render(request, "timeline/conversation.html#run-panel", _conversation_context(membership, conversation))


@login_required
@require_GET
def conversation_chat(request: HttpRequest, conversation_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    conversation = conversation_get_for(membership, conversation_id)
    return render(request, "timeline/conversation.html#chat-messages",
                  _conversation_context(membership, conversation))
