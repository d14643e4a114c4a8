"""The two forms people write payroll data with: an employee's pay (approvers and tenant admins)
and a city rules period's figures (Keel's staff). They check what a person typed, field by
field, so a mistake is named where it was made; the services they feed validate again
(services.pay_checked, rules.period_checked) and stay the authority."""
from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from .models import DeductionKind, EmployeePay
from .records.rules import HOUSING_FUND, KIND_LABELS, MAX_RATE_PERCENT, CityRules

MAX_AMOUNT = Decimal(10_000_000)
ALLOWANCE_LINES = 5
EARLIEST, LATEST = date(2000, 1, 1), date(2100, 12, 31)


class AmountField(forms.DecimalField):
    """Yuan: 0 … 10,000,000, two decimals; thousands separators are allowed because people type them."""

    def __init__(self, **kwargs: Any):
        kwargs.setdefault("min_value", 0)
        kwargs.setdefault("max_value", MAX_AMOUNT)
        kwargs.setdefault("decimal_places", 2)
        kwargs.setdefault("max_digits", 12)
        super().__init__(**kwargs)
        self.widget.attrs.update({"inputmode": "decimal", "step": "0.01"})

    def to_python(self, value: Any) -> Decimal | None:
        if isinstance(value, str):
            value = value.strip().replace(",", "").replace(" ", "")
        return super().to_python(value)

    def widget_attrs(self, widget: forms.Widget) -> dict[str, Any]:
        # A text input: a number input would drop "18,000" before the server could read it.
        attrs = super().widget_attrs(widget)
        attrs.pop("step", None)
        return attrs


class _TextNumberInput(forms.TextInput):
    input_type = "text"


class PayForm(forms.Form):
    """A new pay from a date on: base salary, allowances as name/amount lines, the monthly special
    additional deductions by kind."""

    key = forms.CharField(widget=forms.HiddenInput, required=False, max_length=64)
    effective_from = forms.DateField(label=_("Effective from"), widget=forms.DateInput(attrs={"type": "date"}),
                                     input_formats=["%Y-%m-%d"])
    base_salary = AmountField(label=_("Base salary"), widget=_TextNumberInput)

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        for i in range(1, ALLOWANCE_LINES + 1):
            self.fields[f"allowance_name_{i}"] = forms.CharField(
                label=_("Allowance %(n)s: name") % {"n": i}, required=False, max_length=60)
            self.fields[f"allowance_amount_{i}"] = AmountField(
                label=_("Allowance %(n)s: amount") % {"n": i}, required=False, widget=_TextNumberInput)
        for kind, label in DeductionKind.choices:
            self.fields[f"deduction_{kind}"] = AmountField(label=label, required=False, widget=_TextNumberInput)

    @classmethod
    def initial_from(cls, pay: EmployeePay | None, *, on: date) -> dict[str, Any]:
        """The form filled with the pay in force, dated the first of this month."""
        initial: dict[str, Any] = {"effective_from": on.replace(day=1).isoformat()}
        if pay is None:
            return initial
        initial["base_salary"] = pay.base_salary
        for i, (name, amount) in enumerate(list((pay.allowances or {}).items())[:ALLOWANCE_LINES], start=1):
            initial[f"allowance_name_{i}"], initial[f"allowance_amount_{i}"] = name, amount
        for kind, amount in (pay.deductions_breakdown or {}).items():
            initial[f"deduction_{kind}"] = amount
        return initial

    def allowance_lines(self) -> list[tuple[forms.BoundField, forms.BoundField]]:
        return [(self[f"allowance_name_{i}"], self[f"allowance_amount_{i}"]) for i in range(1, ALLOWANCE_LINES + 1)]

    def deduction_fields(self) -> list[forms.BoundField]:
        return [self[f"deduction_{kind}"] for kind in DeductionKind.values]

    def clean_effective_from(self) -> date:
        day = self.cleaned_data["effective_from"]
        if not EARLIEST <= day <= LATEST:
            raise forms.ValidationError(_("Enter a date from 2000-01-01 to 2100-12-31."), code="out_of_range")
        return day

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        seen: set[str] = set()
        for i in range(1, ALLOWANCE_LINES + 1):
            name = (data.get(f"allowance_name_{i}") or "").strip()
            amount = data.get(f"allowance_amount_{i}")
            if f"allowance_amount_{i}" in self.errors:
                continue
            if name and amount is None:
                self.add_error(f"allowance_amount_{i}", _("Enter the allowance's amount."))
            elif amount is not None and not name:
                self.add_error(f"allowance_name_{i}", _("Name the allowance."))
            elif name and name.casefold() in seen:
                self.add_error(f"allowance_name_{i}", _("This allowance is already listed."))
            seen.add(name.casefold())
        return data

    def pay(self) -> dict[str, Any]:
        """The pay as services.employee_pay_record takes it (amounts as text)."""
        data = self.cleaned_data
        allowances = {}
        for i in range(1, ALLOWANCE_LINES + 1):
            name = (data.get(f"allowance_name_{i}") or "").strip()
            if name:
                allowances[name] = str(data[f"allowance_amount_{i}"])
        kinds = {kind: str(data[f"deduction_{kind}"]) for kind in DeductionKind.values
                 if data.get(f"deduction_{kind}") is not None}
        return {"base_salary": str(data["base_salary"]), "allowances": allowances, "deductions_breakdown": kinds,
                "effective_from": data["effective_from"].isoformat()}


class RateField(forms.DecimalField):
    """A contribution rate in percent, as the rules keep it: 0 … 30, at most four decimals."""

    def __init__(self, **kwargs: Any):
        super().__init__(min_value=0, max_value=MAX_RATE_PERCENT, decimal_places=4, max_digits=8,
                         widget=_TextNumberInput(attrs={"inputmode": "decimal", "size": 6}), **kwargs)


