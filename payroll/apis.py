"""/api/v1/payroll/: its URLs; the trial payroll (试算: computes for the given people, writes
nothing) and a city's rules. The system of record's templates, groups, employees and
snapshots are in record_apis."""
import re
from decimal import Decimal
from typing import Any

from django.urls import path
from django.utils import timezone
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import DomainError, StrictCharField, StrictIntegerField, strict_decimal
from tenants.selectors import membership_for_user

from .record_apis import (
    EmployeeDetailApi,
    EmployeeListApi,
    GroupDetailApi,
    GroupListApi,
    SnapshotDetailApi,
    SnapshotListApi,
    SnapshotRestoreApi,
    TemplateDetailApi,
    TemplateListApi,
)
from .month_data_apis import AttendanceRulesApi, EmployeeIdentitiesApi, GroupInputsApi, YearOpeningsApi
from . import month_apis
from .records import evaluator
from .records import calculation, rules, selectors, trial

# An amount a month in a trial: 0 … 10,000,000 with at most two decimals, plain ASCII digits.
# The code accepts exactly what this pattern matches (with Python's re.search, as the schema
# fuzzer reads it), so the schema and the code cannot drift apart.
MAX_MONTHLY_AMOUNT = Decimal("10000000")
AMOUNT_PATTERN = r"^(?:(?:0|[1-9][0-9]{0,6})(?:\.[0-9]{1,2})?|10000000(?:\.00?)?)$"
AMOUNT_MAX_LENGTH = 16
MAX_TRIAL_EMPLOYEES = 1000
# A trial's answer is about 2.6 KB a payslip (employee × month), ~70 times what asked for it:
# at most this many payslips an answer (~3 MB), refused before any is computed.
MAX_TRIAL_PAYSLIPS = 1200
MAX_ALLOWANCES = 20
MAX_ALLOWANCE_NAME = 100


def _money(amount: Decimal) -> str:
    return format(amount.quantize(calculation.CENT), "f")


AMOUNT_SCHEMA = {"type": "string", "pattern": AMOUNT_PATTERN, "maxLength": AMOUNT_MAX_LENGTH,
                 "description": "yuan a month, 0 to 10,000,000 with at most 2 decimals, e.g. \"30000.00\"",
                 "example": "30000.00"}


@extend_schema_field(AMOUNT_SCHEMA)
class MonthlyAmountField(serializers.Field):
    """A monthly amount as a string of ASCII digits; each way to get it wrong has its own message."""

    def to_internal_value(self, data: Any) -> Decimal:
        if not isinstance(data, str):
            raise serializers.ValidationError(_("Send the amount as a string of digits, like \"30000.00\"."),
                                              code="invalid")
        if len(data) <= AMOUNT_MAX_LENGTH and re.search(AMOUNT_PATTERN, data):
            return Decimal(data.strip())
        try:
            amount = strict_decimal(data[:40])
        except ValueError:
            raise serializers.ValidationError(
                _("“%(value)s” is not an amount: write digits with at most one decimal point, like 30000.50.")
                % {"value": data[:40]}, code="invalid")
        if amount < 0:
            raise serializers.ValidationError(_("The amount must not be negative."), code="negative")
        if amount > MAX_MONTHLY_AMOUNT:
            raise serializers.ValidationError(
                _("%(value)s is more than 10,000,000 a month; that is not a plausible monthly amount.")
                % {"value": data.strip()[:40]}, code="too_large")
        if amount.as_tuple().exponent < -2:
            raise serializers.ValidationError(_("Use at most 2 decimal places."), code="too_precise")
        raise serializers.ValidationError(_("Write the amount as plain digits without blanks, a sign or leading "
                                            "zeros, like 30000.50."), code="invalid")

    def to_representation(self, value: Decimal) -> str:
        return _money(value)


# OpenAPI 3.0 cannot bound a key (propertyNames is 3.1's): the names' limit is said, and a longer
# name is a 400 naming it.
@extend_schema_field({"type": "object", "additionalProperties": AMOUNT_SCHEMA, "maxProperties": MAX_ALLOWANCES,
    "description": f"fixed allowances by item name (at most {MAX_ALLOWANCE_NAME} characters each), "
                   "e.g. {\"岗位津贴\": \"500\"}"})
