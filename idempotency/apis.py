"""What the generic apps' API views share for a write that takes an optional
Idempotency-Key (the IETF draft's header): the header, its schema and the answer."""
from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter
from rest_framework.request import Request
from rest_framework.response import Response

from config.api import IDEMPOTENCY_KEY_MAX_LENGTH

from .services import Receipt

IDEMPOTENCY_KEY_OPTIONAL = OpenApiParameter(
    "Idempotency-Key", {"type": "string", "minLength": 1, "maxLength": IDEMPOTENCY_KEY_MAX_LENGTH, "pattern": "\\S"},
    OpenApiParameter.HEADER, required=False,
    description="Optional, unique per request (not blank, at most 200 characters): a retry with the same key "
                "gets the first answer and creates nothing. Same key with a different body answers 422; while "
                "the first is still running, 409.")


def idempotency_key(request: Request) -> str | None:
    """The request's Idempotency-Key header; None when it sent none."""
    return request.headers.get("Idempotency-Key")


def receipt_response(receipt: Receipt) -> Response:
    headers = {"Idempotency-Replayed": "true"} if receipt.replayed else {}
    return Response(receipt.body, status=receipt.status_code, headers=headers)
