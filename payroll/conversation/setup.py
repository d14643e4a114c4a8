"""Setting up a group: a fixed `payroll_group_setup` plan at once when the request is complete,
else ReAct exploration first (payroll.conversation.exploration), whose scratchpad waits in the
conversation's pending state for the user's answer (the domain then holds the turn)."""
from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_noop

from config.words import Stored, english_aside, localised, ngettext_noop, sentences, words
from memory.services import memory_link
from timeline.services import frame_record
from workflows.blueprints import Door, params_validate
from workflows.conversation import TurnContext, TurnReply
from workflows.services import run_cancel, run_create, run_plan_on_commit

from payroll.agent.previews import requirements_words, template_memories
from payroll.models import PayrollTemplate
from payroll.reading.attachments import EmployeeList
from payroll.reading.matching import (
    items_met,
    not_met_words,
    other_city_words,
    template_decide,
    template_name_words,
)
from payroll.reading.requirements import requirements_extract
from payroll.records.selectors import template_catalog

from .answers import is_stop
from .exploration import ExplorationState, dependencies_known, react_explore
from .understanding import is_continue, reason_built, turn_requirements, route_words
from .vocabulary import BLUEPRINT, NAME


def attached_employees(turn: TurnContext) -> EmployeeList | None:
    return turn.attachment if turn.attachment_kind == "employee_list" else None


def plan_start(turn: TurnContext, *, request: str, requirements: dict[str, Any], template_name: str | None,
                employees: list[str] | None, new_employees: list[dict[str, str]], lead: str | None = None
                ) -> TurnReply:
    """The planning boundary: recall experience as context, then start the fixed plan. The
    run's first records commit with the reply (the front's message_post); a worker plans it after."""

    items = template_memories(tenant_id=turn.membership.tenant_id, requirements=requirements)
    group_name = (requirements.get("group_name") or ("新薪资组" if turn.zh else "New payroll group"))[:120]
    params: dict[str, Any] = {"request": request[:4000], "group_name": group_name}
    if template_name:
        # The program resolves the name the exploration observed; the model never types a code.
        code = (PayrollTemplate.objects.filter(name=template_name).order_by("-version")
                .values_list("code", flat=True).first())
        if code:
            params["template_code"] = code
    if employees:
        params["employee_ids"] = list(employees)
    if new_employees:
        # Not in the system of record yet: the approval card proposes them; created on approval.
        params["new_employees"] = list(new_employees)
    template = template_named(template_name) if template_name else None
    if template is None:
        decision = template_decide(requirements, template_catalog())
        template = decision.chosen if decision.kind == "clear" else None
    # The run decides on exactly what the conversation understood (no second reading), and
    # its approval card reads what the template meets and does not (requirements["not_met"]).
    params["requirements"] = {k: v for k, v in with_items(requirements, template).items()
                              if not k.startswith("_")}
    params = params_validate(BLUEPRINT, params)  # refused here, within the turn
    reply = _plan_reply(turn, requirements, group_name, employees, new_employees,
                        template=template if template_name else None, lead=lead)

    def run_started() -> int:  # inside the reply's transaction
        if items:
            frame_record(activity_id=turn.activity_id, kind="memory", name="memory: planning",
                         summary=words(ngettext_noop(
                             "Recalled %(n)s earlier experience as context; it ranks candidates but authorises nothing.",
                             "Recalled %(n)s earlier experiences as context; they rank candidates but authorise "
                             "nothing."), n=len(items)),
                         payload={"boundary": "planning", "items": [memory_link(i) for i in items]})
        run = run_create(membership=turn.membership, blueprint=BLUEPRINT, params=params,
                         conversation_id=turn.conversation_id, door=Door.CONVERSATION)
        run_plan_on_commit(run)
        turn.ledger_append(run_id=run.id, milestone="run:started",
                           text=f"the setup of the group “{group_name}” was started")
        if employees or new_employees:
            count = len(employees or []) + len(new_employees)
            turn.ledger_append(run_id=run.id, milestone="run:employees",
                               text=f"an employee list of {count} people will be assigned after the import")
        return run.id

    return TurnReply(route="plan", reply=reply, start_run=run_started)