class AllowancesField(serializers.DictField):
    def __init__(self, **kwargs):
        super().__init__(child=MonthlyAmountField(), **kwargs)

    def to_internal_value(self, data: Any) -> dict[str, Decimal]:
        if isinstance(data, dict) and len(data) > MAX_ALLOWANCES:
            raise serializers.ValidationError(_("At most %(max)s allowances.") % {"max": MAX_ALLOWANCES},
                                              code="too_many")
        if isinstance(data, dict) and any(len(name) > MAX_ALLOWANCE_NAME for name in data):
            raise serializers.ValidationError(_("An allowance's name may be at most %(max)s characters.")
                                              % {"max": MAX_ALLOWANCE_NAME}, code="max_length")
        return super().to_internal_value(data)


@extend_schema_field({"type": "string", "enum": rules.city_names(),
                      "description": "a city, in English or Chinese (any case); \"cn\" is the nationwide default"})
class CityField(StrictCharField):
    """A city Keel has rules for; an unknown one is a field error naming it and the known ones."""

    def __init__(self, **kwargs):
        super().__init__(max_length=60, **kwargs)

    def to_internal_value(self, data: Any) -> str:
        name = super().to_internal_value(data)
        try:
            return rules.city_find(name).key
        except rules.UnknownCity as err:
            raise serializers.ValidationError(err.message, code=err.code)


def _source_data(source: rules.Source) -> dict[str, Any]:
    return {"authority": source.authority, "title": source.title, "year": source.year, "url": source.url}


def _bounds_data(bounds: rules.Bounds) -> dict[str, str]:
    return {"floor": _money(bounds.floor), "cap": _money(bounds.cap)}


def _rate_range(allowed: tuple[Decimal, Decimal] | None) -> list[str] | None:
    return None if allowed is None else [selectors.rate_text(allowed[0]), selectors.rate_text(allowed[1])]


def _rules_data(city_rules: rules.CityRules) -> dict[str, Any]:
    return {
        "city": city_rules.key, "name": city_rules.name, "name_zh": city_rules.name_zh,
        "effective_from": city_rules.effective_from.isoformat(),
        "effective_to": city_rules.effective_to.isoformat() if city_rules.effective_to else None,
        "current": city_rules.current, "verified": city_rules.verified, "source": _source_data(city_rules.source),
        "social_base": _bounds_data(city_rules.social_base),
        "housing_fund_base": _bounds_data(city_rules.housing_fund_base),
        "contributions": [{
            "kind": rule.kind, "name": str(rules.KIND_LABELS[rule.kind]),
            "employee_rate": selectors.rate_text(rule.employee_rate),
            "employer_rate": selectors.rate_text(rule.employer_rate),
            "employee_range": _rate_range(rule.employee_range), "employer_range": _rate_range(rule.employer_range),
            "base": _bounds_data(rule.base), "includes": list(rule.includes), "note": rules.note_text(rule.note),
        } for rule in city_rules.contributions],
        "merged": [{"kind": kind, "into": into} for kind, into in city_rules.merged.items()],
        "notes": [rules.note_text(note) for note in city_rules.notes],
    }


def _month_data(month: evaluator.EvaluatedMonth) -> dict[str, Any]:
    contributions = month.contributions
    return {
        "month": month.month, "gross": _money(month.gross),
        "contributions": {
            "employee": _money(contributions.employee), "employer": _money(contributions.employer),
            "items": [{"kind": line.kind, "name": str(rules.KIND_LABELS[line.kind]), "base": _money(line.base),
                       "employee_rate": selectors.rate_text(line.employee_rate), "employee": _money(line.employee),
                       "employer_rate": selectors.rate_text(line.employer_rate), "employer": _money(line.employer),
                       "formulas": line.formulas} for line in contributions.items],
            "formulas": contributions.formulas,
        },
        "taxable_cumulative": _money(month.taxable_cumulative), "tax": _money(month.tax), "net": _money(month.net),
        "formulas": month.formulas,
        "items": [{"code": i.code, "name": i.name, "kind": i.kind, "formula": i.formula,
                   "base": None if i.base is None else _money(i.base),
                   "rate": None if i.rate is None else selectors.rate_text(i.rate), "amount": _money(i.amount)}
                  for i in month.items],
        "missing_inputs": list(month.missing_inputs),
    }


