"""The payroll tools: each a thin, contract-checked door to the system of record.
Exact values (ids, versions) travel as coordinates; the model never sees them."""
from __future__ import annotations

import json
import threading
from typing import Any

from django.db.models import Count, Subquery
from django.urls import reverse
from django.utils.translation import gettext_noop

from config.api import Conflict, DomainError
from config.names import char_invisible
from config.words import Stored, localised, sentences, words, words_english
from llm import backend_structured
from llm.structured import structured_call
from memory.services import memory_link, working_memory_record
from timeline.models import Event
from timeline.services import frame_record
from workflows.faults import fault_flag
from workflows.models import Run, ToolCall
from workflows.pipeline import coordinate_resolve, node_activity_id, tool_model_call
from workflows.provenance import run_origin
from workflows.tools import (
    MONEY,
    Acceptance,
    Measure,
    NeedsInput,
    Replacement,
    Tool,
    ToolBlocked,
    ToolBusy,
    ToolContext,
    ToolError,
    tool_register,
)

from . import previews
from .matching import (
    FREQ_WORDS,
    ITEM_NAMES,
    decision_question,
    option_choose,
    template_decide,
    template_fit,
    template_next_best,
)
from .models import (
    ClaimKind,
    Employee,
    PayrollGroup,
    PayrollTemplate,
    RecordClaim,
    Snapshot,
    TemplateItem,
    group_name_key,
)
from .requirements import (
    MODEL_SCHEMA,
    POPULATION_NAMES,
    REGION_NAMES,
    asked_in_chinese,
    requirements_extract,
    requirements_from_model,
    requirements_messages,
    requirements_problems,
)
from .selectors import configuration_checksum, employees_for, groups_for, scope_checksum
from .services import (
    Actor,
    EmployeeHeld,
    NameTaken,
    ScopeChanged,
    employee_pay_record,
    employees_assign,
    employees_create,
    group_name_normalised,
    records_claim,
    run_effects_undo,
    snapshot_create,
    snapshot_restore,
    template_import,
)

ID = {"type": "string", "pattern": "^[0-9]{1,19}$"}