class CityRulePeriodForm(forms.Form):
    """One period's figures: each insurance's employee and employer rate, the housing fund's,
    each base's floor and cap, the source, whether it was verified and a note. Its fields are
    the period's own (a city whose insurance has its own base gets that base's floor and cap)."""

    version = forms.CharField(widget=forms.HiddenInput)
    source_authority = forms.CharField(label=_("Issuing authority"), max_length=200)
    source_title = forms.CharField(label=_("Notice title"), max_length=300)
    source_year = forms.IntegerField(label=_("Year"), min_value=1990, max_value=2100)
    source_url = forms.URLField(label=_("Link"), required=False, max_length=500, assume_scheme="https")
    verified = forms.BooleanField(label=_("Checked against the published notice"), required=False)
    note = forms.CharField(label=_("Note on this change"), required=False, max_length=2000,
                           widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, *args: Any, period: CityRules, **kwargs: Any):
        self.period = period
        kwargs.setdefault("prefix", f"p{period.effective_from:%Y%m%d}")
        super().__init__(*args, **kwargs)
        self.rate_rows: list[tuple[str, str, str]] = []  # (label, employee field, employer field)
        self.base_rows: list[tuple[str, str, str]] = []  # (label, floor field, cap field)
        for name, label in (("social_base", _("Social insurance base")), ("housing_fund_base", _("Housing fund base"))):
            self._base(name, label)
        for rule in period.contributions:
            label = KIND_LABELS.get(rule.kind, rule.kind)
            for side in ("employee_rate", "employer_rate"):
                words = _("Employee rate") if side == "employee_rate" else _("Employer rate")
                self.fields[f"{rule.kind}__{side}"] = RateField(label=f"{label}: {words}")
            self.rate_rows.append((label, f"{rule.kind}__employee_rate", f"{rule.kind}__employer_rate"))
            if rule.kind != HOUSING_FUND and rule.base != period.social_base:
                self._base(rule.kind, label)

    def _base(self, name: str, label: Any) -> None:
        self.fields[f"{name}__floor"] = AmountField(label=f"{label}: {_('Base floor')}", widget=_TextNumberInput)
        self.fields[f"{name}__cap"] = AmountField(label=f"{label}: {_('Base cap')}", widget=_TextNumberInput)
        self.base_rows.append((label, f"{name}__floor", f"{name}__cap"))

    @classmethod
    def initial_from(cls, period: CityRules, row: Any) -> dict[str, Any]:
        hundred = Decimal(100)
        initial: dict[str, Any] = {
            "version": row.updated_at.isoformat(), "source_authority": period.source.authority,
            "source_title": period.source.title, "source_year": period.source.year, "source_url": period.source.url,
            "verified": period.verified, "note": row.note,
            "social_base__floor": period.social_base.floor, "social_base__cap": period.social_base.cap,
            "housing_fund_base__floor": period.housing_fund_base.floor,
            "housing_fund_base__cap": period.housing_fund_base.cap}
        for rule in period.contributions:
            initial[f"{rule.kind}__employee_rate"] = _plain(rule.employee_rate * hundred)
            initial[f"{rule.kind}__employer_rate"] = _plain(rule.employer_rate * hundred)
            if rule.kind != HOUSING_FUND and rule.base != period.social_base:
                initial[f"{rule.kind}__floor"], initial[f"{rule.kind}__cap"] = rule.base.floor, rule.base.cap
        return initial

    def source_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in ("source_authority", "source_title", "source_year", "source_url")]

    def rows(self) -> dict[str, list[tuple[Any, forms.BoundField, forms.BoundField]]]:
        return {"rates": [(label, self[a], self[b]) for label, a, b in self.rate_rows],
                "bases": [(label, self[a], self[b]) for label, a, b in self.base_rows]}

    def clean(self) -> dict[str, Any]:
        """Field-level errors for what the period's own data bounds: a floor above its cap, a
        rate outside the range the period allows (the housing fund's, the injury insurance's)."""
        data = super().clean()
        for _label, floor, cap in self.base_rows:
            if data.get(floor) is not None and data.get(cap) is not None and data[floor] > data[cap]:
                self.add_error(cap, _("The cap is below the floor."))
        hundred = Decimal(100)
        for rule in self.period.contributions:
            for side, allowed in (("employee_rate", rule.employee_range), ("employer_rate", rule.employer_range)):
                name, value = f"{rule.kind}__{side}", data.get(f"{rule.kind}__{side}")
                if allowed is None or value is None:
                    continue
                low, high = allowed[0] * hundred, allowed[1] * hundred
                if not low <= value <= high:
                    self.add_error(name, _("Allowed: %(low)s %% to %(high)s %%.")
                                   % {"low": _plain(low), "high": _plain(high)})
            if rule.kind == "injury" and data.get("injury__employee_rate"):
                self.add_error("injury__employee_rate", _("Employees pay no work injury insurance."))
        return data

    def figures(self) -> dict[str, Any]:
        """What services.city_rule_period_change takes."""
        data = self.cleaned_data
        rates = {rule.kind: {"employee_rate": data[f"{rule.kind}__employee_rate"],
                             "employer_rate": data[f"{rule.kind}__employer_rate"]} for rule in self.period.contributions}
        bases = {name.rsplit("__", 1)[0]: {"floor": data[name], "cap": data[cap]} for _l, name, cap in self.base_rows}
        return {"version": data["version"], "rates": rates, "bases": bases, "verified": data["verified"],
                "note": data["note"], "source": {"authority": data["source_authority"], "title": data["source_title"],
                                                 "year": data["source_year"], "url": data["source_url"]}}


def _plain(value: Decimal) -> str:
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text
