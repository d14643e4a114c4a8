"""/api/v1/payroll/months/: the payroll month. Start one (202 with its run; 409 naming the
first when it exists), list and read them, import its inputs, read its payslips (ID and
account numbers masked but for admins and the approver deciding it), download its files
(closed months only) and ask to reopen it (an admin; 202 with the run). Thin, as record_apis."""
from __future__ import annotations

from django.http import HttpResponse
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import ID_PATTERN, IDEMPOTENCY_HEADER, Conflict, DomainError, StrictCharField, idempotent_write_errors
from config.forms import id_parse
from config.parsers import MultiPartParser
from tenants.selectors import membership_for_user

from .month_data_apis import FILE_BODY, _upload, year_parameter
from .models import FileKind, MonthStatus
from .record_apis import BusinessIdField, _input, _key, _receipt_response
from .records import services
from .records.months import month_reopen, month_start
from .records.months.reads import month_file, month_get, month_json, months_for, payslips_json
from .records.services.month_inputs import period_checked

STARTED = inline_serializer("PayrollMonthStarted", {"id": StrictCharField(), "run_id": StrictCharField()})
MONTH = inline_serializer("PayrollMonth", {
    "id": StrictCharField(), "group": StrictCharField(), "group_name": StrictCharField(),
    "year": serializers.IntegerField(), "month": serializers.IntegerField(), "status": StrictCharField(),
    "stale": serializers.BooleanField(), "totals": serializers.DictField(), "employees": serializers.IntegerField(),
    "inputs_version": serializers.IntegerField(allow_null=True), "run_id": StrictCharField(allow_null=True),
    "files": serializers.DictField()})
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def _closed(month) -> None:
    if month.status != MonthStatus.CLOSED:
        raise Conflict(_("The files exist for a closed month only; this one is %(status)s.") % {"status": month.status},
                       code="month_not_closed", extra={"status": month.status})


