"""/api/v1/payroll/ templates, groups, employees and snapshots: the system of record over HTTP.
Thin: parse, call a selector or a service, render. Writes answer the service's receipt
(status and body) as is, so a replay is byte-identical to the first answer."""
from typing import Any

from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import (
    ID_PATTERN,
    IDEMPOTENCY_HEADER,
    DomainError,
    InvalidId,
    StrictCharField,
    idempotent_write_errors,
    results_of,
)
from config.forms import id_parse
from tenants.actors import Actor
from tenants.selectors import membership_for_user

from .records import selectors, services
from .records.masking import sensitive_visible, shown

# A payroll write is a few hundred bytes; anything near this is a mistake or an attack.
MAX_WRITE_BODY_BYTES = 16 * 1024


class PayloadTooLarge(DomainError):
    status_code = 413
    code = "payload_too_large"


def _input(serializer_class: type[serializers.Serializer], request: Request) -> dict[str, Any]:
    """Size check, then parse (malformed JSON answers DRF's 400), then validate with one readable message."""
    length = request.META.get("CONTENT_LENGTH") or "0"
    if length.isascii() and length.isdigit() and int(length) > MAX_WRITE_BODY_BYTES:
        raise PayloadTooLarge(_("The request body is %(int)s bytes; payroll writes accept at most %(MAX_WRITE_BODY_BYTES)s bytes.")
                              % {"int": int(length), "MAX_WRITE_BODY_BYTES": MAX_WRITE_BODY_BYTES})
    serializer = serializer_class(data=request.data)
    if not serializer.is_valid():
        messages = []
        for field, errors in serializer.errors.items():
            text = " ".join(str(e) for e in (errors if isinstance(errors, list) else [errors]))
            messages.append(text if field == "non_field_errors" else f"{field}: {text}")
        raise DomainError(_("Invalid request.") + " " + " ".join(messages), code="invalid", extra={"errors": serializer.errors})
    return serializer.validated_data


def _receipt_response(receipt: services.Receipt) -> Response:
    headers = {"Idempotency-Replayed": "true"} if receipt.replayed else {}
    return Response(receipt.body, status=receipt.status_code, headers=headers)


def _key(request: Request) -> str:
    return request.headers.get("Idempotency-Key", "")


@extend_schema_field({"type": "string", "pattern": ID_PATTERN, "description": "an id (a string of digits)"})
class BusinessIdField(serializers.CharField):
    """A business id in a request: a string of digits or an int; anything else is a clear 400."""

    def to_internal_value(self, data: Any) -> int:
        try:
            return id_parse(data, what="This value")  # ASCII digits only: "²" passes isdigit() and crashes int()
        except InvalidId as err:
            raise serializers.ValidationError(err.message, code=err.code)


class ItemOutputSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    code = StrictCharField()
    name = StrictCharField()
    kind = StrictCharField()
    rate = serializers.SerializerMethodField()
    base = StrictCharField()
    formula = StrictCharField()

    def get_rate(self, obj) -> str | None:
        return selectors.rate_text(obj.rate)


class TemplateItemOutputSerializer(ItemOutputSerializer):
    name_zh = StrictCharField()


class TemplateOutputSerializer(serializers.Serializer):
    id = StrictCharField()
    code = StrictCharField()
    version = serializers.IntegerField()
    name = StrictCharField()
    name_zh = StrictCharField()
    description = StrictCharField()
    region = StrictCharField()
    pay_frequency = StrictCharField()
    currency = StrictCharField()
    variables = serializers.ListField(child=StrictCharField())


class TemplateDetailOutputSerializer(TemplateOutputSerializer):
    items = TemplateItemOutputSerializer(many=True)


class GroupOutputSerializer(serializers.Serializer):
    id = StrictCharField()
    name = StrictCharField()
    template_id = StrictCharField(allow_null=True)
    template_version = serializers.IntegerField(allow_null=True)
    created_at = serializers.DateTimeField()
    items = ItemOutputSerializer(many=True)
    employee_count = serializers.SerializerMethodField()

    def get_employee_count(self, obj) -> int:
        return len(obj.employees.all())


class EmployeeOutputSerializer(serializers.Serializer):
    id = StrictCharField()
    employee_no = StrictCharField()
    name = StrictCharField()
    department = StrictCharField()
    location = StrictCharField()
    base_salary = serializers.DecimalField(max_digits=12, decimal_places=2)
    currency = StrictCharField()
    group_id = StrictCharField(allow_null=True)
    id_type = StrictCharField()
    # Sensitive: raw for a tenant admin, "•••• 1234" for everyone else (payroll.records.masking).
    id_number = serializers.SerializerMethodField()
    bank_account = serializers.SerializerMethodField()
    bank_name = StrictCharField()

    def get_id_number(self, obj) -> str:
        return shown(obj.id_number, visible=self.context.get("sensitive_visible", False))

    def get_bank_account(self, obj) -> str:
        return shown(obj.bank_account, visible=self.context.get("sensitive_visible", False))


class SnapshotOutputSerializer(serializers.Serializer):
    id = StrictCharField()
    label = StrictCharField()
    checksum = StrictCharField()
    created_at = serializers.DateTimeField()


class SnapshotDetailOutputSerializer(SnapshotOutputSerializer):
    configuration = serializers.JSONField()


class ImportReceiptSerializer(serializers.Serializer):
    group_id = StrictCharField()
    template_id = StrictCharField()
    template_version = serializers.IntegerField()
    group_name = StrictCharField()
    items_created = serializers.IntegerField()


class SnapshotReceiptSerializer(serializers.Serializer):
    snapshot_id = StrictCharField()
    checksum = StrictCharField()
    label = StrictCharField(required=False)


