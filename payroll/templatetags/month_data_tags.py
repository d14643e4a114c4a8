"""The group page's monthly inputs section, rendered by a tag so the group page's view need not
know it: its versions and the upload form (payroll.month_data_views.group_inputs takes the post)."""
from django import template

from tenants.selectors import membership_for_user

from ..month_data_views import inputs_context
from ..records.masking import sensitive_visible, shown

register = template.Library()


@register.inclusion_tag("payroll/_group_inputs.html", takes_context=True)
def group_inputs_section(context, group):
    request = context["request"]
    return {**inputs_context(request, membership_for_user(request.user), group),
            "csrf_token": context.get("csrf_token")}


@register.simple_tag(takes_context=True)
def sensitive(context, employee, field: str) -> str:
    """An employee's ID or account number as this reader may see it: raw for a tenant admin,
    "•••• 1234" for everyone else (payroll.records.masking)."""
    request = context["request"]
    return shown(getattr(employee, field), visible=sensitive_visible(request.user, employee.tenant_id))
