"""/api/v1/payroll/ for the month's data: the tenant's attendance rules, a group's monthly
inputs (an upload per version), the year-to-date openings, and the employees' ID and bank
details from the HR export. Thin, as record_apis: parse, call a selector or a service, render;
an import's refusals answer 422 with every row and column (config.api's problem+json)."""
from __future__ import annotations

from datetime import date
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import IDEMPOTENCY_HEADER, DomainError, Forbidden, StrictCharField, idempotent_write_errors, results_of
from config.forms import query_flag
from config.parsers import MultiPartParser
from tenants.actors import Actor
from tenants.selectors import membership_for_user

from .record_apis import _input, _key, _receipt_response
from .records import selectors, services
from .records.month_inputs import TERM_NAMES, attendance_history, attendance_terms_on, inputs_versions, year_openings

STATUTE = {"overtime": "Labour Law of the PRC, art. 44", "hourly_wage": "monthly base ÷ paid_days_per_month "
           "÷ hours_per_day (21.75 and 8 by default)", "absence": "monthly base ÷ paid_days_per_month per unpaid day"}


def term_text(value) -> str:
    """A term as people write it: 1.5, 21.75, 3 (the column's four decimals dropped)."""
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _terms_json(source: Any) -> dict[str, Any]:
    return {name: term_text(getattr(source, name)) for name in TERM_NAMES}


def _rules_row_json(row) -> dict[str, Any]:
    return {"id": str(row.id), "effective_from": row.effective_from.isoformat(), **_terms_json(row),
            "note": row.note, "updated_by": row.updated_by.get_username() if row.updated_by_id else None,
            "created_at": row.created_at.isoformat()}


@extend_schema_field({"type": "string", "pattern": r"^[0-9]{1,4}(\.[0-9]{1,4})?$",
                      "description": "a decimal number, e.g. 21.75 or 1.5"})
class TermField(serializers.DecimalField):
    pass


def _term_field() -> serializers.DecimalField:
    return TermField(max_digits=8, decimal_places=4, required=False)


class AttendanceRulesApi(APIView):
    class InputSerializer(serializers.Serializer):
        effective_from = serializers.DateField()
        hours_per_day = _term_field()
        hours_per_week = _term_field()
        paid_days_per_month = _term_field()
        overtime_workday_rate = _term_field()
        overtime_restday_rate = _term_field()
        overtime_holiday_rate = _term_field()
        absence_deduction_rate = _term_field()
        sick_leave_pay_rate = _term_field()
        note = StrictCharField(max_length=2000, required=False, allow_blank=True)

        class Meta:
            ref_name = "AttendanceRulesInput"

    @extend_schema(responses=inline_serializer("AttendanceRules", {
        "in_force": serializers.JSONField(), "history": serializers.JSONField(), "statute": serializers.JSONField()}),
        summary="The attendance terms in force today, their statute and every change (every member)")
    def get(self, request: Request) -> Response:
        membership = membership_for_user(request.user)
        terms = attendance_terms_on(membership.tenant_id, timezone.localdate())
        return Response({"in_force": {**_terms_json(terms), "source": terms.source, "effective_from":
                                      terms.effective_from.isoformat() if terms.effective_from else None},
                         "history": [_rules_row_json(r) for r in attendance_history(membership.tenant_id)],
                         "statute": STATUTE})

    @extend_schema(request=InputSerializer, responses={201: OpenApiResponse(description="the new row"),
                                                       200: OpenApiResponse(description="the same terms were "
                                                                                        "already saved"),
                                                       409: OpenApiResponse(description="other terms are saved "
                                                                                        "from that date"),
                                                       422: OpenApiResponse(description="a term out of its bounds "
                                                                                        "(the statute's floors)")},
                   summary="Change the attendance terms from a date (a tenant admin)")
    def post(self, request: Request) -> Response:
        membership = membership_for_user(request.user)
        if not services.attendance_rules_may_change(membership.role):  # before the body is read
            raise Forbidden(_("Only a tenant admin may change the attendance rules."), code="admin_required")
        data = _input(self.InputSerializer, request)
        terms = {name: data[name] for name in TERM_NAMES if name in data}
        row, created = services.attendance_rules_set(actor=Actor.of_member(membership),
                                                     effective_from=data["effective_from"], terms=terms,
                                                     note=data.get("note", ""))
        return Response(_rules_row_json(row), status=201 if created else 200)