def _trial_data(result: evaluator.EvaluatedTrial, template_code: str) -> dict[str, Any]:
    city_rules = result.rules
    return {
        "template_code": template_code, "inputs": list(result.inputs),
        "missing_inputs": list(result.missing_inputs),
        "city": city_rules.key, "city_name": city_rules.name, "city_name_zh": city_rules.name_zh,
        "rules": {"source": _source_data(city_rules.source),
                  "effective_from": city_rules.effective_from.isoformat(),
                  "effective_to": city_rules.effective_to.isoformat() if city_rules.effective_to else None,
                  "current": city_rules.current, "verified": city_rules.verified},
        "employees": [{"employee_no": e.employee_no, "months": [_month_data(m) for m in e.months]}
                      for e in result.employees],
        "totals": [{"month": t.month, "gross": _money(t.gross), "employer_cost": _money(t.employer_cost),
                    "tax": _money(t.tax), "net": _money(t.net)} for t in result.totals],
    }


# The answers' schemas; the views build plain dicts (a 1,000-employee, 12-month trial is
# 72,000 contribution lines: DRF serializers would take seconds to render them).
class SourceOutputSerializer(serializers.Serializer):
    authority = StrictCharField()
    title = StrictCharField()
    year = serializers.IntegerField()
    url = StrictCharField(allow_blank=True)


class BoundsOutputSerializer(serializers.Serializer):
    floor = StrictCharField()
    cap = StrictCharField()


class RuleOutputSerializer(serializers.Serializer):
    kind = StrictCharField()
    name = StrictCharField()
    employee_rate = StrictCharField()
    employer_rate = StrictCharField()
    employee_range = serializers.ListField(child=StrictCharField(), allow_null=True)
    employer_range = serializers.ListField(child=StrictCharField(), allow_null=True)
    base = BoundsOutputSerializer()
    includes = serializers.ListField(child=StrictCharField())
    note = StrictCharField(allow_blank=True)


class MergedOutputSerializer(serializers.Serializer):
    kind = StrictCharField()
    into = StrictCharField()


class CityRulesOutputSerializer(serializers.Serializer):
    city = StrictCharField()
    name = StrictCharField()
    name_zh = StrictCharField()
    effective_from = serializers.DateField()
    effective_to = serializers.DateField(allow_null=True)
    current = serializers.BooleanField(help_text="false: the rules' period has ended and no newer one is known")
    verified = serializers.BooleanField(help_text="false: figures recalled, not yet checked against the source")
    source = SourceOutputSerializer()
    social_base = BoundsOutputSerializer()
    housing_fund_base = BoundsOutputSerializer()
    contributions = RuleOutputSerializer(many=True)
    merged = MergedOutputSerializer(many=True)
    notes = serializers.ListField(child=StrictCharField())


class ContributionLineOutputSerializer(serializers.Serializer):
    kind = StrictCharField()
    name = StrictCharField()
    base = StrictCharField()
    employee_rate = StrictCharField()
    employee = StrictCharField()
    employer_rate = StrictCharField()
    employer = StrictCharField()
    formulas = serializers.DictField(child=StrictCharField())


class ContributionsOutputSerializer(serializers.Serializer):
    employee = StrictCharField()
    employer = StrictCharField()
    items = ContributionLineOutputSerializer(many=True)
    formulas = serializers.DictField(child=StrictCharField())


class TrialItemOutputSerializer(serializers.Serializer):
    code = StrictCharField()
    name = StrictCharField()
    kind = StrictCharField()
    formula = StrictCharField()
    base = StrictCharField(allow_null=True, help_text="the base actually used (after the rule's floor and cap)")
    rate = StrictCharField(allow_null=True, help_text="the rate actually used, a fraction")
    amount = StrictCharField()


class TrialMonthOutputSerializer(serializers.Serializer):
    month = serializers.IntegerField()
    gross = StrictCharField()
    contributions = ContributionsOutputSerializer()
    taxable_cumulative = StrictCharField()
    tax = StrictCharField()
    net = StrictCharField()
    formulas = serializers.DictField(child=StrictCharField())
    items = TrialItemOutputSerializer(many=True, help_text="every item of the template, evaluated")
    missing_inputs = serializers.ListField(child=StrictCharField(), help_text="inputs not given: computed as zero")


class TrialEmployeeOutputSerializer(serializers.Serializer):
    employee_no = StrictCharField()
    months = TrialMonthOutputSerializer(many=True)


