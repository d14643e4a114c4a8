"""The payroll month: a group's month from open to closed (reopened by an admin as the
compensation), its payslips and the files that leave Keel (the bank payment file and the
income tax withholding declaration). Every status change goes through
payroll.records.months.state.month_transition: a compare-and-set and a MonthTransition row."""
from decimal import Decimal

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from config.ids import BusinessIdField

__all__ = ["MonthStatus", "PayrollMonth", "MonthTransition", "PayslipStatus", "Payslip", "FileKind",
           "FileStatus", "MonthFile"]


class MonthStatus(models.TextChoices):
    OPEN = "open", _("open")
    COMPUTED = "computed", _("computed")
    AWAITING_APPROVAL = "awaiting_approval", _("awaiting approval")
    CLOSED = "closed", _("closed")
    REOPENED = "reopened", _("reopened")


def _money() -> models.DecimalField:
    return models.DecimalField(max_digits=16, decimal_places=2, default=Decimal("0"))


class PayrollMonth(models.Model):
    """One group's month. `totals`: {gross, employer_cost, employee_contributions,
    employer_contributions, tax, net, headcount} as strings. `stale`: an earlier month of the
    group was reopened after this one was computed, so it must compute again before it closes.
    `opening`: what the tax withholding started from ({"kind": "year_opening"|"closed_months"|
    "assumed_joined", …}), shown on the card."""

    id = BusinessIdField()
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="+")
    group = models.ForeignKey("payroll.PayrollGroup", on_delete=models.CASCADE, related_name="months")
    year = models.PositiveIntegerField()
    month = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=20, choices=MonthStatus.choices, default=MonthStatus.OPEN)
    inputs = models.ForeignKey("payroll.MonthlyInputs", on_delete=models.SET_NULL, null=True, blank=True,
                               related_name="+")
    run = models.ForeignKey("workflows.Run", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    totals = models.JSONField(default=dict, blank=True)
    opening = models.JSONField(default=dict, blank=True)
    attendance = models.JSONField(default=dict, blank=True)  # the attendance terms it computed with
    stale = models.BooleanField(default=False)
    computed_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                  related_name="+")
    reopened_at = models.DateTimeField(null=True, blank=True)
    reopened_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                    related_name="+")
    reopen_reason = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("payroll month"), _("payroll months")
        ordering = ["group", "-year", "-month"]
        constraints = [models.UniqueConstraint(fields=["group", "year", "month"], name="payroll_month_group_month"),
                       models.CheckConstraint(condition=models.Q(month__gte=1, month__lte=12),
                                              name="payroll_month_month_range")]

    def __str__(self) -> str:
        return f"{self.group_id} {self.year}-{self.month:02d}"


class MonthTransition(models.Model):
    """One status change of a month, written with it (who, when, why)."""

    month = models.ForeignKey(PayrollMonth, on_delete=models.CASCADE, related_name="transitions")
    from_status = models.CharField(max_length=20)
    to_status = models.CharField(max_length=20)
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                           related_name="+")
    run = models.ForeignKey("workflows.Run", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("month transition"), _("month transitions")
        ordering = ["month", "id"]

    def __str__(self) -> str:
        return f"{self.month_id}: {self.from_status} → {self.to_status}"


class PayslipStatus(models.TextChoices):
    DRAFT = "draft", _("draft")
    FINAL = "final", _("final")
    VOID = "void", _("void")


class Payslip(models.Model):
    """One employee's month. `items`: [{code, name, name_zh, kind, formula, base, rate, amount,
    detail}] (amounts as strings); `inputs`: {input name: "figure"} as read; `withholding`: the
    cumulative figures the tax declaration reports (income, basic deduction, contributions,
    special additional deductions, taxable, rate, quick deduction, tax, withheld before).
    One per (month, employee): a recompute replaces the drafts in one transaction."""

    id = BusinessIdField()
    month = models.ForeignKey(PayrollMonth, on_delete=models.CASCADE, related_name="payslips")
    employee = models.ForeignKey("payroll.Employee", on_delete=models.PROTECT, related_name="payslips")
    status = models.CharField(max_length=10, choices=PayslipStatus.choices, default=PayslipStatus.DRAFT)
    items = models.JSONField(default=list)
    inputs = models.JSONField(default=dict, blank=True)
    missing_inputs = models.JSONField(default=list, blank=True)
    gross = _money()
    employee_contributions = _money()
    employer_contributions = _money()
    tax = _money()
    net = _money()
    employer_cost = _money()
    taxable_cumulative = _money()
    tax_cumulative = _money()
    withholding = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("payslip"), _("payslips")
        ordering = ["month", "employee__employee_no"]
        constraints = [models.UniqueConstraint(fields=["month", "employee"], name="payroll_payslip_month_employee")]

    def __str__(self) -> str:
        return f"{self.month} {self.employee_id}"


class FileKind(models.TextChoices):
    BANK_CSV = "bank_csv", _("bank payment file (CSV)")
    BANK_XLSX = "bank_xlsx", _("bank payment file (XLSX)")
    TAX_XLSX = "tax_xlsx", _("income tax withholding declaration (XLSX)")


class FileStatus(models.TextChoices):
    CURRENT = "current", _("current")
    VOID = "void", _("void")


class MonthFile(models.Model):
    """A file generated when the month closed, kept byte for byte with its checksum; `total`
    is what it adds up to (net pay for the bank, tax for the declaration), the verify step's
    receipt. A reopen voids it; at most one current file of a kind per month."""

    month = models.ForeignKey(PayrollMonth, on_delete=models.CASCADE, related_name="files")
    kind = models.CharField(max_length=12, choices=FileKind.choices)
    content = models.BinaryField()
    sha256 = models.CharField(max_length=64)
    rows = models.PositiveIntegerField(default=0)
    total = _money()
    status = models.CharField(max_length=10, choices=FileStatus.choices, default=FileStatus.CURRENT)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("month file"), _("month files")
        ordering = ["month", "kind", "-created_at"]
        constraints = [models.UniqueConstraint(fields=["month", "kind"], condition=models.Q(status="current"),
                                               name="payroll_month_file_current")]

    def __str__(self) -> str:
        return f"{self.month} {self.kind} ({self.status})"