def _plan_reply(turn: TurnContext, requirements: dict[str, Any], group_name: str, employees: list[str] | None,
                new_employees: list[dict[str, str]], *, template=None, lead: Stored = None) -> Stored:
    """What the user is told as the run starts (words, read in each reader's language): the
    template it will use (another city's said plainly, each requested item it lacks listed),
    or why the next message asks which one — without the question's own sentence, which the
    run's question says once."""
    decision = template_decide(requirements, template_catalog())
    chosen = template or (decision.chosen if decision.kind == "clear" else None)
    if chosen is not None:
        extra = template_sentences(requirements, chosen)
        # What was asked for, in English words: the English reader reads it in brackets.
        reply = lead or words(gettext_noop("I've started setting up “%(group)s” with the template “%(template)s” "
                                           "(%(what)s): I'll take a snapshot first, and import it once an approver "
                                           "agrees."),
                              group=group_name, template=template_name_words(chosen),
                              what=english_aside(requirements_words(requirements)))
        reply = sentences(reply, extra)
    else:
        city = requirements.get("city") or {}
        place = localised(city.get("en") or requirements.get("region") or "",
                          city.get("zh") or city.get("en") or requirements.get("region") or "")
        regional = [f for f in decision.fits if "region" in f.reasons]
        if decision.kind == "none" and requirements.get("region") and requirements.get("region") != "CN" \
                and not regional:
            why = words(gettext_noop("I found no template for %(place)s: "), place=place)
        elif decision.kind == "none" and requirements.get("region") == "CN":
            why = words(gettext_noop("I found no nationwide template: "))
        elif decision.kind == "choice":
            why = words(gettext_noop("more than one template fits equally well: "))
        else:
            why = words(gettext_noop("no template fits exactly: "))
        reply = words(gettext_noop("I've started setting up “%(group)s”; %(why)sthe next message asks which one to "
                                   "use."), group=group_name, why=why)
    parts: list[Stored] = [reply]
    if employees:
        parts.append(words(ngettext_noop("Then I'll assign the %(count)s employee on your list.",
                                         "Then I'll assign the %(count)s employees on your list.", "count"),
                           count=len(employees)))
    if new_employees:
        count = len(new_employees)
        parts.append(words(gettext_noop("%(count)s employee on your list is not in the payroll system yet: the "
                                        "approver will see them as new, and they are created on approval.")
                           if count == 1 else
                           gettext_noop("%(count)s employees on your list are not in the payroll system yet: the "
                                        "approver will see them as new, and they are created on approval."),
                           count=count))
    return sentences(*parts)


def explore(turn: TurnContext, state: ExplorationState, *, employees: list[str] | None,
             new_employees: list[dict[str, str]]) -> TurnReply:
    pending = turn.pending(NAME)
    outcome = react_explore(state=state, tenant_id=turn.membership.tenant_id, user_id=turn.membership.user_id,
                            narrative=turn.narrative, activity_id=turn.activity_id, model=turn.model, zh=turn.zh)
    if outcome.kind == "plan":
        pending.clear()  # run state ends with the exploration
        turn.frame("route", "route → plan", route_words("plan", reason_built(
            f"the exploration settled it ({outcome.reason})", gettext_noop("the exploration settled what was open"))),
                   {"branch": "plan", "reason": outcome.reason, "iterations": outcome.iterations})
        return plan_start(turn, request=state.request, requirements=outcome.requirements,
                           template_name=outcome.template_name, employees=employees, new_employees=new_employees)
    previous = (pending.get() or {}).get("question")
    asked = ((pending.get() or {}).get("asked") or (1 if previous else 0)) + 1
    if previous and asked >= 2:
        # Never the same question twice in a row, never a third time: say what was not
        # understood, how to answer, and what Keel assumes if nothing more is said.
        outcome.question = words(gettext_noop(
            "I couldn't find a city or region in that. Please name the city (for example “Hangzhou” or "
            "“Shanghai”), or say “nationwide”. If you don't say, I'll set it up as nationwide (all of China)."))
    stored = {**outcome.requirements, "_template_name": state.template_name, "_employee_ids": employees or [],
              "_new_employees": new_employees}
    pending.set({"kind": "explore", "request": state.request, "requirements": stored,
                 "scratchpad": outcome.scratchpad, "iterations": outcome.iterations, "question": outcome.question,
                 "asked": asked})
    return TurnReply(route="explore", reply=outcome.question)