class TrialRulesOutputSerializer(serializers.Serializer):
    source = SourceOutputSerializer()
    effective_from = serializers.DateField()
    effective_to = serializers.DateField(allow_null=True)
    current = serializers.BooleanField()
    verified = serializers.BooleanField()


class TrialTotalOutputSerializer(serializers.Serializer):
    month = serializers.IntegerField()
    gross = StrictCharField()
    employer_cost = StrictCharField()
    tax = StrictCharField()
    net = StrictCharField()


class TrialOutputSerializer(serializers.Serializer):
    template_code = StrictCharField()
    inputs = serializers.ListField(child=StrictCharField(), help_text="the monthly inputs the items read")
    missing_inputs = serializers.ListField(child=StrictCharField(),
                                          help_text="inputs some employee's month was not given: computed as zero")
    city = StrictCharField()
    city_name = StrictCharField()
    city_name_zh = StrictCharField()
    rules = TrialRulesOutputSerializer()
    employees = TrialEmployeeOutputSerializer(many=True)
    totals = TrialTotalOutputSerializer(many=True)


MAX_INPUT_NAMES = 20
INPUT_NAME = re.compile(r"^[a-z][a-z0-9_]{0,59}$")


@extend_schema_field({"type": "object", "maxProperties": calculation.MAX_MONTHS,
                      "additionalProperties": {"type": "object", "additionalProperties": AMOUNT_SCHEMA,
                                               "maxProperties": MAX_INPUT_NAMES},
                      "description": "monthly inputs by month (\"1\"–\"12\"), then by name, e.g. "
                                     "{\"1\": {\"sales_amount\": \"200000\"}}"})
class MonthlyInputsField(serializers.Field):
    """{month: {name: amount}}: which names a template reads is checked against the template."""

    def to_internal_value(self, data: Any) -> dict[int, dict[str, Decimal]]:
        if not isinstance(data, dict) or len(data) > calculation.MAX_MONTHS:
            raise serializers.ValidationError(_("Send the inputs as {month: {name: amount}}, at most 12 months."),
                                              code="invalid")
        out: dict[int, dict[str, Decimal]] = {}
        amount = MonthlyAmountField()
        for month, values in data.items():
            if not (isinstance(month, str) and month.isascii() and month.isdigit()
                    and 1 <= int(month) <= calculation.MAX_MONTHS):
                raise serializers.ValidationError(_("“%(month)s” is not a month: use \"1\" to \"12\".")
                                                  % {"month": str(month)[:20]}, code="invalid")
            if not isinstance(values, dict) or len(values) > MAX_INPUT_NAMES:
                raise serializers.ValidationError(_("Month %(month)s: send {name: amount}, at most %(max)s names.")
                                                  % {"month": month, "max": MAX_INPUT_NAMES}, code="invalid")
            for name in values:
                if not (isinstance(name, str) and INPUT_NAME.match(name)):
                    raise serializers.ValidationError(_("“%(name)s” is not an input's name.")
                                                      % {"name": str(name)[:60]}, code="invalid")
            out[int(month)] = {name: amount.to_internal_value(value) for name, value in values.items()}
        return out

    def to_representation(self, value: Any) -> Any:
        return value


class TrialEmployeeInputSerializer(serializers.Serializer):
    employee_no = StrictCharField(max_length=64)
    base_salary = MonthlyAmountField()
    allowances = AllowancesField(required=False)
    special_additional_deductions = MonthlyAmountField(required=False, help_text="专项附加扣除, a month")
    contribution_base = MonthlyAmountField(required=False, help_text="the social insurance and housing fund "
                                                                      "base before its floor and cap; default: the gross")
    inputs = MonthlyInputsField(required=False)

    class Meta:
        ref_name = "PayrollTrialEmployeeInput"


