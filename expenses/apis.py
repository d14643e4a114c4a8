"""/api/v1/expenses/: the expense system of record over HTTP. Thin: parse, call a selector
or a service, render. Writes take an Idempotency-Key header and answer the service's
receipt as is, so a replay is the same answer."""
from typing import Any

from django.urls import path
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import (
    IDEMPOTENCY_HEADER,
    DomainError,
    StrictCharField,
    StrictIntegerField,
    idempotent_write_errors,
    results_of,
)
from config.parsers import JSONParser, MultiPartParser
from tenants.actors import Actor
from tenants.selectors import membership_for_user

from .records import selectors, services
from .models import Category, ClaimStatus
from .uploads import InvoiceUploads


def _key(request: Request) -> str:
    return request.headers.get("Idempotency-Key", "")


def _input(serializer_class: type[serializers.Serializer], request: Request | Any) -> dict[str, Any]:
    """A request's body (or the query params given instead), validated, or a 400 naming each field."""
    serializer = serializer_class(data=request.data if isinstance(request, Request) else request)
    if not serializer.is_valid():
        text = " ".join(f"{field}: {' '.join(str(e) for e in errors)}" for field, errors in serializer.errors.items())
        raise DomainError(_("Invalid request.") + " " + text, code="invalid", extra={"errors": serializer.errors})
    return serializer.validated_data


def _receipt(receipt: services.Receipt) -> Response:
    return Response(receipt.body, status=receipt.status_code,
                    headers={"Idempotency-Replayed": "true"} if receipt.replayed else {})


def _file(request: Request) -> tuple[str, bytes]:
    upload = request.FILES.get("file")
    if upload is None:
        raise DomainError(_("Attach the invoice as the multipart field `file`."), code="file_required")
    if upload.size > services.MAX_INVOICE_BYTES:
        raise services.PayloadTooLarge(_("The invoice is %(value)s MB; the limit is %(limit)s MB.")
                                       % {"value": format(upload.size / 1048576, '.1f'), "limit": services.MAX_INVOICE_BYTES // 1048576},
                                       code="invoice_too_large")
    return upload.name, upload.read()


class ClaimOutputSerializer(serializers.Serializer):
    id = StrictCharField()
    application_id = StrictCharField(source="id")
    claimant = StrictCharField(source="claimant.username")
    category = StrictCharField()
    city = StrictCharField()
    start_date = serializers.DateField()
    end_date = serializers.DateField()
    nights = serializers.IntegerField()
    amount = serializers.DecimalField(max_digits=12, decimal_places=2)
    currency = StrictCharField()
    per_night = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True)
    status = StrictCharField()
    policy_verdict = StrictCharField()
    policy_limit = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True)
    policy_source = StrictCharField()
    submitted_at = serializers.DateTimeField(allow_null=True)
    invoices = serializers.SerializerMethodField()

    def get_invoices(self, claim) -> list[dict]:
        return [{"id": str(i.id), "filename": i.filename, "content_type": i.content_type, "size": i.size,
                 "checksum": i.checksum} for i in claim.invoices.all()]


class ClaimListApi(APIView):
    class InputSerializer(serializers.Serializer):
        category = serializers.ChoiceField(choices=Category.values)
        city = StrictCharField(max_length=80)
        start_date = serializers.DateField()
        nights = StrictIntegerField(min_value=0, max_value=services.MAX_NIGHTS)
        amount = StrictCharField(max_length=20)
        currency = StrictCharField(max_length=3, default="CNY")
        description = StrictCharField(max_length=500, required=False, allow_blank=True, default="")

    class FilterSerializer(serializers.Serializer):
        # An empty value is no filter (`?status=`), as a form with a blank choice sends it.
        status = serializers.ChoiceField(choices=ClaimStatus.choices, required=False, allow_blank=True)

    @extend_schema(parameters=[FilterSerializer], responses=results_of(ClaimOutputSerializer, "ClaimList"))
    def get(self, request: Request) -> Response:
        filters = _input(self.FilterSerializer, request.query_params)
        claims = selectors.claims_for(membership_for_user(request.user))
        if filters.get("status"):
            claims = claims.filter(status=filters["status"])
        return Response({"results": ClaimOutputSerializer(claims[:200], many=True).data})

    @extend_schema(request=InputSerializer, responses={201: dict, **idempotent_write_errors()},
                   parameters=[IDEMPOTENCY_HEADER])
    def post(self, request: Request) -> Response:
        membership = membership_for_user(request.user)
        data = _input(self.InputSerializer, request)
        return _receipt(services.claim_create(actor=Actor.of_member(membership), idempotency_key=_key(request), **data))


