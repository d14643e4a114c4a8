"""The payroll system of record (the HR Core API the agent acts on): a global, versioned
template catalog; per-tenant groups, their items and employees; snapshots of a
tenant's configuration; and the idempotency records every write goes through."""
import hashlib

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from config.ids import BusinessIdField
from config.names import name_skeleton
from idempotency.models import IdempotencyRecordBase, IdempotencyState  # noqa: F401 (IdempotencyState: re-exported)


class ItemKind(models.TextChoices):
    EARNING = "earning", _("Earning")
    DEDUCTION = "deduction", _("Deduction")
    EMPLOYER_CONTRIBUTION = "employer_contribution", _("Employer contribution")
    TAX = "tax", _("Tax")


class PayFrequency(models.TextChoices):
    MONTHLY = "monthly", _("Monthly")
    SEMI_MONTHLY = "semi_monthly", _("Semi-monthly")
    BIWEEKLY = "biweekly", _("Bi-weekly")
    WEEKLY = "weekly", _("Weekly")


class PayrollTemplate(models.Model):
    """One version of a catalog template. Global: every tenant imports from the same catalog."""

    id = BusinessIdField()
    code = models.SlugField(max_length=80)
    version = models.PositiveIntegerField(default=1)
    name = models.CharField(max_length=200)
    name_zh = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    region = models.CharField(max_length=80)
    pay_frequency = models.CharField(max_length=20, choices=PayFrequency.choices)
    currency = models.CharField(max_length=3)
    # The names an item's base or formula may use (besides earlier items' codes).
    variables = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("payroll template"), _("payroll templates")
        ordering = ["region", "code", "version"]
        constraints = [models.UniqueConstraint(fields=["code", "version"], name="payroll_template_code_version")]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


class TemplateItem(models.Model):
    template = models.ForeignKey(PayrollTemplate, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveIntegerField()
    code = models.SlugField(max_length=80)
    name = models.CharField(max_length=200)
    name_zh = models.CharField(max_length=200, blank=True)
    kind = models.CharField(max_length=30, choices=ItemKind.choices)
    # Either `base` (an expression) × a rate — the template's own `rate`, or `rate_name`, a
    # parameter of the city's rules (payroll.records.evaluator), so no city's rate is copied here — or a formula.
    rate = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True)
    rate_name = models.CharField(max_length=80, blank=True)
    base = models.CharField(max_length=80, blank=True)
    formula = models.TextField(blank=True)

    class Meta:
        verbose_name, verbose_name_plural = _("template item"), _("template items")
        ordering = ["position"]
        constraints = [models.UniqueConstraint(fields=["template", "code"], name="payroll_template_item_code")]

    def __str__(self) -> str:
        return self.code


class IdempotencyRecord(IdempotencyRecordBase):
    """key → request hash → receipt, unique per tenant and operation (DESIGN.md §4); the
    protocol is idempotency.services.idempotent's, shared with every system of record."""

    class Meta:
        verbose_name, verbose_name_plural = _("idempotency record"), _("idempotency records")
        constraints = [models.UniqueConstraint(fields=["tenant", "operation", "key"], name="payroll_idempotency_key")]


class PayrollGroupQuerySet(models.QuerySet):
    def named_like(self, name: str) -> "PayrollGroupQuerySet":
        """The groups (of a tenant's queryset) whose name reads as `name`: the same skeleton
        (config.names), so "Р1 Grоup 01" in Cyrillic finds "P1 Group 01". Compared over the
        tenant's few dozen names rather than a stored column, which a rename or a restore
        could leave stale; concurrent creators are serialised by their claims' keys."""
        key = name_skeleton(name)
        return self.filter(id__in=[pk for pk, other in self.values_list("id", "name") if name_skeleton(other) == key])


class PayrollGroup(models.Model):
    """A tenant's pay group, created by importing a template."""

    id = BusinessIdField()
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="payroll_groups")
    name = models.CharField(max_length=200)
    template = models.ForeignKey(PayrollTemplate, on_delete=models.PROTECT, related_name="groups",
                                 null=True, blank=True)
    template_version = models.PositiveIntegerField(null=True, blank=True)
    variables = models.JSONField(default=list, blank=True)
    # The city whose rules its items compute under (payroll.rules' key); blank: its template's region's.
    city = models.CharField(max_length=40, blank=True)
    # The import that created it: a takeover of that import resumes this group.
    idempotency_record = models.ForeignKey(IdempotencyRecord, on_delete=models.SET_NULL, null=True, blank=True,
                                           related_name="groups")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = PayrollGroupQuerySet.as_manager()

    class Meta:
        verbose_name, verbose_name_plural = _("payroll group"), _("payroll groups")
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["tenant", "name"], name="payroll_group_tenant_name")]

    def __str__(self) -> str:
        return self.name