class TrialApi(APIView):
    class InputSerializer(serializers.Serializer):
        city = CityField()
        months = StrictIntegerField(min_value=1, max_value=calculation.MAX_MONTHS, required=False, default=3)
        employees = serializers.ListField(child=TrialEmployeeInputSerializer(), min_length=1,
                                          max_length=MAX_TRIAL_EMPLOYEES)
        template_code = StrictCharField(max_length=80, required=False,
                                        help_text="the template whose items to compute; default: the city's "
                                                  "general monthly template")

        class Meta:
            ref_name = "PayrollTrialInput"

        def validate(self, data: dict[str, Any]) -> dict[str, Any]:
            payslips = len(data["employees"]) * data["months"]
            if payslips > MAX_TRIAL_PAYSLIPS:
                raise serializers.ValidationError({"employees": _(
                    "A trial answers at most %(max)s payslips (employees × months); this one would be %(count)s. "
                    "Send fewer employees or months, in several trials.") % {"max": MAX_TRIAL_PAYSLIPS, "count": payslips}},
                    code="too_large")
            return data

    @extend_schema(request=InputSerializer, responses=TrialOutputSerializer,
                   summary="Compute a trial payroll (试算) for a few months; writes nothing")
    def post(self, request: Request) -> Response:
        membership_for_user(request.user)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        template = _trial_template(data["city"], data.get("template_code"))
        try:
            structure = trial.template_structure(template)
        except evaluator.FormulaError as err:
            raise DomainError(_("The template “%(code)s” cannot be computed: %(problem)s")
                              % {"code": template.code, "problem": str(err)}, code="template_not_computable",
                              extra={"errors": {"template_code": [str(err)]}})
        employees, inputs = [], {}
        for n, e in enumerate(data["employees"]):
            employees.append(calculation.EmployeeInput(
                employee_no=e["employee_no"], base_salary=e["base_salary"], allowances=e.get("allowances", {}),
                special_additional_deductions=e.get("special_additional_deductions", calculation.ZERO),
                contribution_base=e.get("contribution_base")))
            given = e.get("inputs") or {}
            for month, values in given.items():
                unknown = sorted(set(values) - set(structure.inputs))
                if unknown or month > data["months"]:
                    problem = (_("the template “%(code)s” reads no input “%(name)s”; it reads: %(known)s")
                               % {"code": template.code, "name": unknown[0],
                                  "known": ", ".join(structure.inputs) or _("none")} if unknown else
                               _("month %(month)s is past the %(months)s months asked for")
                               % {"month": month, "months": data["months"]})
                    raise DomainError(_("Invalid request.") + " employees: " + problem, code="invalid",
                                      extra={"errors": {"employees": {str(n): {"inputs": [problem]}}}})
            inputs[e["employee_no"]] = given
        # Months 1..N of this year: the rules in force in month 1, as the group's trial and the card read them.
        result = evaluator.trial(employees, rules.city_rules(data["city"], timezone.localdate().replace(month=1, day=1)),
                                 structure, months=data["months"], inputs=inputs)
        return Response(_trial_data(result, template.code))


def _trial_template(city: str, code: str | None):
    """The template a trial computes: the one named (mainland China's only: the trial knows its
    rules), else the city's general monthly template."""
    from .models import PayrollTemplate

    if code is None:
        template = trial.general_template(city)
    else:
        template = PayrollTemplate.objects.filter(code=code).order_by("-version").first()
        if template is None or not trial.trial_applies(template.region):
            known = PayrollTemplate.objects.filter(region__startswith="CN").order_by("code").values_list(
                "code", flat=True).distinct()
            problem = (_("No template “%(code)s” the trial can compute; known: %(known)s")
                       % {"code": code[:80], "known": ", ".join(known)})
            raise DomainError(_("Invalid request.") + " template_code: " + problem, code="invalid",
                              extra={"errors": {"template_code": [problem]}})
    if template is None:
        raise DomainError(_("No general monthly template is installed to compute a trial."), code="no_template")
    return template


