"""The matrix keeps a limit per measure a tool declares (`ApprovalRule.limits`) instead of
one column per measure, and a routing reason as words beside its English.

Each old column `<measure>_limit` becomes `limits["<measure>"]` (its decimal string), so
a rule keeps exactly the limits it had; backwards, the limits go back to their columns.
Routing reasons written before words existed stay as they are and read as stored."""
from decimal import Decimal

from django.db import migrations, models

OLD_COLUMNS = ("headcount_limit", "monthly_gross_limit")  # the columns this migration retires


def _measure(column: str) -> str:
    return column.removesuffix("_limit")


def _plain(value) -> str:
    """500000.00 → "500000", 12.50 → "12.5": the limit as a person would type it."""
    return format(Decimal(value).normalize(), "f")


def columns_to_limits(apps, schema_editor):
    ApprovalRule = apps.get_model("approvals", "ApprovalRule")
    for rule in ApprovalRule.objects.all():
        limits = {_measure(column): _plain(getattr(rule, column)) for column in OLD_COLUMNS
                  if getattr(rule, column) is not None}
        if limits:
            ApprovalRule.objects.filter(id=rule.id).update(limits=limits)


def limits_to_columns(apps, schema_editor):
    ApprovalRule = apps.get_model("approvals", "ApprovalRule")
    for rule in ApprovalRule.objects.all():
        limits = rule.limits or {}
        values = {column: ApprovalRule._meta.get_field(column).to_python(limits.get(_measure(column)))
                  for column in OLD_COLUMNS}
        ApprovalRule.objects.filter(id=rule.id).update(**values)


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0004_approval_summary_words'),
    ]

    operations = [
        migrations.AddField(
            model_name='approvalrequest',
            name='routing_reason_words',
            field=models.JSONField(blank=True, help_text='the routing reason as meaning (config.words)', null=True),
        ),
        migrations.AlterField(
            model_name='approvalrequest',
            name='routing_reason',
            field=models.TextField(blank=True, help_text='English, for search and logs'),
        ),
        migrations.AddField(
            model_name='approvalrule',
            name='limits',
            field=models.JSONField(blank=True, default=dict, help_text='measure name → its limit (a decimal string); a larger value needs above_limit_role. The tool declares its measures (Tool.measures)'),
        ),
        migrations.RunPython(columns_to_limits, limits_to_columns),
        migrations.RemoveField(
            model_name='approvalrule',
            name='headcount_limit',
        ),
        migrations.RemoveField(
            model_name='approvalrule',
            name='monthly_gross_limit',
        ),
    ]
