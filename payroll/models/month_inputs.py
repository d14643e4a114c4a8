"""The month's data a payroll month reads: the tenant's attendance rules (one row per change,
so a month computed again reads the terms that were in force), each group's monthly inputs as
imported (every version kept), and the year-to-date figures of a customer that starts mid-year."""
from decimal import Decimal

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from config.ids import BusinessIdField

__all__ = ["AttendanceRules", "MonthlyInputs", "MonthlyInputRow", "YearOpening", "INPUT_NAMES"]

# The evaluator's input variables a monthly import fills, in the order HR exports them.
INPUT_NAMES = ("personal_leave_days", "sick_leave_days", "overtime_workday_hours", "overtime_restday_hours",
               "overtime_holiday_hours", "sales_amount", "other_amount")


def _rate(default: str, **kwargs) -> models.DecimalField:
    return models.DecimalField(max_digits=8, decimal_places=4, default=Decimal(default), **kwargs)


class AttendanceRules(models.Model):
    """A tenant's working-hours system and attendance pay terms from a date on (Labour Law
    art. 44 sets the overtime floors). Rows are never edited: a change is a new row, so the
    history says what was in force when. Rates are fractions: 1.5 is 150 %."""

    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="attendance_rules")
    effective_from = models.DateField()
    hours_per_day = _rate("8")
    hours_per_week = _rate("40")
    paid_days_per_month = _rate("21.75")
    overtime_workday_rate = _rate("1.5")
    overtime_restday_rate = _rate("2.0")
    overtime_holiday_rate = _rate("3.0")
    absence_deduction_rate = _rate("1.0")
    sick_leave_pay_rate = _rate("0.8")
    note = models.TextField(blank=True, help_text="why the terms were changed, in the changer's words")
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("attendance rules"), _("attendance rules")
        ordering = ["tenant", "-effective_from"]
        constraints = [models.UniqueConstraint(fields=["tenant", "effective_from"], name="payroll_attendance_from")]

    def __str__(self) -> str:
        return f"attendance rules from {self.effective_from}"


class MonthlyInputs(models.Model):
    """One import of a group's month (attendance and commission figures). A second import is
    a new version; the earlier ones stay, so a closed month can say which version it read.
    `columns`: [{header, read_as}] — every header as the file gave it, with the input name it
    was read as, or "unknown"; `refusals`: [{row, column, code, message}]."""

    id = BusinessIdField()
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="+")
    group = models.ForeignKey("payroll.PayrollGroup", on_delete=models.CASCADE, related_name="monthly_inputs")
    year = models.PositiveIntegerField()
    month = models.PositiveSmallIntegerField()
    version = models.PositiveIntegerField()
    filename = models.CharField(max_length=255, blank=True)
    sha256 = models.CharField(max_length=64)
    columns = models.JSONField(default=list, blank=True)
    refusals = models.JSONField(default=list, blank=True)
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                    related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("monthly inputs"), _("monthly inputs")
        ordering = ["group", "year", "month", "-version"]
        constraints = [models.UniqueConstraint(fields=["group", "year", "month", "version"],
                                               name="payroll_monthly_inputs_version")]

    def __str__(self) -> str:
        return f"{self.group_id} {self.year}-{self.month:02d} v{self.version}"


class MonthlyInputRow(models.Model):
    """One employee's figures in one import: {input name: "decimal string"} (strings, so no
    float touches money) and the unknown columns' raw values, kept as the file gave them."""

    inputs = models.ForeignKey(MonthlyInputs, on_delete=models.CASCADE, related_name="rows")
    employee = models.ForeignKey("payroll.Employee", on_delete=models.CASCADE, related_name="+")
    values = models.JSONField(default=dict)
    extra = models.JSONField(default=dict, blank=True)

    class Meta:
        verbose_name, verbose_name_plural = _("monthly input row"), _("monthly input rows")
        constraints = [models.UniqueConstraint(fields=["inputs", "employee"], name="payroll_monthly_input_row")]

    def __str__(self) -> str:
        return f"{self.inputs_id}: {self.employee_id}"


def _money() -> models.DecimalField:
    return models.DecimalField(max_digits=14, decimal_places=2, default=Decimal("0"))


class YearOpening(models.Model):
    """An employee's year-to-date figures from the previous payroll system, imported once, so
    the cumulative withholding of a customer that starts mid-year continues from them.
    `cumulative_contributions` is the special deduction (专项扣除): the employee's share of
    pension, medical, unemployment and housing fund."""

    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="+")
    employee = models.ForeignKey("payroll.Employee", on_delete=models.CASCADE, related_name="year_openings")
    year = models.PositiveIntegerField()
    months_employed = models.PositiveSmallIntegerField()
    cumulative_income = _money()
    cumulative_contributions = _money()
    cumulative_special_additional_deductions = _money()
    cumulative_tax_withheld = _money()
    # Where the figures came from, in words: the file's name and who imported it.
    source = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("year-to-date opening"), _("year-to-date openings")
        ordering = ["employee", "year"]
        constraints = [models.UniqueConstraint(fields=["employee", "year"], name="payroll_year_opening")]

    def __str__(self) -> str:
        return f"{self.employee_id} {self.year}"