class GroupTrialApi(APIView):
    class FilterSerializer(serializers.Serializer):
        months = StrictIntegerField(min_value=1, max_value=calculation.MAX_MONTHS, required=False, default=3)

        class Meta:
            ref_name = "PayrollGroupTrialFilter"

    @extend_schema(parameters=[FilterSerializer], responses=TrialOutputSerializer,
                   summary="A trial of a group's own items for its employees; writes nothing")
    def get(self, request: Request, group_id: int) -> Response:
        membership = membership_for_user(request.user)
        group = selectors.group_get(membership.tenant_id, group_id)
        months = request.query_params.get("months") or "3"  # `?months=` is the default, as no months
        if not (months.isascii() and months.isdigit() and 1 <= int(months) <= calculation.MAX_MONTHS):
            raise DomainError(_("months must be 1 to 12."), code="invalid",
                              extra={"errors": {"months": [_("months must be 1 to 12.")]}})
        try:
            structure = trial.group_structure(group)
            city_rules = trial.rules_for(group.template.region if group.template_id else "",
                                         timezone.localdate().year, city=group.city)
        except evaluator.FormulaError as err:
            raise DomainError(str(err), code="group_not_computable") from None
        except trial.NoCityRules as none:
            raise DomainError(_("No social insurance and housing fund rules for %(place)s: the group cannot be "
                                "computed.") % {"place": none.place}, code="no_city_rules") from None
        today = timezone.localdate()
        people = [p for p in trial.people_of_group(group, today) if p.pay is not None]
        result = evaluator.trial([trial.person_input(p) for p in people], city_rules, structure, months=int(months))
        return Response(_trial_data(result, group.template.code if group.template_id else ""))


class CityRulesApi(APIView):
    class FilterSerializer(serializers.Serializer):
        city = CityField(help_text="the city whose rules to answer")

        class Meta:
            ref_name = "PayrollCityRulesFilter"

    @extend_schema(parameters=[FilterSerializer], responses={
        200: CityRulesOutputSerializer, 404: OpenApiResponse(description="no rules for this city")},
        summary="A city's social insurance and housing fund rules in effect today")
    def get(self, request: Request) -> Response:
        membership_for_user(request.user)
        city = request.query_params.get("city")
        if city is None or not city.strip():
            raise DomainError(_("Name a city: ?city=shanghai (or 上海)."), code="city_required",
                              extra={"errors": {"city": [_("This field is required.")]}})
        return Response(_rules_data(rules.city_rules(city, timezone.localdate())))


urlpatterns = [
    path("templates/", TemplateListApi.as_view(), name="api-payroll-templates"),
    path("templates/<int:template_id>/", TemplateDetailApi.as_view(), name="api-payroll-template"),
    path("groups/", GroupListApi.as_view(), name="api-payroll-groups"),
    path("groups/<int:group_id>/", GroupDetailApi.as_view(), name="api-payroll-group"),
    path("groups/<int:group_id>/inputs/", GroupInputsApi.as_view(), name="api-payroll-group-inputs"),
    path("attendance-rules/", AttendanceRulesApi.as_view(), name="api-payroll-attendance-rules"),
    path("year-openings/", YearOpeningsApi.as_view(), name="api-payroll-year-openings"),
    path("employees/identities/", EmployeeIdentitiesApi.as_view(), name="api-payroll-employee-identities"),
    path("groups/<int:group_id>/trial/", GroupTrialApi.as_view(), name="api-payroll-group-trial"),
    path("employees/", EmployeeListApi.as_view(), name="api-payroll-employees"),
    path("employees/<int:employee_id>/", EmployeeDetailApi.as_view(), name="api-payroll-employee"),
    path("snapshots/", SnapshotListApi.as_view(), name="api-payroll-snapshots"),
    path("snapshots/<int:snapshot_id>/", SnapshotDetailApi.as_view(), name="api-payroll-snapshot"),
    path("snapshots/<int:snapshot_id>/restore/", SnapshotRestoreApi.as_view(), name="api-payroll-snapshot-restore"),
    path("trial/", TrialApi.as_view(), name="api-payroll-trial"),
    path("rules/", CityRulesApi.as_view(), name="api-payroll-rules"),
    path("months/", month_apis.MonthListApi.as_view(), name="api-payroll-months"),
    path("months/<int:month_id>/", month_apis.MonthDetailApi.as_view(), name="api-payroll-month"),
    path("months/<int:month_id>/inputs/", month_apis.MonthInputsApi.as_view(), name="api-payroll-month-inputs"),
    path("months/<int:month_id>/payslips/", month_apis.MonthPayslipsApi.as_view(), name="api-payroll-month-payslips"),
    path("months/<int:month_id>/bank-file/", month_apis.MonthBankFileApi.as_view(), name="api-payroll-month-bank-file"),
    path("months/<int:month_id>/tax-declaration/", month_apis.MonthTaxDeclarationApi.as_view(),
         name="api-payroll-month-tax-declaration"),
    path("months/<int:month_id>/reopen/", month_apis.MonthReopenApi.as_view(), name="api-payroll-month-reopen"),
]
