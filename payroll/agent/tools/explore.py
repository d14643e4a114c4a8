"""Read-only exploration tools (ReAct), called by agents.react outside any run: they read one
tenant's data (and the global catalog) and return observations in words. No ids and no
template codes reach the model; `names` lets the program resolve a chosen template exactly."""
from __future__ import annotations

from typing import Any

from django.db.models import Count

from workflows.tools import Tool, ToolContext, tool_register

from payroll.models import PayrollTemplate
from payroll.records.selectors import employees_for, groups_for

from .match import template_score


def list_templates(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:

    requirements = {k: arguments.get(k) for k in ("region", "pay_frequency", "population")}
    requirements["items_named"] = list(arguments.get("items_named") or [])
    latest: dict[str, Any] = {}
    for t in PayrollTemplate.objects.prefetch_related("items").order_by("code", "version"):
        latest[t.code] = t
    scored = sorted(((template_score(t, requirements), t) for t in latest.values()),
                    key=lambda pair: (-pair[0][0], pair[1].code))
    if any(requirements.get(k) for k in ("population", "region", "pay_frequency")) or requirements["items_named"]:
        scored = [p for p in scored if p[0][0] >= 0]  # only the templates that fit (payroll.reading.matching)
    fits = [{"name": t.name, "region": t.region, "pay_frequency": t.pay_frequency, "score": score,
             "reasons": why} for (score, why), t in scored[:8]]
    return {"count": len(scored), "templates": fits}


def list_groups(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:

    groups = [{"name": g.name, "items": len(g.items.all()), "employees": len(g.employees.all()),
               "template": g.template.name if g.template_id else None} for g in groups_for(ctx.tenant_id)]
    return {"count": len(groups), "groups": groups}


def count_employees(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:


    by = arguments.get("by") or "location"
    rows = employees_for(ctx.tenant_id).values(by).annotate(n=Count("id")).order_by(by)
    counts = {row[by]: row["n"] for row in rows}
    return {"by": by, "total": sum(counts.values()), "counts": counts,
            "unassigned": employees_for(ctx.tenant_id).filter(group__isnull=True).count()}


EXPLORE_TOOLS = ("list_templates", "list_groups", "count_employees")
tool_register(Tool(
    name="list_templates",
    description="List catalog templates that fit the known requirements (region, pay frequency, population, items).",
    input_schema={"type": "object", "properties": {
        "region": {"type": ["string", "null"]}, "pay_frequency": {"type": ["string", "null"]},
        "population": {"type": ["string", "null"]}, "items_named": {"type": "array", "items": {"type": "string"}}}},
    output_schema={"type": "object", "properties": {"count": {"type": "integer"}, "templates": {"type": "array"}},
                   "required": ["count", "templates"]},
    fn=list_templates, summary=lambda output: f"{output['count']} catalog templates fit.",
))


tool_register(Tool(
    name="list_groups",
    description="List the tenant's payroll groups with their item and employee counts.",
    input_schema={"type": "object"},
    output_schema={"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]},
    fn=list_groups, summary=lambda output: f"The company has {output['count']} payroll groups.",
))


tool_register(Tool(
    name="count_employees",
    description="Count the tenant's employees by department or by location.",
    input_schema={"type": "object", "properties": {"by": {"enum": ["department", "location"]}}},
    output_schema={"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]},
    fn=count_employees, summary=lambda output: f"{output['total']} employees, counted by {output['by']}.",
))
