"""The conversation's messages: POST a turn (JSON or multipart with an attachment), GET
the history. Thin: the orchestrator does the work and every check."""
from django.urls import path
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import NOT_BLANK_NO_CONTROL, DomainError, StrictCharField, idempotent_write_errors
from config.parsers import JSONParser, MultiPartParser  # sizes, charsets and control characters checked before a view
from idempotency.apis import IDEMPOTENCY_KEY_OPTIONAL, idempotency_key, receipt_response
from tenants.selectors import membership_for_user
from timeline.selectors import conversation_get_for

from .models import Message
from .orchestrator import attachment_read
from .message_once import message_post_once
from .uploads import ChatAttachmentUploads


class MessageOutputSerializer(serializers.Serializer):
    activity_id = StrictCharField()
    intent = serializers.ChoiceField(choices=["chat", "analyze", "resolve", "unknown"])
    understood = serializers.ChoiceField(
        choices=["chat", "analyze", "resolve", "unknown", "answer", "change", "cancel"], required=False,
        help_text="what the message was understood as once the turn was done (an answer to Keel's question, "
                  "a change or a cancel of the waiting run, else the intent)")
    reply = StrictCharField()
    run_id = StrictCharField(allow_null=True)


class MessageHistorySerializer(serializers.ModelSerializer):
    id = StrictCharField()
    activity_id = StrictCharField(allow_null=True)
    run_id = StrictCharField(allow_null=True)
    # Keel's messages are stored as meaning: shown in the request's language; `words` is that meaning.
    text = serializers.CharField(source="text_shown", help_text="in the request's language (as typed, for the user's)")
    words = serializers.JSONField(allow_null=True, help_text="the message as meaning (key and params), if Keel's")

    class Meta:
        model = Message
        fields = ["id", "role", "text", "words", "intent", "understood", "activity_id", "run_id", "attachment_name",
                  "attachment_rows", "created_at"]


class MessageApi(ChatAttachmentUploads, APIView):
    parser_classes = [JSONParser, MultiPartParser]

    class InputSerializer(serializers.Serializer):
        text = StrictCharField(allow_blank=True, trim_whitespace=False,
                                     help_text="The user's message (at most 4000 characters).")
        attachment = serializers.FileField(required=False, allow_empty_file=True,
                                           help_text="Optional file of a kind a domain takes in the chat "
                                                     "(multipart only).")

    @extend_schema(
        # The schema says what the orchestrator checks after parsing: text that is not
        # blank, at most 4000 characters.
        request={"application/json": inline_serializer("MessageInput", {
                     "text": StrictCharField(max_length=4000, help_text="The user's message.")}),
                 "multipart/form-data": {"type": "object", "required": ["text"], "properties": {
                     "text": {"type": "string", "minLength": 1, "maxLength": 4000, "pattern": NOT_BLANK_NO_CONTROL},
                     "attachment": {"type": "string", "format": "binary",
                                    "description": "Optional file of a kind a domain takes in the chat, "
                                                   "within that kind's size limit."}}}},
        parameters=[IDEMPOTENCY_KEY_OPTIONAL],
        responses={201: MessageOutputSerializer,
                   400: OpenApiResponse(description="empty or oversized text; a wrong, oversized or malformed "
                                                    "attachment (with the line and the reason)"),
                   404: OpenApiResponse(description="no such conversation in your tenant"),
                   **idempotent_write_errors()},
        summary="Send a message; the reply streams as message.delta / message.reply events.")
    def post(self, request: Request, conversation_id: int) -> Response:
        membership = membership_for_user(request.user)
        conversation = conversation_get_for(membership, conversation_id)  # another tenant's: 404 first
        data = self.InputSerializer(data=request.data)
        if not data.is_valid():
            problems = "; ".join(f"{k}: {' '.join(str(m) for m in v)}" for k, v in data.errors.items())
            raise DomainError(_("Invalid message. %(problems)s")
                              % {"problems": problems}, extra={"errors": data.errors})
        attachment = None
        upload = data.validated_data.get("attachment")
        if upload is not None:
            attachment = attachment_read(upload)  # a file past its kind's limit is refused before reading it
        return receipt_response(message_post_once(
            membership=membership, conversation=conversation, text=data.validated_data["text"], attachment=attachment,
            key=idempotency_key(request), answer=lambda result: MessageOutputSerializer(result).data))

    @extend_schema(responses={200: MessageHistorySerializer(many=True)}, summary="The conversation's history.")
    def get(self, request: Request, conversation_id: int) -> Response:
        conversation = conversation_get_for(membership_for_user(request.user), conversation_id)
        messages = Message.objects.filter(conversation=conversation).order_by(*Message.READ_ORDER)
        return Response(MessageHistorySerializer(messages, many=True).data)


urlpatterns = [
    path("conversations/<int:conversation_id>/messages/", MessageApi.as_view(), name="api-messages"),
]
