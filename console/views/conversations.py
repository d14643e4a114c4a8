"""The console: the list of conversations and one conversation's chat with its live run panel."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from agents.apis import MessageOutputSerializer
from agents.orchestrator import attachment_read
from agents.message_once import message_post_once
from agents.uploads import chat_upload_limit, too_large_refusal
from agents.visits import conversation_visit
from config.api import DomainError
from config.parsers import RequestTooLarge
from config.requests import MULTIPART, body_types
from tenants.models import Membership
from tenants.selectors import membership_for_user
from timeline.selectors import conversation_get_for, conversations_for
from timeline.services import conversation_create

from ..selectors import chat_help, latest_run_for, messages_for, run_panel


@login_required
@require_http_methods(["GET", "POST"])
def console(request: HttpRequest) -> HttpResponse:
    membership = membership_for_user(request.user)
    if request.method == "POST":
        conversation = conversation_create(tenant_id=membership.tenant_id, user_id=membership.user_id,
                                           title=request.POST.get("title", "").strip())
        return redirect("conversation", conversation_id=conversation.id)
    conversations = conversations_for(membership).prefetch_related("runs")[:50]
    return render(request, "timeline/console.html", {"membership": membership, "conversations": conversations,
                                                     "help": chat_help()})


def _chat_context(membership: Membership, conversation, unread_since=None) -> dict:
    lines = messages_for(conversation, unread_since)
    return {"membership": membership, "conversation": conversation, "messages_": lines,
            "first_unread": next((i for i, line in enumerate(lines) if line.unread), None), "help": chat_help()}


def _panel_context(membership: Membership, conversation) -> dict:
    run = latest_run_for(conversation)
    return {"membership": membership, "conversation": conversation,
            "panel": run_panel(membership, run) if run else None}


def _conversation_context(membership: Membership, conversation, unread_since=None) -> dict:
    return {**_chat_context(membership, conversation, unread_since), **_panel_context(membership, conversation)}


@login_required
@require_GET
def conversation_page(request: HttpRequest, conversation_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    conversation = conversation_get_for(membership, conversation_id)
    last_visit = conversation_visit(user_id=membership.user_id, conversation_id=conversation.id)
    return render(request, "timeline/conversation.html", _conversation_context(membership, conversation, last_visit))


@login_required
@require_GET
def conversation_panel(request: HttpRequest, conversation_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    conversation = conversation_get_for(membership, conversation_id)
    # Each partial computes only what it shows: the chat and the panel refresh on every message.
    return render(request, "timeline/conversation.html#run-panel", _panel_context(membership, conversation))


@login_required
@require_GET
def conversation_chat(request: HttpRequest, conversation_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    conversation = conversation_get_for(membership, conversation_id)
    conversation_visit(user_id=membership.user_id, conversation_id=conversation.id)  # read live: not news later
    return render(request, "timeline/_conversation_chat.html", _chat_context(membership, conversation))


@body_types(MULTIPART)  # a form without its file is refused unread (config.requests)
@csrf_exempt  # checked by csrf_protect below, once the attachment's upload limit is in place
@login_required
@require_POST
def conversation_upload(request: HttpRequest, conversation_id: int) -> HttpResponse:
    """A chat message with a file attached, which may be larger than the general upload cap (a
    scanned document): the chat's form posts every attachment here, with the chat's cap (its
    largest attachment kind's). The kind of file, its checks and what it is for are the
    accepting domain's (workflows.conversation); the answer is the messages API's."""
    chat_upload_limit(request)
    try:
        request.FILES  # noqa: B018 (parses the form and its file, within the chat's limit)
    except RequestTooLarge:  # the whole request passed the chat's limit while it streamed in
        refused = too_large_refusal(int(request.META.get("CONTENT_LENGTH") or 0))
        return JsonResponse({"detail": getattr(refused, "message", str(refused)),
                             "code": getattr(refused, "code", "payload_too_large")}, status=413)
    return _conversation_upload(request, conversation_id)


@csrf_protect
def _conversation_upload(request: HttpRequest, conversation_id: int) -> HttpResponse:
    membership = membership_for_user(request.user)
    upload = request.FILES.get("attachment")
    try:
        conversation = conversation_get_for(membership, conversation_id)  # another tenant's: 404 first
        if upload is None:
            raise DomainError(_("Attach the file (a document or an image)."), code="attachment_missing")
        # The messages API's fields as it writes them (ids as strings), and what the domain added.
        receipt = message_post_once(membership=membership, conversation=conversation, text=request.POST.get("text"),
                                    attachment=attachment_read(upload), key=request.headers.get("Idempotency-Key"),
                                    answer=lambda result: {**result, **MessageOutputSerializer(result).data})
    except DomainError as err:
        return JsonResponse({"detail": err.message, "code": err.code}, status=err.status_code)
    return JsonResponse(receipt.body, status=receipt.status_code)
