"""Read-only questions: a template's rates (`rate_answer`), and the configuration through the
read-only tools (chosen by the model on a tool-calling backend, else by the rules)."""
from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext_noop

from config.words import Stored, localised, words, words_render
from llm import backend_structured
from llm.structured import tool_calls_first
from workflows.conversation import TurnContext, TurnReply, conversation_domains, text_normalize
from workflows.tools import ToolContext, tool_get

from payroll.models import PayrollTemplate
from payroll.records.trial import NoCityRules, rules_for
from payroll.reading.matching import template_decide, template_name_words
from payroll.reading.requirements import requirements_extract

from .exploration import READ_ONLY, observation_words


RATE_EN = r"\b(rate|rates|percent(age)?|how much|contribution|cap|ratio)\b|%"
RATE_ZH = ("比例", "费率", "多少", "上限", "缴纳", "比率")
# Configuration items a rate question can name: (words, item-code fragments).
ITEM_TOPICS = [
    (r"housing|provident fund(?! \w*cpf)|公积金(?!（)", ("housing",)),
    (r"\bcpf\b|中央公积金", ("cpf",)),
    (r"\bmpf\b|强积金", ("mpf",)),
    (r"pension|养老", ("pension",)),
    (r"medical|医疗", ("medical",)),
    (r"unemployment|失业", ("unemployment",)),
    (r"injury|工伤", ("injury",)),
    (r"commission|提成", ("commission", "accelerator")),
    (r"overtime|\bot\b|加班", ("ot_", "overtime")),
    (r"income tax|\biit\b|个税|所得税", ("iit", "income_tax")),
    (r"bonus|年终奖", ("bonus",)),
    (r"social security|社会保障", ("social_security",)),
    (r"medicare", ("medicare",)),
    (r"\bsdl\b|skills development", ("sdl",)),
]
# How surely a question is payroll's, by kind (a policy question scores higher, a question
# about the runs in between: the conversation front weighs them).
KIND_SCORES = {"rate": 0.8, "templates": 0.4, "employees": 0.3, "groups": 0.1}


def _rate_topic(lowered: str) -> tuple[str, ...] | None:
    for pattern, codes in ITEM_TOPICS:
        if re.search(pattern, lowered):
            return codes
    return None


def question_kind(text: str) -> str:
    """rate, templates, employees or groups."""
    lowered = text_normalize(text)
    if _rate_topic(lowered) and (re.search(RATE_EN, lowered) or any(w in text for w in RATE_ZH)
                                 or "template" in lowered or "模板" in text or "look like" in lowered):
        return "rate"
    if re.search(r"\btemplates?\b|\bcatalog", lowered) or "模板" in text:
        return "templates"
    if re.search(r"\b(employees?|staff|people|headcount|workers?)\b", lowered) or any(
            w in text for w in ("员工", "人数", "多少人")):
        return "employees"
    return "groups"


def _percent(rate: Decimal | None) -> str:
    if rate is None:
        return ""
    value = (Decimal(rate) * 100).normalize()
    return f"{value:f}%"


def _rule_rate(template: PayrollTemplate, rate_name: str) -> Decimal | None:
    """The rate an item names (`housing_fund_employee_rate`) as its template's city's rules give
    it this month: the template holds no rate of its own; None where the rules have none."""
    try:
        today = timezone.localdate()
        rules = rules_for(template.region, today.year, today.month)
    except NoCityRules:
        return None
    for side in ("employee", "employer"):
        kind = rate_name.removesuffix(f"_{side}_rate")
        if kind != rate_name:
            rule = next((r for r in rules.contributions if r.kind == kind), None)
            if rule is not None:
                return rule.employee_rate if side == "employee" else rule.employer_rate
            return Decimal(0) if kind in rules.merged else None
    return None


def rate_answer(text: str) -> Stored:
    """A configuration value quoted from the catalog: "the housing fund rate in the Shanghai template"."""
    lowered = text_normalize(text)
    codes = _rate_topic(lowered)
    if not codes:
        return None
    requirements = requirements_extract(text)
    if not requirements.get("region"):
        # "the sales template", "the Singapore template": read the region from the catalog's words.
        requirements = {**requirements, "region": None}
    templates = list(PayrollTemplate.objects.prefetch_related("items").order_by("code", "-version"))
    candidates = [t for t in templates if any(part in i.code for i in t.items.all() for part in codes)]
    if requirements.get("region"):
        decision = template_decide({**requirements, "items_named": []}, candidates)
        ranked = [f.template for f in decision.fits if "region" not in f.conflicts
                  and "legacy" not in f.template.code]
        ranked = ([decision.chosen] if decision.chosen in ranked else []) + [t for t in ranked if t != decision.chosen]
    else:
        words_ = set(re.findall(r"[a-z]+", lowered))
        ranked = sorted(candidates, key=lambda t: (-len(words_ & set(re.findall(r"[a-z]+", t.name.lower()))),
                                                   "legacy" in t.code, t.code))
    if not ranked:
        return None
    template = ranked[0]
    items = [i for i in template.items.all() if any(part in i.code for part in codes)]
    described: Stored = ""
    for i in items:
        rate = _rule_rate(template, i.rate_name) if getattr(i, "rate_name", "") else i.rate
        how = _percent(rate) + (f" × {i.base}" if i.base else "") if rate is not None else (i.formula or "")
        said = words(gettext_noop("%(item)s: %(how)s"), item=localised(i.name, i.name_zh or i.name), how=how)
        described = words(gettext_noop("%(first)s; %(second)s"), first=described, second=said) if described else said
    return words(gettext_noop("In the template “%(template)s”, %(items)s."), template=template_name_words(template),
                 items=described)


