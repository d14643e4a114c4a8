"""The group page's months section, rendered by a tag so the group page's view need not know
it: "Run a month" (payroll.month_views.month_start_view takes the post) and the group's months."""
from django import template

from ..month_views import STATUS_COLOUR, months_of_group, period_choices

register = template.Library()


@register.inclusion_tag("payroll/_group_months.html", takes_context=True)
def group_months_section(context, group):
    rows = [{"row": m, "colour": STATUS_COLOUR.get(m.status, "pending")} for m in months_of_group(group.id)]
    return {"group": group, "month_rows": rows, **period_choices(), "csrf_token": context.get("csrf_token")}