class RestoreRequestedSerializer(serializers.Serializer):
    run_id = StrictCharField(help_text="The run whose restore waits for a second person's approval")
    status = StrictCharField()
    snapshot_id = StrictCharField()
    detail = StrictCharField()


class TemplateListApi(APIView):
    @extend_schema(responses=results_of(TemplateOutputSerializer, "TemplateList"))
    def get(self, request: Request) -> Response:
        membership_for_user(request.user)
        return Response({"results": TemplateOutputSerializer(selectors.templates_all(), many=True).data})


class TemplateDetailApi(APIView):
    @extend_schema(responses=TemplateDetailOutputSerializer)
    def get(self, request: Request, template_id: int) -> Response:
        membership_for_user(request.user)
        return Response(TemplateDetailOutputSerializer(selectors.template_get(template_id)).data)


class GroupListApi(APIView):
    class InputSerializer(serializers.Serializer):
        template_id = BusinessIdField()
        name = StrictCharField(max_length=200)

        class Meta:
            ref_name = "PayrollGroupImportInput"

    @extend_schema(responses=results_of(GroupOutputSerializer, "GroupList"))
    def get(self, request: Request) -> Response:
        membership = membership_for_user(request.user)
        groups = selectors.groups_for(membership.tenant_id)
        return Response({"results": GroupOutputSerializer(groups, many=True).data})

    @extend_schema(request=InputSerializer, responses={201: ImportReceiptSerializer, 202: OpenApiResponse(
                       inline_serializer("ImportApprovalRequired", {
                           "run_id": StrictCharField(), "status": StrictCharField(),
                           "group_name": StrictCharField(), "template_id": StrictCharField(),
                           "routing": StrictCharField(), "detail": StrictCharField()}),
                       description="over the approval matrix's limits: a run now waits "
                                                           "for a second person's approval"),
                              404: OpenApiResponse(description="no such template"), **idempotent_write_errors()},
                   parameters=[IDEMPOTENCY_HEADER],
                   summary="Import a template into a new payroll group (approver or admin)")
    def post(self, request: Request) -> Response:
        membership = membership_for_user(request.user)
        data = _input(self.InputSerializer, request)
        return _receipt_response(services.template_import(
            actor=Actor.of_member(membership), template_id=data["template_id"], group_name=data["name"],
            idempotency_key=_key(request)))


class GroupDetailApi(APIView):
    @extend_schema(responses=GroupOutputSerializer)
    def get(self, request: Request, group_id: int) -> Response:
        membership = membership_for_user(request.user)
        return Response(GroupOutputSerializer(selectors.group_get(membership.tenant_id, group_id)).data)


class EmployeeListApi(APIView):
    @extend_schema(responses=results_of(EmployeeOutputSerializer, "EmployeeList"))
    def get(self, request: Request) -> Response:
        membership = membership_for_user(request.user)
        return Response({"results": EmployeeOutputSerializer(
            selectors.employees_for(membership.tenant_id), many=True,
            context={"sensitive_visible": sensitive_visible(request.user, membership.tenant_id)}).data})


class EmployeeDetailApi(APIView):
    @extend_schema(responses=EmployeeOutputSerializer)
    def get(self, request: Request, employee_id: int) -> Response:
        membership = membership_for_user(request.user)
        return Response(EmployeeOutputSerializer(
            selectors.employee_get(membership.tenant_id, employee_id),
            context={"sensitive_visible": sensitive_visible(request.user, membership.tenant_id)}).data)


class SnapshotListApi(APIView):
    class InputSerializer(serializers.Serializer):
        label = StrictCharField(max_length=200)

        class Meta:
            ref_name = "PayrollSnapshotCreateInput"

    @extend_schema(responses=results_of(SnapshotOutputSerializer, "SnapshotList"))
    def get(self, request: Request) -> Response:
        membership = membership_for_user(request.user)
        return Response({"results": SnapshotOutputSerializer(selectors.snapshots_for(membership.tenant_id),
                                                             many=True).data})

    @extend_schema(request=InputSerializer, responses={201: SnapshotReceiptSerializer, **idempotent_write_errors()},
                   parameters=[IDEMPOTENCY_HEADER], summary="Snapshot the tenant's payroll configuration")
    def post(self, request: Request) -> Response:
        membership = membership_for_user(request.user)
        data = _input(self.InputSerializer, request)
        return _receipt_response(services.snapshot_create(actor=Actor.of_member(membership), label=data["label"],
                                                          idempotency_key=_key(request)))


class SnapshotDetailApi(APIView):
    @extend_schema(responses=SnapshotDetailOutputSerializer)
    def get(self, request: Request, snapshot_id: int) -> Response:
        membership = membership_for_user(request.user)
        return Response(SnapshotDetailOutputSerializer(selectors.snapshot_get(membership.tenant_id, snapshot_id)).data)


class SnapshotRestoreApi(APIView):
    @extend_schema(request=None, responses={202: RestoreRequestedSerializer, **idempotent_write_errors()},
                   parameters=[IDEMPOTENCY_HEADER],
                   summary="Ask to restore the whole tenant to a snapshot (a tenant admin; a second person approves)")
    def post(self, request: Request, snapshot_id: int) -> Response:
        membership = membership_for_user(request.user)
        length = request.META.get("CONTENT_LENGTH") or "0"
        if length.isascii() and length.isdigit() and int(length) > MAX_WRITE_BODY_BYTES:
            raise PayloadTooLarge(_("A restore takes no body; this one is %(int)s bytes.") % {"int": int(length)})
        return _receipt_response(services.snapshot_restore(actor=Actor.of_member(membership), snapshot_id=snapshot_id,
                                                           idempotency_key=_key(request)))