def _upload(request: Request) -> tuple[bytes, str]:
    upload = request.FILES.get("file")
    if upload is None:
        raise DomainError(_("Attach the file (CSV or XLSX) as the multipart field “file”."), code="file_required",
                          extra={"field": "file"})
    return upload.read(), upload.name or ""


FILE_BODY = {"multipart/form-data": {"type": "object", "required": ["file"], "properties": {
    "file": {"type": "string", "format": "binary", "description": "CSV or XLSX"}}}}
# The bounds period_checked enforces, said in the schema so a client knows them.
YEAR_SCHEMA = {"type": "integer", "minimum": services.YEARS[0], "maximum": services.YEARS[1]}
MONTH_SCHEMA = {"type": "integer", "minimum": services.MONTHS[0], "maximum": services.MONTHS[1]}


def year_parameter(required: bool = False) -> OpenApiParameter:
    return OpenApiParameter("year", YEAR_SCHEMA, required=required)


def month_parameter(required: bool = False) -> OpenApiParameter:
    return OpenApiParameter("month", MONTH_SCHEMA, required=required)


PERIOD_PARAMETERS = [year_parameter(required=True), month_parameter(required=True)]


def inputs_version_json(inputs) -> dict[str, Any]:
    return {"id": str(inputs.id), "year": inputs.year, "month": inputs.month, "version": inputs.version,
            "filename": inputs.filename, "sha256": inputs.sha256, "row_count": getattr(inputs, "row_count", None),
            "columns": inputs.columns,
            "unknown_columns": [c["header"] for c in inputs.columns if c["read_as"] == "unknown"],
            "uploaded_by": inputs.uploaded_by.get_username() if inputs.uploaded_by_id else None,
            "created_at": inputs.created_at.isoformat()}


class ColumnSerializer(serializers.Serializer):
    header = StrictCharField(allow_blank=True)
    read_as = StrictCharField(help_text="an input name, employee_no, name, or unknown")


class InputsVersionSerializer(serializers.Serializer):
    """The schema of inputs_version_json."""

    id = StrictCharField()
    year = serializers.IntegerField()
    month = serializers.IntegerField()
    version = serializers.IntegerField()
    filename = StrictCharField(allow_blank=True)
    sha256 = StrictCharField()
    row_count = serializers.IntegerField(allow_null=True)
    columns = ColumnSerializer(many=True)
    unknown_columns = serializers.ListField(child=StrictCharField(allow_blank=True))
    uploaded_by = StrictCharField(allow_null=True)
    created_at = serializers.DateTimeField()


class YearOpeningSerializer(serializers.Serializer):
    """The schema of opening_json: amounts as decimal strings."""

    employee_id = StrictCharField()
    employee_no = StrictCharField()
    name = StrictCharField()
    year = serializers.IntegerField()
    months_employed = serializers.IntegerField()
    cumulative_income = StrictCharField()
    cumulative_contributions = StrictCharField()
    cumulative_special_additional_deductions = StrictCharField()
    cumulative_tax_withheld = StrictCharField()
    source = StrictCharField(allow_blank=True)


