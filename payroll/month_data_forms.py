"""The attendance rules form (a tenant admin's): each term checked where it is typed, against the
same bounds the service holds (services.attendance.TERM_BOUNDS), so a mistake is named in its field."""
from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from .forms import EARLIEST, LATEST
from .records.month_inputs import TERM_NAMES
from .records.services.attendance import TERM_BOUNDS

TERM_LABELS = {
    "hours_per_day": _("Hours a day"),
    "hours_per_week": _("Hours a week"),
    "paid_days_per_month": _("Paid days a month"),
    "overtime_workday_rate": _("Overtime on workdays (× hourly wage)"),
    "overtime_restday_rate": _("Overtime on rest days (× hourly wage)"),
    "overtime_holiday_rate": _("Overtime on statutory holidays (× hourly wage)"),
    "absence_deduction_rate": _("Absence deduction (× daily wage per unpaid day)"),
    "sick_leave_pay_rate": _("Sick-leave pay (share of the daily wage)"),
}


class AttendanceRulesForm(forms.Form):
    effective_from = forms.DateField(label=_("Effective from"), widget=forms.DateInput(attrs={"type": "date"}),
                                     input_formats=["%Y-%m-%d"])
    note = forms.CharField(label=_("Why (shown in the history)"), required=False, max_length=2000,
                           widget=forms.TextInput)

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        for name in TERM_NAMES:
            low, high = TERM_BOUNDS[name]
            self.fields[name] = forms.DecimalField(label=TERM_LABELS[name], min_value=low, max_value=high,
                                                   max_digits=8, decimal_places=4,
                                                   widget=forms.TextInput(attrs={"inputmode": "decimal"}))

    def clean_effective_from(self):
        value = self.cleaned_data["effective_from"]
        if not EARLIEST <= value <= LATEST:
            raise forms.ValidationError(_("A date between 2000-01-01 and 2100-12-31."))
        return value

    def term_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in TERM_NAMES]

    def terms(self) -> dict[str, Any]:
        return {name: self.cleaned_data[name] for name in TERM_NAMES}