def resume_exploration(turn: TurnContext, exploration: dict[str, Any]) -> TurnReply:
    if is_stop(turn.text) and not requirements_extract(turn.text)["region"]:
        return stop_reply(turn)
    request = exploration["request"] if is_continue(turn.text) else f"{exploration['request']}\n{turn.text}"
    requirements = turn_requirements(turn, request)
    if (exploration.get("asked") or 0) >= 2 and not requirements.get("region") \
            and not dependencies_known(requirements, (exploration.get("requirements") or {}).get("_template_name"))[0]:
        # Never a third time: what the second asking said it would assume.
        stated = requirements.get("group_name") if requirements.get("name_stated") else None
        requirements = {**requirements, "region": "CN", "city": {"en": "China", "zh": "全国", "province": ""},
                        "missing": [k for k in ("pay_frequency",) if not requirements.get(k)]}
        requirements["group_name"] = stated or ("全国薪资组" if turn.zh else "China Payroll")
    stored = exploration.get("requirements") or {}
    template_name = stored.get("_template_name")
    attached = attached_employees(turn)
    employees = attached.employee_ids if attached else (stored.get("_employee_ids") or None)
    new_employees = list(attached.new_employees) if attached else list(stored.get("_new_employees") or [])
    state = ExplorationState(request=request, requirements=requirements,
                             scratchpad=list(exploration.get("scratchpad") or []),
                             iterations=exploration.get("iterations") or 0, template_name=template_name)
    if dependencies_known(requirements, template_name)[0]:
        turn.pending(NAME).clear()
        return plan_start(turn, request=request, requirements=requirements, template_name=template_name,
                           employees=employees, new_employees=new_employees)
    return explore(turn, state, employees=employees, new_employees=new_employees)


def template_named(name: str):
    return (PayrollTemplate.objects.filter(name=name).order_by("-version").prefetch_related("items").first()
            or PayrollTemplate.objects.filter(code=name).order_by("-version").prefetch_related("items").first())


def with_items(requirements: dict[str, Any], template) -> dict[str, Any]:
    """The requirements with what the template meets and does not (requirements["not_met"]:
    [{"item", "reason"}], read by the approval card)."""
    if template is None:
        return requirements
    met, not_met = items_met(requirements, template)
    return {**requirements, "met": met, "not_met": not_met, "template_code": template.code}


def template_sentences(requirements: dict[str, Any], template) -> Stored:
    """Another city's template said plainly, and each requested item it does not meet (words)."""
    newest = {t.code: t for t in PayrollTemplate.objects.filter(region__startswith="CN-").order_by("code", "version")
              if "legacy" not in t.code}  # each template once, at its newest version
    catalog = list(newest.values())
    return sentences(other_city_words(requirements, template, catalog),
                     not_met_words(with_items(requirements, template).get("not_met") or [], template))


def stop_reply(turn: TurnContext, run=None) -> TurnReply:
    turn.pending(NAME).clear()
    if run is not None:
        def stopped() -> int:
            run_cancel(membership=turn.membership, run_id=run.id, reason="the user said to stop")
            return run.id
        reply = words(gettext_noop("OK — I've stopped it; that group won't be set up."))
        return TurnReply(route="resume_run", reply=reply, start_run=stopped)
    return TurnReply(route="resume_exploration",
                     reply=words(gettext_noop("OK, I won't set it up. Tell me whenever you need it.")))