class GroupInputsApi(APIView):
    parser_classes = [MultiPartParser]

    @extend_schema(parameters=[year_parameter(), month_parameter()],
                   responses=results_of(InputsVersionSerializer, "MonthlyInputsVersionList"),
                   summary="A group's imported monthly inputs, newest first (every member)")
    def get(self, request: Request, group_id: int) -> Response:
        membership = membership_for_user(request.user)
        group = selectors.group_get(membership.tenant_id, group_id)
        wanted_year, wanted_month = request.query_params.get("year"), request.query_params.get("month")
        year, month = services.period_checked(wanted_year or 2000, wanted_month or 1)
        year, month = (year if wanted_year else None), (month if wanted_month else None)
        versions = inputs_versions(tenant_id=membership.tenant_id, group_id=group.id, year=year, month=month)
        return Response({"results": [inputs_version_json(v) for v in versions]})

    @extend_schema(request=FILE_BODY, parameters=[*PERIOD_PARAMETERS, IDEMPOTENCY_HEADER],
                   responses={201: OpenApiResponse(description="the new version: its rows, columns and unknown "
                                                               "columns"),
                              **idempotent_write_errors(),
                              422: OpenApiResponse(description="rows refused (`refusals`: row, column, code, "
                                                               "message); nothing was imported")},
                   summary="Import a group's month of attendance and commission (CSV or XLSX; every member)")
    def post(self, request: Request, group_id: int) -> Response:
        membership = membership_for_user(request.user)
        selectors.group_get(membership.tenant_id, group_id)  # another tenant's: 404 before the file is read
        raw, filename = _upload(request)
        return _receipt_response(services.monthly_inputs_import(
            tenant=membership.tenant_id, group=group_id, year=request.query_params.get("year", ""),
            month=request.query_params.get("month", ""), file=raw, filename=filename, user=request.user,
            idempotency_key=_key(request)))


def opening_json(opening, employee) -> dict[str, Any]:
    return {"employee_id": str(opening.employee_id), "employee_no": employee.employee_no, "name": employee.name,
            "year": opening.year, "months_employed": opening.months_employed,
            "cumulative_income": str(opening.cumulative_income),
            "cumulative_contributions": str(opening.cumulative_contributions),
            "cumulative_special_additional_deductions": str(opening.cumulative_special_additional_deductions),
            "cumulative_tax_withheld": str(opening.cumulative_tax_withheld), "source": opening.source}


def openings_listed(tenant_id: int, year: int) -> list[dict[str, Any]]:
    found = year_openings(tenant_id, year)
    people = {e.id: e for e in selectors.employees_for(tenant_id) if e.id in found}
    return sorted((opening_json(o, people[pk]) for pk, o in found.items() if pk in people),
                  key=lambda o: o["employee_no"])


class YearOpeningsApi(APIView):
    parser_classes = [MultiPartParser]

    @extend_schema(parameters=[year_parameter()], responses=results_of(YearOpeningSerializer,
                                                                                  "YearOpeningList"),
        summary="The year-to-date openings of a year (this year by default; every member)")
    def get(self, request: Request) -> Response:
        membership = membership_for_user(request.user)
        year, _month = services.period_checked(request.query_params.get("year") or date.today().year, 1)
        return Response({"results": openings_listed(membership.tenant_id, year)})

    @extend_schema(request=FILE_BODY, parameters=[year_parameter(required=True),
                                                  OpenApiParameter("replace", bool), IDEMPOTENCY_HEADER],
                   responses={201: OpenApiResponse(description="imported"), **idempotent_write_errors(),
                              422: OpenApiResponse(description="rows refused (row, column, code); nothing "
                                                               "imported")},
                   summary="Import the previous system's year-to-date figures (an approver or a tenant admin; "
                           "replace=true: a tenant admin)")
    def post(self, request: Request) -> Response:
        membership = membership_for_user(request.user)
        replace = query_flag(request.query_params, "replace", default=False)
        raw, filename = _upload(request)
        return _receipt_response(services.year_openings_import(
            actor=Actor.of_member(membership), year=request.query_params.get("year", ""), file=raw,
            filename=filename, replace=replace, idempotency_key=_key(request)))


class EmployeeIdentitiesApi(APIView):
    parser_classes = [MultiPartParser]

    @extend_schema(request=FILE_BODY, parameters=[IDEMPOTENCY_HEADER],
                   responses={200: OpenApiResponse(description="who was updated (never a number)"),
                              **idempotent_write_errors()},
                   summary="Import ID type and number, bank account and bank name from the HR export (a tenant "
                           "admin)")
    def post(self, request: Request) -> Response:
        membership = membership_for_user(request.user)
        raw, filename = _upload(request)
        return _receipt_response(services.employee_identities_import(
            actor=Actor.of_member(membership), file=raw, filename=filename, idempotency_key=_key(request)))


__all__ = ["AttendanceRulesApi", "EmployeeIdentitiesApi", "GroupInputsApi", "YearOpeningsApi"]
