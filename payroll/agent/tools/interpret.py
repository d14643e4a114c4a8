"""interpret_request: the request's requirements, what the conversation said earlier filled in,
checked against the requirements' schema (a model's proposal or the rules')."""
from __future__ import annotations

import json
from typing import Any

from django.db.models import Subquery
from django.utils.translation import gettext_noop

from config.words import Stored, localised, words, words_english
from llm import backend_structured
from llm.structured import structured_call
from memory.services import working_memory_record
from timeline.models import Event
from timeline.services import frame_record
from workflows.models import Run
from workflows.pipeline import node_activity_id, tool_model_call
from workflows.provenance import run_origin
from workflows.tools import Acceptance, Tool, ToolContext, tool_register

from payroll.reading.matching import FREQ_WORDS, ITEM_NAMES
from payroll.reading.requirements import (
    MODEL_SCHEMA,
    POPULATION_NAMES,
    REGION_NAMES,
    requirements_extract,
    requirements_from_model,
    requirements_messages,
    requirements_problems,
)

from .common import ID


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