class GroupItem(models.Model):
    group = models.ForeignKey(PayrollGroup, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveIntegerField()
    code = models.SlugField(max_length=80)
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=30, choices=ItemKind.choices)
    rate = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True)
    rate_name = models.CharField(max_length=80, blank=True)
    base = models.CharField(max_length=80, blank=True)
    formula = models.TextField(blank=True)

    class Meta:
        verbose_name, verbose_name_plural = _("group item"), _("group items")
        ordering = ["position"]
        constraints = [models.UniqueConstraint(fields=["group", "code"], name="payroll_group_item_code")]

    def __str__(self) -> str:
        return self.code

    @property
    def name_zh(self) -> str:
        """The Chinese name of the template item this one was copied from, while it keeps that
        item's name (one query per group, kept on the group)."""
        group = self.group
        names = getattr(group, "_template_item_names", None)
        if names is None:
            names = group._template_item_names = {
                code: (name, name_zh) for code, name, name_zh in TemplateItem.objects.filter(
                    template_id=group.template_id).values_list("code", "name", "name_zh")} if group.template_id else {}
        name, name_zh = names.get(self.code, ("", ""))
        return name_zh if name == self.name else ""


class IdType(models.TextChoices):
    """The identity documents the tax bureau's declaration accepts (证件类型)."""

    RESIDENT_ID = "resident_id", _("Resident identity card")
    PASSPORT = "passport", _("Passport")
    HK_MACAU_PASS = "hk_macau_pass", _("Mainland travel permit for Hong Kong and Macao residents")
    TAIWAN_PASS = "taiwan_pass", _("Mainland travel permit for Taiwan residents")
    FOREIGNER_PERMIT = "foreigner_permit", _("Foreigner's permanent residence ID card")
    OTHER = "other", _("Other")


class Employee(models.Model):
    id = BusinessIdField()
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="employees")
    employee_no = models.CharField(max_length=40)
    name = models.CharField(max_length=200)
    department = models.CharField(max_length=100)
    location = models.CharField(max_length=100)
    base_salary = models.DecimalField(max_digits=12, decimal_places=2)
    currency = models.CharField(max_length=3, default="CNY")
    group = models.ForeignKey(PayrollGroup, on_delete=models.SET_NULL, null=True, blank=True, related_name="employees")
    # What a bank and the tax bureau need, from the HR export. Sensitive: shown masked to all
    # but admins (payroll.records.masking), and never written into a frame or a prompt.
    id_type = models.CharField(max_length=20, blank=True, choices=IdType.choices)
    id_number = models.CharField(max_length=40, blank=True)
    bank_account = models.CharField(max_length=40, blank=True)
    bank_name = models.CharField(max_length=100, blank=True)

    class Meta:
        verbose_name, verbose_name_plural = _("employee"), _("employees")
        ordering = ["employee_no"]
        constraints = [models.UniqueConstraint(fields=["tenant", "employee_no"], name="payroll_employee_no")]

    def __str__(self) -> str:
        return self.name

    def pay_on(self, on) -> "EmployeePay | None":
        """The pay in force on `on`: the latest EmployeePay effective by then (the newest written
        wins a tie), else one made from `base_salary` when that is set (> 0; not saved), else None."""
        rows = getattr(self, "_prefetched_objects_cache", {}).get("pay_history")
        if rows is not None:
            due = sorted((r for r in rows if r.effective_from <= on),
                         key=lambda r: (r.effective_from, r.created_at), reverse=True)
            found = due[0] if due else None
        else:
            found = self.pay_history.filter(effective_from__lte=on).order_by("-effective_from", "-created_at").first()
        if found is not None:
            return found
        if self.base_salary and self.base_salary > 0:
            return EmployeePay(employee=self, effective_from=on, base_salary=self.base_salary, allowances={},
                               special_additional_deductions=0, deductions_breakdown={}, source="base salary")
        return None


class Snapshot(models.Model):
    """Payroll configuration, frozen, with its checksum: the tenant's whole configuration
    (an admin's snapshot), or exactly the records one run will touch (`scope`: the new
    group's name and the employees it assigns)."""

    id = BusinessIdField()
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="payroll_snapshots")
    label = models.CharField(max_length=200)
    scope = models.JSONField(null=True, blank=True, help_text="null: the whole tenant; else "
                                                              "{group_name, employee_ids}")
    configuration = models.JSONField()
    checksum = models.CharField(max_length=64)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("snapshot"), _("snapshots")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.label


class RemovedGroup(models.Model):
    """A group a whole-tenant restore deleted: who removed it, by which run, and whose run had
    made it. Its page says so (410) instead of answering 404 to an old link."""

    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="+")
    group_id = models.BigIntegerField()
    name = models.CharField(max_length=200)
    removed_by_run = models.ForeignKey("workflows.Run", on_delete=models.SET_NULL, null=True, blank=True,
                                       related_name="+")
    removed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+")
    made_by_run = models.ForeignKey("workflows.Run", on_delete=models.SET_NULL, null=True, blank=True,
                                    related_name="+")
    removed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("removed group")
        verbose_name_plural = _("removed groups")
        constraints = [models.UniqueConstraint(fields=["tenant", "group_id"], name="payroll_removed_group")]

    def __str__(self) -> str:
        return self.name


class ClaimKind(models.TextChoices):
    GROUP_NAME = "group_name", "Group name"
    EMPLOYEE = "employee", "Employee"