def _transient_busy(fn):
    """A 409 "still in progress" for our own idempotency key is not a failure: an earlier
    attempt (a killed worker) holds it until its lease runs out. The engine retries."""
    def call(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            return fn(ctx, arguments)
        except Conflict as err:
            if err.code == "idempotency_in_progress":
                raise ToolBusy(err.message) from None
            raise
    call.__name__ = call.__qualname__ = fn.__name__
    call.__module__ = fn.__module__
    return call


# --- interpret_request --------------------------------------------------------------------

# What the user may have said earlier in the conversation that this request leaves unsaid.
REMEMBERED_KEYS = ("region", "pay_frequency", "population")


def _earlier_statements(ctx: ToolContext, origin: dict[str, Any]) -> list[dict[str, Any]]:
    """The user's messages in this conversation before the one that started the run, newest first."""
    if origin.get("seq") is None:
        return []
    conversation = Run.objects.filter(id=ctx.run_id).values("conversation_id")  # a subquery: one statement
    events = (Event.objects.filter(conversation_id=Subquery(conversation), type="message.received",
                                   seq__lt=origin["seq"]).order_by("-seq")[:20])
    return [{"seq": e.seq, "text": e.data.get("text", ""), "at": e.created_at.isoformat()} for e in events
            if e.data.get("text")]


def _fill_from_conversation(ctx: ToolContext, requirements: dict[str, Any], origin: dict[str, Any]
                            ) -> list[dict[str, Any]]:
    """Memory that matters: a requirement this request leaves unsaid that the user stated
    earlier in the same conversation is taken from there (newest statement first), and the
    use is recorded as a frame with its evidence. Only what the user said — never a choice
    someone else made, and never an authorisation."""
    unsaid = [k for k in REMEMBERED_KEYS if not requirements.get(k)]
    if not unsaid:
        return []
    used = []
    for statement in _earlier_statements(ctx, origin):
        said = requirements_extract(statement["text"])
        for key in [k for k in unsaid if said.get(k)]:
            requirements[key] = said[key]
            if key == "region" and said.get("city") and not requirements.get("city"):
                requirements["city"] = said["city"]
            unsaid.remove(key)
            used.append({"key": key, "value": said[key], "evidence": {"kind": "message", **statement}})
        if not unsaid:
            break
    if used:
        requirements["missing"] = [k for k in requirements.get("missing") or [] if not requirements.get(k)]
        requirements["remembered"] = [{"key": u["key"], "value": u["value"]} for u in used]
        activity_id = node_activity_id(ctx.node_id)
        if activity_id:
            frame_record(activity_id=activity_id, kind="memory", name="memory: the conversation",
                         summary="Taken from what the user said earlier in this conversation: "
                                 + "; ".join(f"{u['key'].replace('_', ' ')} “{u['value']}”" for u in used) + ".",
                         payload={"boundary": "interpretation", "used": used})
    return used


def _from_the_request(ctx: ToolContext, arguments: dict[str, Any], requirements: dict[str, Any]) -> dict[str, Any]:
    """The step's output: the requirements, and the other values the user gave with the
    request (the group's name, the employee ids of an attachment) as coordinates of their
    own, each traced to the message the user typed."""
    origin = run_origin(ctx.run_id)
    used = _fill_from_conversation(ctx, requirements, origin)
    working_memory_record(
        tenant_id=ctx.tenant_id, run_id=ctx.run_id, node_id=ctx.node_id, step=ctx.node_key,
        items=[{"kind": "request", "text": arguments["request"], "evidence": {"kind": origin["kind"],
                                                                               "seq": origin.get("seq")}}]
        + [{"kind": "earlier_statement", "text": u["evidence"]["text"], "evidence": u["evidence"],
            "used_for": u["key"]} for u in used],
        decision=words_english(_interpret_summary({"requirements": requirements})))
    return {"requirements": requirements, "requested_group_name": arguments.get("group_name") or "",
            "employee_ids": [str(e) for e in arguments.get("employee_ids") or []],
            "origin": origin, "receipt_ref": f"call/{ctx.call_id}"}


def interpret_request(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    if arguments.get("by_rules"):
        # A local replan after the model's proposal failed its acceptance: the rules read it.
        requirements = requirements_extract(arguments["request"])
        requirements["fallback"] = "the model's requirements failed their acceptance; rules were used"
        return _from_the_request(ctx, arguments, requirements)
    understood = ctx.params.get("requirements")
    if isinstance(understood, dict) and ctx.params.get("request") == arguments["request"]:
        # The conversation already understood this very request (structured output or its
        # recorded fallback): the run decides on the same requirements, never a second reading.
        return {**_from_the_request(ctx, arguments, dict(understood)), "source": "conversation"}
    if backend_structured():
        outcome = structured_call(lambda m, **kw: tool_model_call(ctx, m, **kw), requirements_messages(
            arguments["request"]), purpose="requirements", schema=MODEL_SCHEMA,
            rules=lambda: requirements_extract(arguments["request"]))
        requirements = (requirements_from_model(outcome.data, arguments["request"]) if outcome.source == "model"
                        else {**outcome.data, "fallback": outcome.fallback})
        return {**_from_the_request(ctx, arguments, requirements), "source": outcome.source}
    messages = [
        {"role": "system", "content": "Extract payroll-group requirements as JSON with keys region, pay_frequency, "
                                      "population, items_named, group_name, missing."},
        {"role": "user", "content": arguments["request"]},
    ]
    result = tool_model_call(ctx, messages, purpose="requirements")
    try:
        requirements = json.loads(result.text)
        if not isinstance(requirements, dict):
            raise ValueError("not an object")
    except ValueError:
        # The model's answer is a proposal; a malformed one falls back to the rules, recorded.
        requirements = requirements_extract(arguments["request"])
        requirements["fallback"] = "the model's answer was not valid JSON; rules were used"
    # A well-formed proposal is kept as proposed: the acceptance validates it against the schema.
    return _from_the_request(ctx, arguments, requirements)


def _interpret_accept(ctx, arguments, output) -> list[Acceptance]:
    requirements = output["requirements"]
    problems = requirements_problems(requirements)
    return [Acceptance("the requirements were read from the request",
                       isinstance(requirements, dict) and "missing" in requirements),
            Acceptance("the requirements match their schema", not problems, "; ".join(problems)[:500])]


def _interpret_failure_replan(params, arguments, output, reason) -> dict[str, Any] | None:
    """A proposal that failed its acceptance is read again by the rules (once)."""
    if output is None or arguments.get("by_rules"):
        return None
    return {"interpret_by_rules": True}


def _requirement_name(key: str, value: Any, requirements: dict[str, Any]) -> Any:
    """A requirement's code as the reader reads it: the code in English (as the request was
    understood: "CN-SH", "sales"), its name in Chinese ("上海", "销售"); an unknown code as it is."""
    if not isinstance(value, str):
        return str(value)
    city = requirements.get("city") if isinstance(requirements.get("city"), dict) else None
    names = {"region": REGION_NAMES.get(value, (None, city.get("zh") if city else None)),
             "population": POPULATION_NAMES.get(value, (None, None)),
             "pay_frequency": FREQ_WORDS.get(value, (None, None)),
             "items_named": ITEM_NAMES.get(value, (None, None))}.get(key, (None, None))
    return localised(value, names[1]) if names[1] else value


def _interpret_summary(output: dict[str, Any]) -> Stored:
    r = output["requirements"]
    parts = [_requirement_name(k, r[k], r) for k in ("region", "pay_frequency", "population") if r.get(k)]
    understood = parts[0] if parts else words(gettext_noop("no details yet"))
    for part in parts[1:]:
        understood = words(gettext_noop("%(first)s · %(second)s"), first=understood, second=part)
    items = [_requirement_name("items_named", i, r) for i in r.get("items_named") or []]
    if items:
        return words(gettext_noop("Understood the request: %(details)s; items: %(items)s."), details=understood,
                     items=items)
    return words(gettext_noop("Understood the request: %(details)s."), details=understood)


tool_register(Tool(
    name="interpret_request",
    description="Turn the user's free-text request into structured payroll requirements.",
    input_schema={"type": "object", "properties": {"request": {"type": "string", "minLength": 1},
                                                   "by_rules": {"type": "boolean"},
                                                   "group_name": {"type": "string"},
                                                   "employee_ids": {"type": "array", "items": ID}},
                  "required": ["request"]},
    output_schema={"type": "object", "properties": {"requirements": {"type": "object"},
                                                    "requested_group_name": {"type": "string"},
                                                    "employee_ids": {"type": "array", "items": ID}},
                   "required": ["requirements", "requested_group_name", "employee_ids"]},
    fn=interpret_request, produces=["requirements", "requested_group_name", "employee_ids"],
    summary=_interpret_summary,
    accept=_interpret_accept, failure_replan=_interpret_failure_replan,
    milestones={"completed": "the request has been understood"},
))


# --- match_salary_template -----------------------------------------------------------------

def _requirements(ctx: ToolContext) -> dict[str, Any]:

    coordinate = coordinate_resolve(run_id=ctx.run_id, tenant_id=ctx.tenant_id, key="requirements")
    return dict(coordinate.value) if coordinate else {}


def template_score(template, requirements: dict[str, Any]) -> tuple[int, list[str]]:
    """How well a catalog template fits the requirements, with the reasons (payroll.matching's
    weights); a template that does not fit scores below zero."""
    fit = template_fit(template, requirements)
    return (fit.score if not fit.conflicts else -1), fit.reasons


def match_salary_template(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:

    _recalled.links = []
    # Consumed from interpret's coordinate (a direct import, with no interpretation, has none).
    requirements = dict(arguments.get("requirements") or {})
    zh = requirements.get("lang") == "zh"
    excluded = {int(t) for t in arguments.get("exclude_template_ids") or [] if str(t).isascii() and str(t).isdigit()}
    templates = [t for t in PayrollTemplate.objects.prefetch_related("items").order_by("code", "-version")
                 if t.id not in excluded]
    answer = (arguments.get("answer") or "").strip()
    code = arguments.get("template_code")
    pinned_id = arguments.get("pinned_template_id")
    if pinned_id:  # a person named the exact template (a direct import)
        chosen = PayrollTemplate.objects.filter(id=int(pinned_id)).first()
        if chosen is None:
            raise ToolError("The named template does not exist.")
        score, why = 0, ["named by the person importing"]
    elif arguments.get("next_best_template_id"):  # the replan after a failed verification chose it
        chosen = next((t for t in templates if str(t.id) == str(arguments["next_best_template_id"])), None)
        if chosen is None:
            raise ToolError("The next-best template is no longer in the catalog.")
        fit = template_fit(chosen, requirements)
        score, why = fit.score, fit.reasons + ["the next-best template after a failed verification"]
    elif code:
        pinned = [t for t in templates if t.code == code]
        if not pinned:
            raise ToolError(f"No template with code {code!r} is available.")
        chosen, score, why = pinned[0], 0, ["pinned by the caller"]
    else:
        decision = template_decide(requirements, templates)
        ranked = [((f.score, f.reasons), f.template) for f in decision.fits if not f.conflicts]
        if answer:
            # The answer picks one of the options offered (by label, "the first one", or a
            # variant in either language), or names any catalog template outright.
            offered = decision.options or [t for _, t in ranked[:3]]
            index = option_choose(answer, _options(offered, zh))
            picked = [offered[index]] if index is not None else [
                t for t in templates if answer.lower() in (t.name.lower(), t.code, (t.name_zh or ""))]
            if not picked:
                raise NeedsInput(words(gettext_noop("“%(answer)s” is not one of the templates offered. Click one, "
                                                    "or reply “the first one”."), answer=answer),
                                 _options(offered, zh))
            chosen = picked[0]
            fit = next((f for f in decision.fits if f.template.id == chosen.id), None)
            score, why = (fit.score, fit.reasons) if fit else (0, [])
            why = why + ["chosen by the user"]
        else:
            # Experience may promote a template an approver accepted for this kind of request even
            # if it lacks a named component, but never one for another place or pay cycle.
            recallable = [((f.score, f.reasons), f.template) for f in decision.fits
                          if not {"region", "pay_frequency"} & set(f.conflicts)]
            remembered = _memory_preference(ctx, requirements, recallable) if recallable else None
            if remembered is not None:
                # Experience only reorders the candidates; the import still needs its own approval.
                (score, why), chosen = remembered
                why = why + ["approved before for a similar request"]
            elif decision.kind == "clear":
                chosen = decision.chosen
                score, why = next((s, w) for (s, w), t in ranked if t is chosen)
            else:
                raise NeedsInput(decision_question(decision, requirements), _options(decision.options, zh))
    _match_working_memory(ctx, arguments, requirements, chosen, why)
    return {"template_id": str(chosen.id), "template_version": chosen.version, "template_name": chosen.name,
            "template_name_zh": chosen.name_zh or chosen.name,
            "score": score, "reasons": why, "receipt_ref": f"catalog/{chosen.code}@v{chosen.version}"}


def _match_working_memory(ctx: ToolContext, arguments: dict[str, Any], requirements: dict[str, Any], chosen,
                          why: list[str]) -> None:
    """L1: what the match had in mind as it chose — the consumed requirements (and what of them
    came from the conversation), the experience it recalled, the user's answer — and its choice."""
    items = [{"kind": "requirements", "text": words_english(_interpret_summary({"requirements": requirements})),
              "evidence": {"kind": "coordinate", "key": "requirements"}}]
    items += [{"kind": "earlier_statement", "text": f"{r['key']}: {r['value']}",
               "evidence": {"kind": "coordinate", "key": "requirements"}}
              for r in requirements.get("remembered") or []]
    items += [{"kind": "experience", "text": link["l3_text"], "evidence": link}
              for link in getattr(_recalled, "links", [])]
    if arguments.get("answer"):
        items.append({"kind": "answer", "text": arguments["answer"], "evidence": {"kind": "input.answered"}})
    working_memory_record(tenant_id=ctx.tenant_id, run_id=ctx.run_id, node_id=ctx.node_id, step=ctx.node_key,
                          items=items, decision=f"chose “{chosen.name}” ({'; '.join(why)})")
    _recalled.links = []


_recalled = threading.local()  # the L3 items the current match used, for its L1 record


def _memory_preference(ctx: ToolContext, requirements: dict[str, Any], ranked):
    """The planning boundary's memory retrieval: the L3 experience of this tenant for a
    similar request, if it names a template that still fits. Recorded as a frame that
    links the L3 item to its L2 receipt."""

    for item in previews.template_memories(tenant_id=ctx.tenant_id, requirements=requirements):
        pair = next((p for p in ranked if str(p[1].id) == item.data.get("template_id") and p[0][0] > 0), None)
        if pair is None:
            continue
        _memory_frame(ctx, item, localised(pair[1].name, pair[1].name_zh or pair[1].name))
        _recalled.links = [memory_link(item)]
        return pair
    return None


def _memory_frame(ctx: ToolContext, item, template_name: dict[str, str]) -> None:


    activity_id = node_activity_id(ctx.node_id)
    if not activity_id:
        return
    frame_record(activity_id=activity_id, kind="memory", name="memory: L3 experience",
                 summary=words(gettext_noop("Experience from an earlier approval ranked “%(template)s” first "
                                            "(context only; the import still needs its own approval)."),
                               template=template_name),
                 payload={"boundary": "planning", **memory_link(item)})


def _options(templates, zh: bool = False) -> list[dict[str, Any]]:
    """Options as buttons: `label` in the user's language, both languages kept for matching."""
    return [{"label": (t.name_zh or t.name) if zh else t.name, "label_en": t.name, "label_zh": t.name_zh,
             "answer": t.name} for t in templates]


# Who chose the template outright: then a conflict with the requirements is theirs to make.
_CHOSEN_BY_A_PERSON = {"chosen by the user", "pinned by the caller", "named by the person importing"}


def _match_accept(ctx, arguments, output) -> list[Acceptance]:
    template = (PayrollTemplate.objects.prefetch_related("items")
                .filter(id=int(output["template_id"]), version=output["template_version"]).first())
    by_person = bool(_CHOSEN_BY_A_PERSON & set(output.get("reasons") or []))
    conflicts = sorted({"region", "pay_frequency"} & set(template_fit(template, _requirements(ctx)).conflicts)) \
        if template is not None else []
    return [Acceptance("a catalog template was chosen", template is not None),
            Acceptance("it fits the requested region and pay cycle", template is not None and
                       (by_person or not conflicts),
                       words(gettext_noop("conflicts: %(what)s"), what=[CONFLICT_NAMES.get(c, c) for c in conflicts])
                       if conflicts else "")]


# What a conflict is about: its code in English (as stored), its name in Chinese.
CONFLICT_NAMES = {"region": localised("region", "地区"), "pay_frequency": localised("pay_frequency", "发薪周期")}


def _match_summary(output: dict[str, Any]) -> Stored:
    name = output["template_name"]
    return words(gettext_noop("Matched the template “%(template)s”."),
                 template=localised(name, output.get("template_name_zh") or name))


def _match_failure_replan(params, arguments, output, reason) -> dict[str, Any] | None:
    """The next-best template: the one that failed its acceptance is excluded; a pinned code
    that is not in the catalog is dropped (the matcher decides, or asks the user)."""
    if output is not None and output.get("template_id"):
        excluded = [str(t) for t in params.get("excluded_templates") or []]
        return {"excluded_templates": excluded + [str(output["template_id"])], "template_code": None}
    if arguments.get("template_code"):
        return {"template_code": None}
    return None


tool_register(Tool(
    name="match_salary_template",
    description="Search the template catalog for the template that best fits the interpreted requirements.",
    input_schema={"type": "object", "properties": {
        "template_code": {"type": "string"}, "exclude_template_ids": {"type": "array", "items": ID},
        "next_best_template_id": ID,
        "pinned_template_id": ID, "requirements": {"type": "object"},
        "answer": {"type": "string"}}},
    output_schema={"type": "object", "properties": {"template_id": ID, "template_version": {"type": "integer"}},
                   "required": ["template_id", "template_version"]},
    fn=match_salary_template, produces=["template_id"], consumes_optional=["requirements"],
    summary=_match_summary,
    accept=_match_accept, failure_replan=_match_failure_replan,
    milestones={"awaiting_input": "the template choice is waiting for the user's answer",
                "completed": "the template has been matched"},
))


# --- snapshot_payroll_groups: reserve the run's records and snapshot exactly those -------------

def _scope_employee_ids(ctx: ToolContext, arguments: dict[str, Any]) -> list[int]:
    # From interpret's coordinate when the run has one (the attachment the user sent).
    ids = arguments["employee_ids"] if "employee_ids" in arguments else ctx.params.get("employee_ids")
    return [int(e) for e in ids or []]


RETRY_ANSWERS = {"retry", "try again", "重试", "再试一次"}
CALLED_INSTEAD = words(gettext_noop("What should the new payroll group be called instead?"))


def _employee_held_question(ctx: ToolContext, held: EmployeeHeld) -> NeedsInput:
    """Another run is assigning one of this run's employees: said in words (each reader's
    language), with a link to that run, and what to do — try again once it has finished, or
    cancel this run."""
    zh = asked_in_chinese(ctx.params)
    who, other = held.extra.get("who") or held.extra.get("employee"), held.extra.get("run") or ""
    text = words(gettext_noop("Employee %(who)s is being assigned by another run (run %(run)s). Reply “retry” once "
                              "that run has finished, or “cancel” to cancel this one."), who=who, run=other)
    options = [{"label": "重试" if zh else "Retry", "label_en": "Retry", "label_zh": "重试", "answer": "retry"}]
    link = {"href": reverse("run", args=[int(other)]), "label": words(gettext_noop("Open the other run"))} if other else {}
    return NeedsInput(text, options, link=link)


@_transient_busy
def snapshot_payroll_groups(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """Reserve the new group's name and the employees the run will assign, then freeze
    exactly those records. A collision is found here, at planning time, before any
    approver is asked: the user is asked for another name, or told who holds an employee."""
    answer = (arguments.get("answer") or "").strip()
    if answer.lower() in RETRY_ANSWERS:  # "try again" after another run held an employee: not a name
        answer = ""
    name = (answer or arguments.get("requested_group_name") or arguments.get("group_name") or "").strip()
    try:
        name = group_name_normalised(name)  # as it will be stored: the scope, the label and the import use it
    except DomainError as refused:  # empty, or hiding an invisible character: asked like a taken name
        readable = " ".join("".join(ch for ch in name if not char_invisible(ch)).split())
        raise NeedsInput(sentences(refused.words, CALLED_INSTEAD),
                         [{"label": readable, "answer": readable}] if readable else []) from None
    employee_ids = _scope_employee_ids(ctx, arguments)
    run = Run.objects.select_related("created_by").get(id=ctx.run_id)
    try:
        records_claim(tenant_id=ctx.tenant_id, run_id=ctx.run_id, holder=f"run {ctx.run_id} of {run.created_by}",
                      group_name=name, employee_ids=employee_ids)
    except NameTaken as taken:
        raise NeedsInput(sentences(taken.words, CALLED_INSTEAD),
                         [{"label": f"{name} (2)", "answer": f"{name} (2)"}]) from None
    except EmployeeHeld as held:
        raise _employee_held_question(ctx, held) from None
    receipt = snapshot_create(actor=Actor.of_agent(ctx), label=f"before run {ctx.run_id}: “{name}”",
                              idempotency_key=ctx.idempotency_key,
                              scope={"group_name": name, "employee_ids": employee_ids})
    return {"snapshot_id": receipt.body["snapshot_id"], "checksum": receipt.body["checksum"], "group_name": name,
            "receipt_ref": f"payroll/snapshots/{receipt.body['snapshot_id']}"}


def _snapshot_accept(ctx, arguments, output) -> list[Acceptance]:

    snapshot = Snapshot.objects.filter(id=int(output["snapshot_id"]), tenant_id=ctx.tenant_id).first()
    reserved = RecordClaim.objects.filter(tenant_id=ctx.tenant_id, kind=ClaimKind.GROUP_NAME,
                                          key=group_name_key(output["group_name"]), run_id=ctx.run_id).exists()
    return [Acceptance("the snapshot exists in this tenant", snapshot is not None),
            Acceptance("its checksum matches the receipt", bool(snapshot and snapshot.checksum == output["checksum"])),
            Acceptance("the group name is reserved for this run", reserved)]


tool_register(Tool(
    name="snapshot_payroll_groups",
    description="Reserve the new group's name and the employees to assign for this run, and snapshot exactly "
                "those records (never the whole tenant).",
    input_schema={"type": "object", "properties": {"group_name": {"type": "string", "minLength": 1},
                                                   "requested_group_name": {"type": "string"},
                                                   "employee_ids": {"type": "array", "items": ID},
                                                   "answer": {"type": "string"}}},
    output_schema={"type": "object", "properties": {"snapshot_id": ID, "checksum": {"type": "string"},
                                                    "group_name": {"type": "string", "minLength": 1}},
                   "required": ["snapshot_id", "checksum", "group_name"]},
    fn=snapshot_payroll_groups, produces=["snapshot_id", "group_name"], side_effects=True, accept=_snapshot_accept,
    consumes_optional=["requested_group_name", "employee_ids"],
    summary=lambda output: words(gettext_noop("Reserved the name “%(name)s” and took a snapshot of what the run "
                                              "touches."), name=output["group_name"]),
    release=previews.scope_release,
    milestones={"awaiting_input": "the group name is taken: waiting for the user to choose another",
                "completed": "the group name is reserved and a snapshot of what the run touches was taken"},
))


# --- import_template --------------------------------------------------------------------------

@_transient_busy
def import_template(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:

    from .trial import city_of_params

    receipt = template_import(actor=Actor.of_agent(ctx), template_id=int(arguments["template_id"]),
                              group_name=arguments["group_name"], idempotency_key=ctx.idempotency_key,
                              city=city_of_params(ctx.params))
    body = receipt.body
    return {"group_id": body["group_id"], "items_created": body["items_created"],
            "template_id": body["template_id"], "template_version": body["template_version"],
            "receipt_ref": f"payroll/groups/{body['group_id']}"}


def _import_accept(ctx, arguments, output) -> list[Acceptance]:

    group = PayrollGroup.objects.filter(id=int(output["group_id"]), tenant_id=ctx.tenant_id).first()
    expected = TemplateItem.objects.filter(template_id=int(arguments["template_id"])).count()
    actual = group.items.count() if group else 0
    return [Acceptance("the group exists", group is not None),
            Acceptance("it has the template's item count", actual == expected,
                       words(gettext_noop("%(done)s of %(total)s items"), done=actual, total=expected)),
            Acceptance("it was built from the approved template",
                       bool(group and str(group.template_id) == str(arguments["template_id"])))]


tool_register(Tool(
    name="import_template",
    title=gettext_noop("Import template"),
    description="Import the matched template into a new payroll group.",
    input_schema={"type": "object", "properties": {"template_id": ID, "snapshot_id": ID,
                                                   "group_name": {"type": "string", "minLength": 1}},
                  "required": ["template_id", "snapshot_id", "group_name"]},
    output_schema={"type": "object", "properties": {"group_id": ID, "items_created": {"type": "integer"}},
                   "required": ["group_id", "items_created"]},
    # The name comes from the step that reserved it, by provenance, never retyped.
    fn=import_template, produces=["group_id"], consumes=["template_id", "snapshot_id", "group_name"],
    side_effects=True, read_only=False, needs_approval=True, compensation="undo_run_effects", accept=_import_accept,
    summary=lambda output: words(gettext_noop("Imported the template: %(count)s payroll items created."),
                                 count=output["items_created"]),
    preview=previews.import_preview, preconditions_check=previews.import_preconditions,
    argument_describe=previews.import_argument, summary_describe=previews.import_summary, rejection_replan=previews.import_rejection_replan,
    experience=previews.import_experience, effects_count=previews.import_effects,
    # Any approver, but a group reaching more than 50 employees or 500,000 CNY of monthly
    # gross is an admin's call (a template in another currency is too: it cannot be compared).
    approval_rule={"roles": ["approver", "admin"], "deadline_seconds": 24 * 3600,
                   "remind_before_seconds": 2 * 3600, "limits": {"headcount": 50, "monthly_gross": "500000"},
                   "above_limit_role": "admin"},
    measures=[Measure("headcount", gettext_noop("Headcount"), gettext_noop("people")),
              Measure("monthly_gross", gettext_noop("Monthly gross"), MONEY, currency="CNY")],
    milestones={"awaiting_approval": "the import is waiting for an approver",
                "completed": "the template was imported into the new group", "failed": "the import failed",
                "blocked": "the import was refused or timed out"},
))


# --- verify_import ------------------------------------------------------------------------------

def verify_import(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:

    group = (PayrollGroup.objects.select_related("template")
             .filter(id=int(arguments["group_id"]), tenant_id=ctx.tenant_id).first())
    if group is None:
        raise ToolError("The imported group is missing.")
    items = group.items.count()
    # The recovery tests' fault hook (KEEL_FAULTS="verify_import.item_unseen#<template code>=on"):
    # the verification finds one item short, so its criterion fails.
    tags = (*[v for v in ctx.params.values() if isinstance(v, str)], group.template.code if group.template else "")
    if fault_flag("verify_import.item_unseen", tags):
        items -= 1
    return {"group_name": group.name, "items": items,
            "template_items": group.template.items.count() if group.template_id else 0,
            "template_id": str(group.template_id or ""), "receipt_ref": f"payroll/groups/{group.id}"}


def _verify_undo_replan(tenant_id: int, run_id: int, params: dict[str, Any], output: dict[str, Any] | None,
                        not_met: list[str]) -> Replacement | None:
    """After a verification that failed and whose import was undone: try the template the
    match ranks next (the tried ones excluded). A verify that errored is not replanned."""
    if output is None or not not_met or not output.get("template_id"):
        return None
    tried = [str(t) for t in params.get("excluded_templates") or []] + [str(output["template_id"])]
    coordinate = coordinate_resolve(run_id=run_id, tenant_id=tenant_id, key="requirements")
    requirements = dict(coordinate.value) if coordinate else dict(params.get("requirements") or {})
    left = [t for t in PayrollTemplate.objects.prefetch_related("items").order_by("code", "-version")
            if str(t.id) not in tried]
    chosen = template_next_best(requirements, left)
    failed = "; ".join(not_met)
    if chosen is None:
        return Replacement(None, f"verification failed: {failed}; no other template is left to try")
    return Replacement({"excluded_templates": tried, "next_best_template": str(chosen.id), "template_code": None},
                       f"verification failed: {failed}; trying template {chosen.name}")


tool_register(Tool(
    name="verify_import",
    description="Check that the imported group is complete.",
    input_schema={"type": "object", "properties": {"group_id": ID}, "required": ["group_id"]},
    output_schema={"type": "object", "properties": {"items": {"type": "integer"}}, "required": ["items"]},
    fn=verify_import, consumes=["group_id"], inline=True, undo_replan=_verify_undo_replan,
    accept=lambda ctx, arguments, output: [Acceptance("every template item is in the group",
                                                      output["items"] == output["template_items"] > 0,
                                                      words(gettext_noop("%(done)s of %(total)s"),
                                                            done=output["items"], total=output["template_items"]))],
    summary=lambda output: words(gettext_noop("Verified the group “%(name)s”: %(count)s items."),
                                 name=output["group_name"], count=output["items"]),
    milestones={"completed": "the new group was verified"},
))


# --- undo_run_effects: the compensation ----------------------------------------------------------

def _receipt_keys(ctx: ToolContext, tool: str) -> list[str]:
    """The idempotency keys under which this run's `tool` reached the system of record."""
    return list(ToolCall.objects.filter(run_id=ctx.run_id, tool=tool).values_list("idempotency_key", flat=True))


@_transient_busy
def undo_run_effects(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """Undo this run's effects by its receipts, and nothing else; stop (blocked) if
    someone changed those records meanwhile."""
    try:
        receipt = run_effects_undo(actor=Actor.of_agent(ctx), snapshot_id=int(arguments["snapshot_id"]),
                                   import_keys=_receipt_keys(ctx, "import_template"),
                                   assign_keys=_receipt_keys(ctx, "assign_employees"),
                                   idempotency_key=ctx.idempotency_key)
    except ScopeChanged as changed:
        raise ToolBlocked(changed.message) from None
    body = receipt.body
    return {"snapshot_id": body["snapshot_id"], "checksum": body["checksum"],
            "groups_deleted": body["groups_deleted"], "employees_restored": body["employees_restored"],
            "receipt_ref": f"payroll/snapshots/{body['snapshot_id']}"}


def _undo_accept(ctx, arguments, output) -> list[Acceptance]:

    snapshot = Snapshot.objects.get(id=int(arguments["snapshot_id"]), tenant_id=ctx.tenant_id)
    now = scope_checksum(tenant_id=ctx.tenant_id, scope=snapshot.scope or {})
    return [Acceptance("the checksum over this run's scope equals the snapshot's", now == snapshot.checksum)]


def _undo_summary(output: dict[str, Any]) -> Stored:
    deleted = output["groups_deleted"]
    if not deleted and not output["employees_restored"]:
        return words(gettext_noop("Nothing of this run had reached the payroll system; nothing to undo."))
    removed = [f"“{n}”" for n in deleted] or words(gettext_noop("no group"))  # the names, as they are
    if output["employees_restored"]:
        return words(gettext_noop("Undid this run's changes: removed %(groups)s, put %(count)s employees back."),
                     groups=removed, count=output["employees_restored"])
    return words(gettext_noop("Undid this run's changes: removed %(groups)s."), groups=removed)


tool_register(Tool(
    name="undo_run_effects",
    description="Undo exactly this run's changes (the group it created, the assignments it made), by its receipts.",
    input_schema={"type": "object", "properties": {"snapshot_id": ID}, "required": ["snapshot_id"]},
    output_schema={"type": "object", "properties": {"checksum": {"type": "string"},
                                                    "groups_deleted": {"type": "array"},
                                                    "employees_restored": {"type": "integer"}},
                   "required": ["checksum", "groups_deleted", "employees_restored"]},
    fn=undo_run_effects, consumes=["snapshot_id"], side_effects=True, read_only=False, accept=_undo_accept,
    summary=_undo_summary,
    milestones={"completed": "this run's changes were undone", "blocked": "the undo stopped: someone changed the "
                                                                          "run's records"},
))


# --- assign_employees --------------------------------------------------------------------------

@_transient_busy
def assign_employees(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:

    ids = [int(e) for e in arguments.get("employee_ids") or []]
    created: list[str] = []
    if arguments.get("new_employees"):
        # The approval of the import covered them (its card listed each as a new employee).
        made = employees_create(actor=Actor.of_agent(ctx), group_id=int(arguments["group_id"]),
                                employees=arguments["new_employees"], idempotency_key=f"{ctx.idempotency_key}:new")
        ids += [int(e) for e in made.body["employee_ids"]]
        created = made.body["created"]
    if arguments.get("employee_pay"):
        # The export's pay for employees the tenant had, where it differs from the pay in force:
        # part of the same approved change (the card listed the export), once per key.
        employee_pay_record(actor=Actor.of_agent(ctx), employee_pay=arguments["employee_pay"],
                            idempotency_key=f"{ctx.idempotency_key}:pay", source=f"HR export, run {ctx.run_id}")
    receipt = employees_assign(actor=Actor.of_agent(ctx), group_id=int(arguments["group_id"]), employee_ids=ids,
                               idempotency_key=ctx.idempotency_key)
    return {"group_id": receipt.body["group_id"], "assigned": receipt.body["assigned"],
            "employee_ids": receipt.body["employee_ids"], "created": created,
            "receipt_ref": f"payroll/groups/{receipt.body['group_id']}"}


def _assign_accept(ctx, arguments, output) -> list[Acceptance]:

    listed = {int(e) for e in arguments.get("employee_ids") or []} | {int(e) for e in output.get("employee_ids") or []}
    in_group = Employee.objects.filter(tenant_id=ctx.tenant_id, id__in=listed,
                                       group_id=int(output["group_id"])).count()
    return [Acceptance("every listed employee is in the new group", in_group == len(listed),
                       words(gettext_noop("%(done)s of %(total)s"), done=in_group, total=len(listed)))]


tool_register(Tool(
    name="assign_employees",
    description="Assign the employees of the attached list to the new payroll group (creating those the approval "
                "card proposed as new).",
    input_schema={"type": "object", "properties": {
        # Empty when the export lists only new employees (interpret's coordinate is then []).
        "group_id": ID, "employee_ids": {"type": "array", "items": ID},
        "new_employees": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["employee_no", "name"],
            "properties": {"employee_no": {"type": "string", "minLength": 1, "maxLength": 40},
                           "name": {"type": "string", "minLength": 1, "maxLength": 200},
                           "department": {"type": "string"}, "location": {"type": "string"},
                           "pay": {"type": "object", "required": ["base_salary"]}}}},
        "employee_pay": {"type": "array", "items": {"type": "object", "required": ["employee_id", "pay"],
                                                    "properties": {"employee_id": ID, "pay": {"type": "object"}}}}},
        "required": ["group_id"], "anyOf": [{"required": ["employee_ids"]}, {"required": ["new_employees"]}]},
    output_schema={"type": "object", "properties": {"assigned": {"type": "integer"}}, "required": ["assigned"]},
    fn=assign_employees, consumes=["group_id"], consumes_optional=["employee_ids"], side_effects=True, read_only=False, accept=_assign_accept,
    summary=lambda output: words(gettext_noop("Assigned %(count)s employees to the new group."),
                                 count=output["assigned"]),
    milestones={"completed": "the listed employees were assigned to the new group"},
))


# --- the whole-tenant restore: an admin asks, a second person approves ------------------------

def inspect_tenant_restore(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """Read the tenant as it is now: the approval of the restore is bound to this checksum."""
    snapshot = Snapshot.objects.filter(id=int(arguments["snapshot_id"]), tenant_id=ctx.tenant_id).first()
    if snapshot is None or snapshot.scope is not None:
        raise ToolBlocked("That is not a whole-tenant snapshot of this tenant; nothing can be restored from it.")
    return {"snapshot_id": str(snapshot.id), "tenant_checksum": configuration_checksum(tenant_id=ctx.tenant_id),
            "receipt_ref": f"payroll/snapshots/{snapshot.id}"}


def _inspect_accept(ctx, arguments, output) -> list[Acceptance]:
    whole = Snapshot.objects.filter(id=int(output["snapshot_id"]), tenant_id=ctx.tenant_id, scope__isnull=True)
    return [Acceptance("the snapshot is a whole-tenant snapshot of this tenant", whole.exists())]


tool_register(Tool(
    name="inspect_tenant_restore",
    description="Read what restoring the whole tenant to a snapshot would delete and bring back.",
    input_schema={"type": "object", "properties": {"snapshot_id": ID}, "required": ["snapshot_id"]},
    output_schema={"type": "object", "properties": {"snapshot_id": ID, "tenant_checksum": {"type": "string"}},
                   "required": ["snapshot_id", "tenant_checksum"]},
    fn=inspect_tenant_restore, produces=["snapshot_id", "tenant_checksum"], accept=_inspect_accept,
    summary=lambda output: words(gettext_noop("Read the tenant's payroll configuration as it is now.")),
))


@_transient_busy
def restore_tenant_snapshot(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    try:
        receipt = snapshot_restore(actor=Actor.of_agent(ctx), snapshot_id=int(arguments["snapshot_id"]),
                                   tenant_checksum=arguments["tenant_checksum"], idempotency_key=ctx.idempotency_key)
    except Conflict as err:
        if err.code == "configuration_changed":
            raise ToolBlocked(err.message) from None
        raise
    return {"snapshot_id": receipt.body["snapshot_id"], "checksum": receipt.body["checksum"],
            "receipt_ref": f"payroll/snapshots/{receipt.body['snapshot_id']}"}


def _restore_accept(ctx, arguments, output) -> list[Acceptance]:
    snapshot = Snapshot.objects.get(id=int(arguments["snapshot_id"]), tenant_id=ctx.tenant_id)
    return [Acceptance("the tenant's checksum equals the snapshot's",
                       configuration_checksum(tenant_id=ctx.tenant_id) == snapshot.checksum)]


tool_register(Tool(
    name="restore_tenant_snapshot",
    title=gettext_noop("Restore tenant snapshot"),
    description="Restore the whole tenant's payroll configuration to a snapshot (deletes every later group).",
    input_schema={"type": "object", "properties": {"snapshot_id": ID, "tenant_checksum": {"type": "string"}},
                  "required": ["snapshot_id", "tenant_checksum"]},
    output_schema={"type": "object", "properties": {"checksum": {"type": "string"}}, "required": ["checksum"]},
    fn=restore_tenant_snapshot, consumes=["snapshot_id", "tenant_checksum"], side_effects=True, read_only=False,
    needs_approval=True, accept=_restore_accept,
    irreversible="It commits in one transaction and is the run's last step, so nothing is ever left half done; "
                 "undoing it is another whole-tenant restore, with its own approval.",
    summary=lambda output: words(gettext_noop("Restored the whole tenant's payroll configuration to the snapshot.")),
    preview=previews.restore_preview, preconditions_check=previews.restore_preconditions,
    argument_describe=previews.restore_argument, summary_describe=previews.restore_summary,
    # Whoever asked (a tenant admin) may not decide it: the four-eyes rule makes it a
    # second person's call, an approver's or another admin's.
    approval_rule={"roles": ["approver", "admin"], "deadline_seconds": 24 * 3600,
                   "remind_before_seconds": 2 * 3600},
    measures=[Measure("headcount", gettext_noop("Employees moved out of groups"), gettext_noop("people"))],
    milestones={"awaiting_approval": "the whole-tenant restore is waiting for a second person",
                "completed": "the tenant's payroll configuration was restored to the snapshot",
                "blocked": "the restore was refused, or the tenant changed after the approver looked"},
))


# --- Read-only exploration tools (ReAct) -------------------------------------------------------
# Called by agents.react outside any run: they read one tenant's data (and the global
# catalog) and return observations in words. No ids and no template codes reach the model;
# `names` lets the program resolve a chosen template exactly, by itself.

def list_templates(ctx: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:

    requirements = {k: arguments.get(k) for k in ("region", "pay_frequency", "population")}
    requirements["items_named"] = list(arguments.get("items_named") or [])
    latest: dict[str, Any] = {}
    for t in PayrollTemplate.objects.prefetch_related("items").order_by("code", "version"):
        latest[t.code] = t
    scored = sorted(((template_score(t, requirements), t) for t in latest.values()),
                    key=lambda pair: (-pair[0][0], pair[1].code))
    if any(requirements.get(k) for k in ("population", "region", "pay_frequency")) or requirements["items_named"]:
        scored = [p for p in scored if p[0][0] >= 0]  # only the templates that fit (payroll.matching)
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


# --- trial_payroll: the new group's trial months (payroll/trial.py) ------------------------------

from . import trial  # noqa: E402,F401 - registering is importing
