"""The request cap of a chat message with an attachment. Every multipart request is refused
while it streams in once it passes KEEL_UPLOAD_MAX_BYTES (config.parsers.UploadSizeLimit);
a kind of file a domain takes in the chat may be larger (workflows.conversation.AttachmentKind
.max_bytes), so the chat's two doors — the messages API and the console's form — raise the
cap for that request only, to the largest registered kind plus its form. The cap must be in
place before anything reads the body: a page view calls `chat_upload_limit` first (so:
csrf_exempt outside, csrf_protect inside); the API view takes `ChatAttachmentUploads` first
among its bases, which sets it before DRF authenticates."""
from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest

from config.parsers import RequestTooLarge, UploadSizeLimit
from workflows.conversation import attachment_kinds

FORM_ALLOWANCE = 64 * 1024  # the other fields and the multipart framing


def _largest():
    kinds = attachment_kinds()
    return max(kinds, key=lambda k: k.max_bytes) if kinds else None


class ChatUploadLimit(UploadSizeLimit):
    @property
    def max_bytes(self) -> int:
        largest = _largest()
        return max(settings.KEEL_UPLOAD_MAX_BYTES, largest.max_bytes + FORM_ALLOWANCE if largest else 0)

    def refusal(self) -> RequestTooLarge:
        largest = _largest()
        if largest is None:
            return super().refusal()
        refused = largest.too_large(self.max_bytes)
        return RequestTooLarge(getattr(refused, "message", str(refused)))


def chat_upload_limit(request: HttpRequest) -> None:
    """This request's upload handlers, with the chat's cap instead of the general one."""
    request.upload_handlers = [ChatUploadLimit(request)] + [
        h for h in request.upload_handlers if not isinstance(h, UploadSizeLimit)]


def too_large_refusal(size: int):
    """What the largest kind says of a file of `size` bytes (the request passed the cap while it streamed)."""
    largest = _largest()
    return largest.too_large(size) if largest else RequestTooLarge()


class ChatAttachmentUploads:
    """An APIView that takes a chat attachment: the chat's cap, set before DRF reads anything."""

    def initialize_request(self, request, *args, **kwargs):
        chat_upload_limit(request)
        return super().initialize_request(request, *args, **kwargs)