CLAIM_KEY_LENGTH = 200


def group_name_key(name: str) -> str:
    """A group name's claim key: what it reads as (its skeleton), so that two names a person
    cannot tell apart are one key, and the unique index serialises them as it does one name.
    A skeleton longer than the column (it can outgrow the name) is keyed by its digest."""
    key = name_skeleton(name)
    if len(key) <= CLAIM_KEY_LENGTH:
        return key
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()


class RecordClaim(models.Model):
    """A record a run (or a person's direct write) is about to create or change: a new
    group's name, an employee it assigns. Unique per tenant, kind and key, so two
    concurrent runs choosing the same name — or names that read the same: a group name's
    key is group_name_key — are serialised by the database: the second insert fails and
    that run asks its user for another name before any approver is asked. Released when
    the holder ends for good (workflows' RUN_FINAL)."""

    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=20, choices=ClaimKind.choices)
    key = models.CharField(max_length=CLAIM_KEY_LENGTH)
    name = models.CharField(max_length=200, blank=True, default="",
                            help_text="a group name as its holder wrote it (the key is what it reads as)")
    run = models.ForeignKey("workflows.Run", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    holder = models.CharField(max_length=200, help_text="who holds it, in words (run and its starter, or a person)")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("record claim"), _("record claims")
        constraints = [models.UniqueConstraint(fields=["tenant", "kind", "key"], name="payroll_claim_unique")]

    def __str__(self) -> str:
        return f"{self.kind} {self.key} ({self.holder})"


class DeductionKind(models.TextChoices):
    """The special additional deductions (专项附加扣除) an employee declares, each a monthly amount."""

    CHILDREN_EDUCATION = "children_education", _("Children's education")
    ELDERLY_SUPPORT = "elderly_support", _("Elderly support")
    HOUSING_LOAN_INTEREST = "housing_loan_interest", _("Housing loan interest")
    HOUSING_RENT = "housing_rent", _("Housing rent")
    CONTINUING_EDUCATION = "continuing_education", _("Continuing education")
    INFANT_CARE = "infant_care", _("Infant care")


class EmployeePay(models.Model):
    """An employee's pay from a date on: base salary, allowances by name and the monthly
    special additional deductions. Rows are never edited: a raise is a new row, so a trial
    (or a payslip) of an earlier month reads the pay that was in force then."""

    id = BusinessIdField()
    employee = models.ForeignKey(Employee, on_delete=models.CASCADE, related_name="pay_history")
    effective_from = models.DateField()
    base_salary = models.DecimalField(max_digits=12, decimal_places=2)
    # {item name as the export named it: "amount"} — strings, so no float ever touches money.
    allowances = models.JSONField(default=dict, blank=True)
    special_additional_deductions = models.DecimalField(max_digits=12, decimal_places=2, default=0)
    # {DeductionKind: "amount"}; its sum is special_additional_deductions when given by kind.
    deductions_breakdown = models.JSONField(default=dict, blank=True)
    # Who wrote it, in words: "run 123" (the approved step), "answer in run 123", "HR export".
    source = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("employee pay"), _("employee pay")
        ordering = ["employee", "-effective_from", "-created_at"]
        indexes = [models.Index(fields=["employee", "effective_from"], name="payroll_pay_employee_from")]

    def __str__(self) -> str:
        return f"{self.employee} from {self.effective_from}: {self.base_salary}"



class CityRulePeriod(models.Model):
    """One period of a city's social insurance and housing fund rules (payroll.records.rules reads
    these). Global, like the template catalog: every tenant's trial reads the same figures,
    so only staff change them (on the rules page, through services.city_rule_period_change).
    Loaded from payroll/data/city_rules.json by migration 0009; `rules` keeps a period's
    figures in the file's shape (percent and yuan as strings), so one validator serves both."""

    city = models.SlugField(max_length=40)
    name = models.CharField(max_length=100)
    name_zh = models.CharField(max_length=100)
    # The city's other spellings ("sh", "上海市"); the same on each of its periods.
    aliases = models.JSONField(default=list, blank=True)
    effective_from = models.DateField()
    effective_to = models.DateField(null=True, blank=True)
    # {social_base, housing_fund_base, contributions, housing_fund, notes}, as a period of the file.
    rules = models.JSONField()
    # {authority, title, year, url}: the notice the figures come from.
    source = models.JSONField(default=dict)
    verified = models.BooleanField(default=False)
    note = models.TextField(blank=True, help_text="why the figures were last changed, in the changer's words")
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+")
    # Set by the change itself (not auto_now): it is also the version a change compares and sets.
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name, verbose_name_plural = _("city rule period"), _("city rule periods")
        ordering = ["city", "effective_from"]
        constraints = [models.UniqueConstraint(fields=["city", "effective_from"], name="payroll_city_rule_period")]

    def __str__(self) -> str:
        return f"{self.name} from {self.effective_from}"


from .month_inputs import *  # noqa: E402,F401,F403 (the month's data, in its own module)
from .months import *  # noqa: E402,F401,F403 (the payroll month, in its own module)