def _download(month, kind: str, filename: str, content_type: str) -> HttpResponse:
    found = month_file(month, kind)
    if found is None:  # closed before its files existed: cannot happen, but never a 500
        raise Conflict(_("This month has no such file."), code="file_missing")
    response = HttpResponse(bytes(found.content), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["X-Checksum-SHA256"] = found.sha256
    return response


# A list answered as {"results": [...]}: named `…_list` by config.api's AutoSchema, so its
# operation id does not collide with the month's own (`…_retrieve`).
MONTH_LIST = inline_serializer("PayrollMonthList", {"results": serializers.ListSerializer(child=MONTH)})
MONTH_LIST.keel_results = True


class MonthListApi(APIView):
    class InputSerializer(serializers.Serializer):
        group = BusinessIdField()
        year = serializers.IntegerField(min_value=services.YEARS[0], max_value=services.YEARS[1])
        month = serializers.IntegerField(min_value=services.MONTHS[0], max_value=services.MONTHS[1])

        class Meta:
            ref_name = "PayrollMonthStart"

    @extend_schema(parameters=[OpenApiParameter("group", {"type": "string", "pattern": ID_PATTERN}),
                               year_parameter()],
                   responses=MONTH_LIST,
                   summary="The tenant's payroll months (of a group, of a year)")
    def get(self, request: Request) -> Response:
        membership = membership_for_user(request.user)
        group, year = request.query_params.get("group"), request.query_params.get("year")
        group_id = id_parse(group, what="group") if group is not None else None
        checked_year = period_checked(year, 1)[0] if year is not None else None
        found = months_for(membership.tenant_id, group_id=group_id, year=checked_year)
        return Response({"results": [month_json(m) for m in found]})

    @extend_schema(request=InputSerializer, responses={
        202: STARTED, 404: OpenApiResponse(description="no such group in your tenant"),
        409: OpenApiResponse(description="that month exists: `id` and `run_id` name it")},
        summary="Start a group's payroll month: the agent gathers, computes, asks one approval, closes, verifies")
    def post(self, request: Request) -> Response:
        membership = membership_for_user(request.user)
        data = _input(self.InputSerializer, request)
        started = month_start(membership=membership, group_id=data["group"], year=data["year"], month=data["month"])
        return Response({"id": str(started.month.id), "run_id": str(started.run.id)}, status=202)


class MonthDetailApi(APIView):
    @extend_schema(responses=MONTH, summary="A payroll month: status, totals, inputs version, files")
    def get(self, request: Request, month_id: int) -> Response:
        membership = membership_for_user(request.user)
        return Response(month_json(month_get(membership.tenant_id, month_id)))


class MonthInputsApi(APIView):
    parser_classes = [MultiPartParser]

    @extend_schema(request=FILE_BODY, parameters=[IDEMPOTENCY_HEADER],
                   responses={201: OpenApiResponse(description="the new version: its rows, columns, unknown columns"),
                              **idempotent_write_errors(),
                              422: OpenApiResponse(description="rows refused (row, column, code, message)")},
                   summary="Import the month's attendance and commission (CSV or XLSX) as its next inputs version")
    def post(self, request: Request, month_id: int) -> Response:
        membership = membership_for_user(request.user)
        month = month_get(membership.tenant_id, month_id)
        if month.status == MonthStatus.CLOSED:
            raise Conflict(_("This month is closed: reopen it before importing new inputs."), code="month_closed")
        raw, filename = _upload(request)
        return _receipt_response(services.monthly_inputs_import(
            tenant=membership.tenant_id, group=month.group_id, year=month.year, month=month.month, file=raw,
            filename=filename, user=request.user, idempotency_key=_key(request)))


class MonthPayslipsApi(APIView):
    @extend_schema(responses=inline_serializer("PayrollMonthPayslips", {"results": serializers.ListField()}),
                   summary="The month's payslips, every item with its formula (ID and account numbers masked but "
                           "for admins and the approver deciding the month)")
    def get(self, request: Request, month_id: int) -> Response:
        membership = membership_for_user(request.user)
        return Response({"results": payslips_json(membership, month_get(membership.tenant_id, month_id))})


class FileFormatNegotiation(DefaultContentNegotiation):
    """`?format=` names the file's format here (csv, xlsx), not a renderer: a refusal is still
    problem+json, which the first renderer gives."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class MonthBankFileApi(APIView):
    content_negotiation_class = FileFormatNegotiation

    @extend_schema(parameters=[OpenApiParameter("format", str, enum=["csv", "xlsx"])],
                   responses={(200, "text/csv"): bytes, (200, XLSX): bytes,
                              409: OpenApiResponse(description="the month is not closed")},
                   summary="The bank payment file of a closed month (CSV or XLSX)")
    def get(self, request: Request, month_id: int) -> HttpResponse:
        membership = membership_for_user(request.user)
        fmt = request.query_params.get("format", "csv")
        if fmt not in ("csv", "xlsx"):
            raise DomainError(_("format must be csv or xlsx."), code="invalid_format", extra={"field": "format"})
        month = month_get(membership.tenant_id, month_id)
        _closed(month)
        kind = FileKind.BANK_CSV if fmt == "csv" else FileKind.BANK_XLSX
        return _download(month, kind, f"bank-{month.year}-{month.month:02d}.{fmt}",
                         "text/csv; charset=utf-8" if fmt == "csv" else XLSX)


class MonthTaxDeclarationApi(APIView):
    @extend_schema(responses={(200, XLSX): bytes, 409: OpenApiResponse(description="the month is not closed")},
                   summary="The income tax withholding declaration of a closed month (XLSX)")
    def get(self, request: Request, month_id: int) -> HttpResponse:
        membership = membership_for_user(request.user)
        month = month_get(membership.tenant_id, month_id)
        _closed(month)
        return _download(month, FileKind.TAX_XLSX, f"iit-{month.year}-{month.month:02d}.xlsx", XLSX)


class MonthReopenApi(APIView):
    class InputSerializer(serializers.Serializer):
        reason = StrictCharField(max_length=2000)

        class Meta:
            ref_name = "PayrollMonthReopen"

    @extend_schema(request=InputSerializer, responses={202: inline_serializer("PayrollMonthReopenStarted", {
        "run_id": StrictCharField()}), 409: OpenApiResponse(description="the month is not closed, or a reopen "
                                                                       "is already asked")}, summary="Ask to reopen a closed month (a tenant admin; a second person approves)")
    def post(self, request: Request, month_id: int) -> Response:
        membership = membership_for_user(request.user)
        data = _input(self.InputSerializer, request)
        run = month_reopen(membership=membership, month_id=month_id, reason=data["reason"])
        return Response({"run_id": str(run.id)}, status=202)