class ClaimDetailApi(APIView):
    @extend_schema(responses=ClaimOutputSerializer)
    def get(self, request: Request, claim_id: int) -> Response:
        return Response(ClaimOutputSerializer(selectors.claim_get_for(membership_for_user(request.user), claim_id)).data)


class ClaimInvoiceApi(InvoiceUploads, APIView):
    parser_classes = [MultiPartParser]

    @extend_schema(request={"multipart/form-data": {"type": "object", "required": ["file"], "properties": {
        "file": {"type": "string", "format": "binary", "minLength": 1}}}}, responses={201: dict, **idempotent_write_errors()},
        parameters=[IDEMPOTENCY_HEADER])
    def post(self, request: Request, claim_id: int) -> Response:
        membership = membership_for_user(request.user)
        selectors.claim_get_for(membership, claim_id)  # another tenant's claim: 404 before anything
        name, content = _file(request)
        return _receipt(services.invoice_upload(actor=Actor.of_member(membership), claim_id=claim_id, filename=name,
                                                content=content, idempotency_key=_key(request)))


class InvoiceStageApi(InvoiceUploads, APIView):
    parser_classes = [MultiPartParser]

    @extend_schema(request={"multipart/form-data": {"type": "object", "required": ["file"], "properties": {
        "file": {"type": "string", "format": "binary", "minLength": 1}}}}, responses={201: dict, 422: OpenApiResponse(
            description="not a PDF, PNG or JPEG file")})
    def post(self, request: Request) -> Response:
        name, content = _file(request)
        invoice = services.invoice_stage(actor=Actor.of_member(membership_for_user(request.user)), filename=name,
                                         content=content)
        return Response({"invoice_id": str(invoice.id), "filename": invoice.filename, "size": invoice.size,
                         "checksum": invoice.checksum}, status=201)


class ClaimActionApi(APIView):
    parser_classes = [JSONParser]
    action = ""

    class InputSerializer(serializers.Serializer):
        comment = StrictCharField(max_length=2000, required=False, allow_blank=True, default="")

    @extend_schema(request=InputSerializer, responses={200: dict, **idempotent_write_errors()},
                   parameters=[IDEMPOTENCY_HEADER])
    def post(self, request: Request, claim_id: int) -> Response:
        membership = membership_for_user(request.user)
        selectors.claim_get_for(membership, claim_id)
        data = _input(self.InputSerializer, request)
        actor, key = Actor.of_member(membership), _key(request)
        if self.action == "submit":
            receipt = services.claim_submit(actor=actor, claim_id=claim_id, idempotency_key=key)
        elif self.action == "pay":
            receipt = services.claim_pay(actor=actor, claim_id=claim_id, idempotency_key=key)
        else:
            receipt = services.claim_decide(actor=actor, claim_id=claim_id, verdict=self.action,
                                            comment=data["comment"], idempotency_key=key)
        return _receipt(receipt)


urlpatterns = [
    path("claims/", ClaimListApi.as_view(), name="api-expense-claims"),
    path("claims/<int:claim_id>/", ClaimDetailApi.as_view(), name="api-expense-claim"),
    path("claims/<int:claim_id>/invoices/", ClaimInvoiceApi.as_view(), name="api-expense-claim-invoices"),
    path("claims/<int:claim_id>/submit/", ClaimActionApi.as_view(action="submit"), name="api-expense-claim-submit"),
    path("claims/<int:claim_id>/approve/", ClaimActionApi.as_view(action="approved"), name="api-expense-claim-approve"),
    path("claims/<int:claim_id>/reject/", ClaimActionApi.as_view(action="rejected"), name="api-expense-claim-reject"),
    path("claims/<int:claim_id>/pay/", ClaimActionApi.as_view(action="pay"), name="api-expense-claim-pay"),
    path("invoices/", InvoiceStageApi.as_view(), name="api-expense-invoices"),
]