def configuration_answer(turn: TurnContext) -> TurnReply:
    """A configuration question: on a tool-calling backend the model picks a read-only tool
    (function calling) and phrases the answer from its observation, streamed; otherwise, or
    when its call is not a valid read-only one, the rules pick (recorded)."""
    if backend_structured():
        return _configuration_by_tool_call(turn)
    action, arguments = _configuration_by_rules(turn)
    return TurnReply(route="analyze", reply=_read_only_observe(turn, action, arguments, chosen_by="rules"))


def _read_only_observe(turn: TurnContext, action: str, arguments: dict[str, Any], *, chosen_by: str) -> Stored:
    tool = tool_get(action)
    output = tool.fn(ToolContext(tenant_id=turn.membership.tenant_id, run_id=0, node_id=0, node_key="analyze",
                                 user_id=turn.membership.user_id, call_id=0, idempotency_key="",
                                 approval_id=None, params={}), arguments)
    observed = observation_words(action, output)
    turn.frame("action", f"action: {action}", f"Read the configuration: {action.replace('_', ' ')}.",
               {"action": action, "input": arguments, "chosen_by": chosen_by})
    turn.frame("observation", f"observation: {action}", observed, {"action": action, "output": output})
    return observed


def _configuration_by_tool_call(turn: TurnContext) -> TurnReply:
    persona = " ".join(d.persona for d in conversation_domains() if d.persona)
    tools = [tool_get(name).as_model_tool() for name in READ_ONLY]
    messages = [{"role": "system", "content": "You are Keel. " + persona + " Answer briefly. You cannot approve "
                                              "anything and you never invent identifiers. Answer the user's "
                                              "question about the company's payroll configuration: call one of "
                                              "the read-only tools first, then answer from what it returns, in "
                                              "the user's language."},
                {"role": "user", "content": turn.text}]
    result = turn.model(messages, purpose="react", tools=tools)
    call = tool_calls_first(result, set(READ_ONLY))
    chosen_by, why = "model", ""
    if call is not None:
        tool = tool_get(call["name"])
        arguments = {k: v for k, v in call["arguments"].items() if k in tool.input_schema.get("properties", {})}
        try:
            tool.input_validate(arguments)
        except Exception as err:  # a bad call is refused; the rules choose instead
            call, why = None, str(err)
    else:
        why = "the model called no read-only tool"
    if call is None:
        action, arguments = _configuration_by_rules(turn)
        turn.frame("validation", "tool call: fallback to rules",
                   f"The model's tool call could not be used ({why}); the rules chose {action.replace('_', ' ')}.",
                   {"reason": why, "action": action, "model_text": result.text, "tool_calls": result.tool_calls},
                   status="error", level="warning")
        return TurnReply(route="analyze", reply=_read_only_observe(turn, action, arguments, chosen_by="rules"))
    action = call["name"]
    observed = _read_only_observe(turn, action, arguments, chosen_by=chosen_by)
    # The observation goes back as the tool's result; the model's answer streams into the chat.
    answer_messages = [*messages,
                       {"role": "assistant", "content": result.text or None, "tool_calls": [
                           {"id": call["id"] or "call_0", "type": "function",
                            "function": {"name": action, "arguments": json.dumps(arguments, ensure_ascii=False)}}]},
                       {"role": "tool", "tool_call_id": call["id"] or "call_0", "content": words_render(observed)}]
    answer = turn.model(answer_messages, purpose="answer", reply=True)
    return TurnReply(route="analyze", reply=answer.text.strip() or observed)


def _configuration_by_rules(turn: TurnContext) -> tuple[str, dict[str, Any]]:
    lowered = turn.text.lower()
    if re.search(r"\b(employees?|staff|people|headcount|workers?)\b", lowered) or any(
            w in turn.text for w in ("员工", "人数", "多少人")):
        by = "department" if re.search(r"\b(department|team)s?\b", lowered) or "部门" in turn.text else "location"
        action, arguments = "count_employees", {"by": by}
    elif re.search(r"\btemplates?\b|\bcatalog", lowered) or "模板" in turn.text:
        req = requirements_extract(turn.text)
        action, arguments = "list_templates", {k: req[k] for k in ("region", "pay_frequency", "population")}
        arguments["items_named"] = req["items_named"]
    else:
        action, arguments = "list_groups", {}
    return action, arguments
