"""The salaries a setup needs, asked before its approval: an employee of the attached list with
no salary (a new employee number, a row without pay) is asked for here, so that the approver's
card shows the salary it approves — never asked after the decision, where no approver sees it.
Nothing is written: the answers are this step's coordinate (`salaries`), which the import's
approval binds (its arguments) and the assign step records once approved."""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext_noop

from config.words import Stored, ngettext_noop, sentences, words
from workflows.models import StateCoordinate
from workflows.tools import Acceptance, NeedsInput, Tool, ToolContext, tool_register

from payroll.agent.proposals import with_salaries
from payroll.models import PayrollTemplate
from payroll.records.trial import answer_read, people_of_params, salary_question, trial_applies

from .common import ID


def _answered_before(ctx: ToolContext) -> list[dict[str, Any]]:
    """What this run's starter answered in an earlier plan version (a rejected card replanned
    the match): not asked twice."""
    found = (StateCoordinate.objects.filter(run_id=ctx.run_id, tenant_id=ctx.tenant_id, key="salaries")
             .order_by("-plan_version").values_list("value", flat=True).first())
    return list(found) if isinstance(found, list) else []


def ask_missing_salaries(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    template = PayrollTemplate.objects.filter(id=int(arguments["template_id"])).first()
    if template is None or not trial_applies(template.region):
        return {"salaries": [], "count": 0}  # no trial computes there, so no salary is needed before it
    before = _answered_before(ctx)
    params = with_salaries({k: arguments.get(k) for k in ("employee_ids", "new_employees", "employee_pay")}, before)
    missing = [{"key": p.key, "employee_no": p.employee_no, "name": p.name}
               for p in people_of_params(ctx.tenant_id, params, timezone.localdate()) if p.pay is None]
    if not missing:
        return {"salaries": before, "count": len(before)}
    # What earlier answers to this question gave (NeedsInput.keep): no salary is asked for twice.
    kept = arguments.get("salaries_given") or {}
    given = {m["key"]: Decimal(kept[m["key"]]) for m in missing if m["key"] in kept}
    answer = (arguments.get("answer") or "").strip()
    still = [m for m in missing if m["key"] not in given]
    new = answer_read(answer, still) if answer else {}
    given.update(new)
    still = [m for m in still if m["key"] not in given]
    if still:
        raise NeedsInput(_question(still, unread=answer if answer and not new else "", noted=len(given)),
                         keep={"salaries_given": {key: str(amount) for key, amount in given.items()}})
    answered = [{"key": m["key"], "employee_no": m["employee_no"], "name": m["name"],
                 "base_salary": f"{given[m['key']]:.2f}"} for m in missing]
    return {"salaries": before + answered, "count": len(before) + len(answered)}


def _question(missing: list[dict[str, Any]], unread: str = "", noted: int = 0) -> Stored:
    if noted:
        lead = words(ngettext_noop("Noted %(count)s salary; I still need these before I ask the approver.",
                                   "Noted %(count)s salaries; I still need these before I ask the approver.", "count"),
                     count=noted)
    else:
        lead = words(gettext_noop("Before I ask the approver, I need a salary for every employee on the list."))
    return sentences(lead, salary_question(missing, unread))


def _accept(ctx: ToolContext, arguments: dict[str, Any], output: dict[str, Any]) -> list[Acceptance]:
    bad = [s for s in output["salaries"] if not s.get("base_salary") or Decimal(s["base_salary"]) <= 0]
    return [Acceptance("every listed employee has a salary before the approval", not bad,
                       words(gettext_noop("%(count)s answered"), count=len(output["salaries"])))]


tool_register(Tool(
    name="ask_missing_salaries",
    title=gettext_noop("Ask for missing salaries"),
    description="Before the import's approval: ask the run's starter for the monthly base salary of every listed "
                "employee who has none, so that the approval card shows it.",
    input_schema={"type": "object", "properties": {
        "template_id": ID, "employee_ids": {"type": "array", "items": ID}, "new_employees": {"type": "array"},
        "employee_pay": {"type": "array"}, "answer": {"type": "string"},
        # Salaries earlier answers gave, by the person's key (NeedsInput.keep): "9000.00" each.
        "salaries_given": {"type": "object", "additionalProperties": {"type": "string", "pattern": r"^\d+(\.\d+)?$"}}},
        "required": ["template_id"]},
    output_schema={"type": "object", "properties": {"salaries": {"type": "array"}, "count": {"type": "integer"}},
                   "required": ["salaries"]},
    fn=ask_missing_salaries, consumes=["template_id"], produces=["salaries"], accept=_accept,
    summary=lambda output: (words(gettext_noop("Every listed employee has a salary; %(count)s given in answer, shown "
                                               "on the approval card."), count=output.get("count", 0))),
    milestones={"awaiting_input": "a salary is missing: waiting for the run's starter before the approval",
                "completed": "every listed employee has a salary for the approval card"},
))
