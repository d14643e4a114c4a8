"""Payroll's part in the conversation (issue 29; workflows.conversation is the contract).

What was the conversation front's payroll knowledge, moved here unchanged in behaviour:

- its words: the subject and the requests to act that are payroll's, the exemplars, and
  what the requirement lexicons read in a text (a region, a pay cycle, a population or a
  pay item is itself a sign of a payroll request; payroll.requirements);
- a request to set up a group: a fixed `payroll_group_setup` plan at once when the request
  is complete, else ReAct exploration first (payroll.exploration), whose scratchpad waits in
  the conversation's pending state for the user's answer (the domain then holds the turn);
- read-only questions: a template's rates (`rate_answer`), and the configuration through the
  read-only tools (chosen by the model on a tool-calling backend, else by the rules);
- an attached HR export (payroll.attachments), its employees assigned after the import.
"""
from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

from django.utils.translation import gettext, gettext_noop

from config.words import Stored, english_aside, is_words, localised, sentences, words, words_english, words_render
from llm import backend_structured
from llm.structured import structured_call, tool_calls_first
from memory.services import memory_link
from timeline.services import frame_record
from workflows.blueprints import Door, params_validate
from workflows.conversation import (
    Attached,
    AttachmentKind,
    Change,
    Claim,
    ConversationDomain,
    Reading,
    Signs,
    TurnContext,
    TurnReply,
    Vocabulary,
    structured_frame,
)
from workflows.models import StateCoordinate
from workflows.services import run_create, run_plan_on_commit
from workflows.tools import ToolContext, tool_get

from payroll.reading.attachments import MAX_BYTES, AttachmentError, EmployeeList, employee_list_parse
from payroll.agent.changes import change_read
from .exploration import (
    READ_ONLY,
    ExplorationState,
    dependencies_known,
    observation_words,
    react_explore,
)
from payroll.reading.matching import (
    decision_question,
    items_met,
    not_met_words,
    option_choose,
    other_city_words,
    template_decide,
    template_fit,
    template_name_words,
)
from payroll.models import PayrollGroup, PayrollTemplate
from payroll.agent.previews import requirements_words, template_memories
from payroll.reading.requirements import (
    MODEL_SCHEMA,
    requirements_extract,
    requirements_from_model,
    requirements_messages,
    text_corrected,
    text_normalize,
)
from payroll.records.selectors import template_catalog

NAME = "payroll"
BLUEPRINT = "payroll_group_setup"
PERSONA = ("Keel sets up payroll groups for the user's company, imports employees and answers questions about "
           "the payroll configuration.")

# --- Its words -------------------------------------------------------------------------------

SUBJECT_EN = (r"payroll", r"pay ?groups?", r"salar(y|ies)", r"wages?", r"pay(ing|s|ment)?", r"paid", r"paychecks?",
              r"payslips?", r"compensation", r"remuneration", r"groups?", r"employees?", r"staff", r"team",
              r"headcount", r"templates?", r"tax(es)?", r"payday", r"pay ?runs?", r"benefits?", r"deductions?",
              r"earnings?", r"the setup", r"the import", r"rates?", r"pension", r"insurance", r"housing fund",
              r"the group")
SUBJECT_ZH = ("薪资", "工资", "薪酬", "薪水", "发薪", "算薪", "计薪", "薪资组", "工资组", "员工", "模板", "个税", "扣款",
              "福利", "组", "比例", "公积金", "养老", "医疗", "社保")
ACT_EN = (r"run (the |a |this month'?s? |our )?payroll", r"process (the )?payroll", r"do (the |our )?payroll",
          r"handle (the )?payroll", r"new (payroll )?group", r"get (them|people|staff|everyone) paid",
          r"pay (them|our|my|the|people|staff|folks|everyone)")
ACT_ZH = ("发工资", "算工资", "建组")
ACT_ZH_RE = (r"给.{0,12}发(工资|薪)", r"(需要|要|想)(一个|个).{0,10}(组|薪资|工资)")
EXEMPLARS = {
    "analyze": ("which payroll groups do we have", "list our payroll groups", "我们有哪些薪资组"),
    "resolve": ("set up a monthly payroll group for shanghai sales with commission", "create a payroll group",
                "import employees into a payroll group", "run payroll for this month", "帮我设置上海销售的月薪薪资组",
                "创建一个薪资组", "导入员工名单"),
}


def _read(signs: Signs) -> Reading:
    """What the requirement lexicons read: named things, and a request described without a verb."""
    req = requirements_extract(signs.text)
    named = tuple([k for k in ("region", "pay_frequency", "population") if req[k]] + req["items_named"])
    topical = tuple(req["items_named"] + ([req["population"]] if req["population"] else []))
    subject = len(signs.words) + len(named)
    # A description with no verb ("Shenzhen factory crew, overtime, monthly") is a request too.
    # A bare noun phrase ("Shanghai sales commission", "上海销售") stays ambiguous: it takes a
    # pay cycle, a payroll word, a stated name or a polite request to make it a description.
    described = req["pay_frequency"] or signs.request or req["name_stated"] or any(
        re.search(r"pay|salar|wage|group", d) or d in ("薪资", "工资", "薪酬", "薪资组", "工资组", "组")
        for d in signs.words)
    reason = ""
    if not signs.question and described and (req["region"] or req["population"]) and subject >= 2:
        reason = f"describes a payroll group ({', '.join(list(named) + list(signs.words[:1]))}) without naming the operation"
    elif len(named) >= 2 and re.search(r"\b(paid|pay|get|earn|need|want)\b|发|拿|需要", signs.lowered):
        reason = f"describes how staff are paid ({', '.join(named)}) without naming the operation"
    return Reading(named=named, topical=topical, described=reason)


def _correct(lowered: str) -> str:
    return text_corrected(lowered)


VOCABULARY = Vocabulary(subject_en=SUBJECT_EN, subject_zh=SUBJECT_ZH, act_en=ACT_EN, act_zh=ACT_ZH,
                        act_zh_re=ACT_ZH_RE, exemplars=EXEMPLARS, read=_read, correct=_correct)


# --- Understanding a request -------------------------------------------------------------------

def requirements_understood(call, text: str):
    """The requirements of `text` in requirements_extract's shape, and how they were obtained
    (None: no structured backend, the rules read them as they always do). The turn and the
    evaluation (payroll.evaluation) both read requests through here."""
    if not backend_structured():
        return requirements_extract(text), None
    outcome = structured_call(call, requirements_messages(text), purpose="requirements", schema=MODEL_SCHEMA,
                              rules=lambda: requirements_extract(text))
    requirements = requirements_from_model(outcome.data, text) if outcome.source == "model" else outcome.data
    return requirements, outcome


def _requirements(turn: TurnContext, text: str) -> dict[str, Any]:
    """The request's requirements, once per text and turn: the model's structured output on a
    backend that has it (validated, repaired once, else the rules, recorded), the rules otherwise.
    Every decision after this (dependencies_known, template_decide) reads this one dict."""
    understood = turn.memo.setdefault("payroll.understood", {})
    if text in understood:
        return understood[text]
    requirements, outcome = requirements_understood(turn.model, text)
    if outcome is not None:
        structured_frame(turn, "requirements", outcome)
    understood[text] = requirements
    return requirements


def _is_continue(text: str) -> bool:
    return text.strip().strip(".!。！").lower() in CONTINUE_WORDS


CONTINUE_WORDS = {"continue", "go on", "go ahead", "proceed", "carry on", "resume", "ok", "okay", "yes",
                  "继续", "好的", "可以", "继续吧", "好"}


# A route frame is words (config.words): the branch a code shown by its word, the reason a fixed
# sentence, or, built from parts, its English with a generic sentence for a reader of another
# language (`_reason_built`); the payload keeps the branch and the English reason.
BRANCH_WORDS = {"resume_run": gettext_noop("resume_run"), "resume_exploration": gettext_noop("resume_exploration"),
                "plan": gettext_noop("plan"), "explore": gettext_noop("explore")}


def _reason_built(english: str, generic: str, **params: Any) -> dict[str, str]:
    """Built in English from parts: as it is, and `generic` (a gettext_noop msgid) for the Chinese reader."""
    return localised(english, words_render(words(generic, **params), "zh-hans"))


def _route_words(branch: str, why: Stored) -> dict[str, Any]:
    return words(gettext_noop("Route: %(branch)s — %(why)s."),
                 branch=words(BRANCH_WORDS[branch]) if branch in BRANCH_WORDS else branch, why=why)


def _route_frame(turn: TurnContext, branch: str, why: Stored) -> None:
    """`why`: a msgid (a fixed sentence) or words already made."""
    why = why if isinstance(why, dict) else words(why)
    english = str(why.get("en", "")) if not is_words(why) else words_english(why)
    turn.frame("route", f"route → {branch}", _route_words(branch, why),
               {"signal": turn.signal, "branch": branch, "reason": english})


# --- Setting up a group ------------------------------------------------------------------------

def _employees(turn: TurnContext) -> EmployeeList | None:
    return turn.attachment if turn.attachment_kind == "employee_list" else None


def _plan_start(turn: TurnContext, *, request: str, requirements: dict[str, Any], template_name: str | None,
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
    template = _template_named(template_name) if template_name else None
    if template is None:
        decision = template_decide(requirements, template_catalog())
        template = decision.chosen if decision.kind == "clear" else None
    # The run decides on exactly what the conversation understood (no second reading), and
    # its approval card reads what the template meets and does not (requirements["not_met"]).
    params["requirements"] = {k: v for k, v in _with_items(requirements, template).items()
                              if not k.startswith("_")}
    params = params_validate(BLUEPRINT, params)  # refused here, within the turn
    reply = _plan_reply(turn, requirements, group_name, employees, new_employees,
                        template=template if template_name else None, lead=lead)

    def run_started() -> int:  # inside the reply's transaction
        if items:
            frame_record(activity_id=turn.activity_id, kind="memory", name="memory: planning",
                         summary=f"Recalled {len(items)} earlier experience(s) as context; they rank candidates "
                                 "but authorise nothing.",
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
        extra = _template_sentences(requirements, chosen)
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
        parts.append(words(gettext_noop("Then I'll assign the %(count)s employees on your list."),
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


def _explore(turn: TurnContext, state: ExplorationState, *, employees: list[str] | None,
             new_employees: list[dict[str, str]]) -> TurnReply:
    pending = turn.pending(NAME)
    outcome = react_explore(state=state, tenant_id=turn.membership.tenant_id, user_id=turn.membership.user_id,
                            narrative=turn.narrative, activity_id=turn.activity_id, model=turn.model, zh=turn.zh)
    if outcome.kind == "plan":
        pending.clear()  # run state ends with the exploration
        turn.frame("route", "route → plan", _route_words("plan", _reason_built(
            f"the exploration settled it ({outcome.reason})", gettext_noop("the exploration settled what was open"))),
                   {"branch": "plan", "reason": outcome.reason, "iterations": outcome.iterations})
        return _plan_start(turn, request=state.request, requirements=outcome.requirements,
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


def _resume_exploration(turn: TurnContext, exploration: dict[str, Any]) -> TurnReply:
    if is_stop(turn.text) and not requirements_extract(turn.text)["region"]:
        return _stop_reply(turn)
    request = exploration["request"] if _is_continue(turn.text) else f"{exploration['request']}\n{turn.text}"
    requirements = _requirements(turn, request)
    if (exploration.get("asked") or 0) >= 2 and not requirements.get("region") \
            and not dependencies_known(requirements, (exploration.get("requirements") or {}).get("_template_name"))[0]:
        # Never a third time: what the second asking said it would assume.
        stated = requirements.get("group_name") if requirements.get("name_stated") else None
        requirements = {**requirements, "region": "CN", "city": {"en": "China", "zh": "全国", "province": ""},
                        "missing": [k for k in ("pay_frequency",) if not requirements.get(k)]}
        requirements["group_name"] = stated or ("全国薪资组" if turn.zh else "China Payroll")
    stored = exploration.get("requirements") or {}
    template_name = stored.get("_template_name")
    attached = _employees(turn)
    employees = attached.employee_ids if attached else (stored.get("_employee_ids") or None)
    new_employees = list(attached.new_employees) if attached else list(stored.get("_new_employees") or [])
    state = ExplorationState(request=request, requirements=requirements,
                             scratchpad=list(exploration.get("scratchpad") or []),
                             iterations=exploration.get("iterations") or 0, template_name=template_name)
    if dependencies_known(requirements, template_name)[0]:
        turn.pending(NAME).clear()
        return _plan_start(turn, request=request, requirements=requirements, template_name=template_name,
                           employees=employees, new_employees=new_employees)
    return _explore(turn, state, employees=employees, new_employees=new_employees)


# --- The second turn: an answer is a message (issue 31) -------------------------------------------

STOP_EN = (r"^(oh,? )?(never ?mind|forget (it|about it|that)|cancel( it| that| this)?|stop( it)?|no,? thanks|"
           r"don'?t bother|scrap (it|that)|not needed|drop it)\b")
STOP_ZH = ("算了", "不用了", "取消", "不要了", "别弄了", "不弄了", "先不用")
DELEGATE_EN = (r"\b(whatever you think|you (decide|choose|pick)|up to you|your call|any( one)? (is|will do)|"
               r"doesn'?t matter|recommend(ed)?|your suggestion|the default)\b")
DELEGATE_ZH = ("你定", "随便", "你看着办", "都行", "都可以", "你决定", "推荐的", "默认")
UNSURE_EN = r"^(hmm+|hm+|not sure|dunno|i don'?t know|no idea|idk|unsure|maybe|no clue)\b"
UNSURE_ZH = ("不知道", "不确定", "没想好", "嗯", "不清楚", "说不好")
# The words that introduce a stated name, removed with it before the rest is read as an answer.
NAME_LEAD = (r"(?:,?\s*(?:and\s+)?(?:please\s+)?(?:call(?:ed)?(?: it)?|name(?:d| it)?(?: it)?|the group should be "
             r"(?:called|named))\s*$|[，,]?\s*(?:叫做|名字是|名字叫|名称叫|取名|起名叫?|就叫|叫)\s*$)")
TEMPLATE_KEYS = ("region", "pay_frequency", "population")


def _lowered(text: str) -> str:
    return text_normalize(text).strip().strip(".!。！?？~～")


def _said(text: str, en: str, zh: tuple[str, ...]) -> bool:
    return bool(re.search(en, _lowered(text))) or any(w in text for w in zh)


def is_stop(text: str) -> bool:
    return _said(text, STOP_EN, STOP_ZH)


def _is_delegate(text: str) -> bool:
    return _said(text, DELEGATE_EN, DELEGATE_ZH) or _is_continue(text)


def _is_unsure(text: str) -> bool:
    return _said(text, UNSURE_EN, UNSURE_ZH)


def answer_read(text: str, options: list[dict[str, Any]], before: dict[str, Any]) -> dict[str, Any]:
    """A whole message read as an answer: which option it picks (label, number, ordinal, words),
    and what else it carries — a stated name, a changed city, pay cycle, population or items."""
    said = requirements_extract(text)
    name = said["group_name"] if said["name_stated"] else None
    rest = text
    if name:
        head, _, tail = text.partition(name)
        rest = re.sub(NAME_LEAD, "", head, flags=re.I) + " " + tail.strip(" \"'“”「」")
    rest = re.sub(r"\s+one\b", "", rest.strip(" ,，.。"), flags=re.I)  # "the second one" → "the second"
    index = option_choose(rest, options) if rest.strip(" ,，.。") else None
    changes: dict[str, Any] = {}
    for key in TEMPLATE_KEYS:
        if said.get(key) and said[key] != before.get(key):
            changes[key] = said[key]
            if key == "region":
                changes["city"] = said.get("city")
    new_items = [i for i in said["items_named"] if i not in (before.get("items_named") or [])]
    if new_items:
        changes["items_named"] = list(before.get("items_named") or []) + new_items
    if index is not None and "region" in changes:
        # "use the Shanghai template" names the template's city, not a new place for the group.
        label = " ".join(str(options[index].get(k) or "") for k in ("label", "label_en", "label_zh")).lower()
        city = said.get("city") or {}
        if any(w and w.lower() in label for w in (city.get("en"), city.get("zh"))):
            changes.pop("region"), changes.pop("city", None)
    if index is not None and "population" in changes:
        changes.pop("population")
    return {"index": index, "name": name, "changes": changes, "stop": is_stop(text),
            "delegate": _is_delegate(text) and index is None, "unsure": _is_unsure(text)}


def answer_carries(text: str, options: list[dict[str, Any]], before: dict[str, Any]) -> bool:
    read = answer_read(text, options, before)
    return bool(read["index"] is not None or read["name"] or read["changes"] or read["stop"] or read["delegate"]
                or read["unsure"])


def _template_named(name: str):
    return (PayrollTemplate.objects.filter(name=name).order_by("-version").prefetch_related("items").first()
            or PayrollTemplate.objects.filter(code=name).order_by("-version").prefetch_related("items").first())


def _options_of(templates, zh: bool) -> list[dict[str, Any]]:
    return [{"label": (t.name_zh or t.name) if zh else t.name, "label_en": t.name, "label_zh": t.name_zh,
             "answer": t.name} for t in templates]


def _option_name(option: dict[str, Any]) -> Stored:
    """An offered template's name in each reader's language."""
    en = option.get("label_en") or option.get("answer") or option.get("label") or ""
    return localised(en, option.get("label_zh") or en)


def _labels(options: list[dict[str, Any]]) -> Stored:
    """"1. “A”, 2. “B”" (Chinese: 1. “甲”、2. “乙”), as words."""
    return [words(gettext_noop("%(n)s. “%(name)s”"), n=n + 1, name=_option_name(o)) for n, o in enumerate(options)]


def _waiting_question(turn: TurnContext):
    """This conversation's payroll run waiting for the user's answer, and the step that asks."""
    from workflows.models import Run, RunStatus
    from workflows.services import active_nodes

    run = (Run.objects.filter(conversation_id=turn.conversation_id, tenant_id=turn.membership.tenant_id,
                              status=RunStatus.AWAITING_INPUT, blueprint=BLUEPRINT).order_by("-created_at").first())
    if run is None:
        return None, None
    node = active_nodes(run.id).filter(status="awaiting_input").first()
    return run, node


def _run_requirements(run) -> dict[str, Any]:
    understood = run.params.get("requirements")
    if isinstance(understood, dict):
        return dict(understood)
    return requirements_extract(run.params.get("request") or "")


def _with_items(requirements: dict[str, Any], template) -> dict[str, Any]:
    """The requirements with what the template meets and does not (requirements["not_met"]:
    [{"item", "reason"}], read by the approval card)."""
    if template is None:
        return requirements
    met, not_met = items_met(requirements, template)
    return {**requirements, "met": met, "not_met": not_met, "template_code": template.code}


def _template_sentences(requirements: dict[str, Any], template) -> Stored:
    """Another city's template said plainly, and each requested item it does not meet (words)."""
    return sentences(other_city_words(requirements, template),
                     not_met_words(_with_items(requirements, template).get("not_met") or [], template))


def _stop_reply(turn: TurnContext, run=None) -> TurnReply:
    turn.pending(NAME).clear()
    if run is not None:
        def stopped() -> int:
            from workflows.services import run_cancel

            run_cancel(membership=turn.membership, run_id=run.id, reason="the user said to stop")
            return run.id
        reply = words(gettext_noop("OK — I've stopped it; that group won't be set up."))
        return TurnReply(route="resume_run", reply=reply, start_run=stopped)
    return TurnReply(route="resume_exploration",
                     reply=words(gettext_noop("OK, I won't set it up. Tell me whenever you need it.")))


def _restart(turn: TurnContext, run, *, name: str, requirements: dict[str, Any], template,
             lead: Stored, pending: dict[str, Any] | None = None) -> TurnReply:
    """The change needs a new run (a new name is reserved by the first steps): the waiting run
    is cancelled (its undo releases what it reserved) and a new one starts with the change and
    the chosen template, in the reply's commit."""
    from workflows.services import run_cancel

    requirements = {**requirements, "group_name": name, "name_stated": True}
    reply = _plan_start(turn, request=run.params.get("request") or turn.text, requirements=requirements,
                        template_name=template.name if template else None,
                        employees=run.params.get("employee_ids") or None,
                        new_employees=list(run.params.get("new_employees") or []), lead=lead)
    started = reply.start_run

    def run_started() -> int:
        from config.api import DomainError

        try:
            run_cancel(membership=turn.membership, run_id=run.id, reason=f"changed in the chat: {turn.text[:200]}")
        except DomainError:  # it ended meanwhile: nothing to stop
            pass
        new_id = started()
        if pending is not None:
            turn.pending(NAME).set({**pending, "run_id": new_id})
        else:
            turn.pending(NAME).clear()
        return new_id

    reply.start_run = run_started
    return reply


def _answer_node(turn: TurnContext, run, template, requirements: dict[str, Any]) -> TurnReply:
    """The run's own question answered with the template; its params keep what is (not) met."""
    from workflows.models import Run
    from workflows.services import node_input_answer

    turn.pending(NAME).clear()
    requirements = _with_items(requirements, template)

    def answered() -> int:
        node_input_answer(membership=turn.membership, run_id=run.id, answer=template.name)
        Run.objects.filter(id=run.id).update(params={**run.params, "requirements": requirements})
        return run.id

    reply = words(gettext_noop("Thanks — continuing with “%(answer)s”."), answer=template_name_words(template))
    return TurnReply(route="resume_run", reply=sentences(reply, _template_sentences(requirements, template)),
                     start_run=answered)


def _assume_question(turn: TurnContext, options: list[dict[str, Any]], why: Stored) -> Stored:
    return sentences(why, words(gettext_noop("Which template should it use: %(labels)s? Reply with a name or “the "
                                             "second one”. If you don't say, I'll use “%(first)s”."),
                                labels=_labels(options), first=_option_name(options[0])))


def _answer_template_question(turn: TurnContext, run, options: list[dict[str, Any]], asked: int,
                              before: dict[str, Any], assumed: str | None = None) -> TurnReply:
    """An answer to "which template?" (the run asked it once, or the chat a second time)."""
    zh = turn.zh
    read = answer_read(turn.text, options, before)
    if read["stop"] and read["index"] is None:
        return _stop_reply(turn, run)
    merged = {**before, **read["changes"]}
    if read["changes"]:
        merged["missing"] = [k for k in ("region", "pay_frequency") if not merged.get(k)]
    name_now = run.params.get("group_name") or ""
    name = read["name"] or name_now
    catalog = template_catalog()
    template = None
    if read["index"] is not None:
        template = _template_named(options[read["index"]]["answer"])
        if template is not None and read["changes"] and {"region", "pay_frequency"} & set(
                template_fit(template, merged).conflicts):
            template = None  # the pick contradicts what the same message changed: ask with new options
    elif read["changes"]:
        decision = template_decide(merged, catalog)
        if decision.kind == "clear":
            template = decision.chosen
        elif decision.options:
            options = _options_of(decision.options, zh)
    elif read["delegate"] or (asked >= 2 and not read["name"]):
        template = _template_named(assumed or options[0]["answer"])
    if template is None and read["changes"] and read["index"] is not None:
        decision = template_decide(merged, catalog)
        if decision.kind == "clear":
            template = decision.chosen
        elif decision.options:
            options = _options_of(decision.options, zh)
    if template is None and asked >= 2:
        template = _template_named(assumed or options[0]["answer"])  # never a third time: the assumption
    named = words(gettext_noop("OK — it'll be called “%(name)s”."), name=name) if name != name_now else ""
    if template is not None:
        if name != name_now:
            lead = sentences(named, words(gettext_noop("I've stopped the earlier setup and started again under that "
                                                       "name with the template “%(template)s”."),
                                          template=template_name_words(template)))
            return _restart(turn, run, name=name, requirements=merged, template=template, lead=lead)
        return _answer_node(turn, run, template, merged)
    # Not answered: the second (and last) time the question is put, with what Keel will assume.
    why = (words(gettext_noop("“%(said)s” is not one of the options."), said=turn.text[:40])
           if not read["name"] and not read["changes"] else "")
    question = _assume_question(turn, options, sentences(named, why))
    assume = options[0]["answer"]
    state = {"kind": "template", "request": run.params.get("request") or "", "asked": 2, "assume": assume,
             "options": options, "requirements": merged, "question": question}
    if name != name_now:
        # The name is applied now: a new run under it goes on with the assumption, and a pick
        # in the next message switches the template while the approval waits.
        template = _template_named(assume)
        lead = sentences(named, words(gettext_noop("I've started it again under that name, with “%(template)s” for "
                                                   "now."), template=template_name_words(template)))
        question = _assume_question(turn, options, lead)
        state.update(kind="assumed", question=question)
        reply = _restart(turn, run, name=name, requirements=merged, template=template, lead="",
                         pending=state)
        reply.reply, reply.options = question, options
        return reply
    state["run_id"] = run.id
    turn.pending(NAME).set(state)
    return TurnReply(route="resume_run", reply=question, options=options, run_id=run.id)


def _answer_assumed(turn: TurnContext, state: dict[str, Any]) -> TurnReply:
    """The run went on with the assumption; a pick in this message switches the template."""
    from workflows.models import Run

    run = Run.objects.filter(id=state.get("run_id"), tenant_id=turn.membership.tenant_id).first()
    options = state.get("options") or []
    before = dict(state.get("requirements") or {})
    read = answer_read(turn.text, options, before)
    if run is None:
        turn.pending(NAME).clear()
        return TurnReply(route="resume_run", reply=words(gettext_noop("OK.")))
    if read["stop"] and read["index"] is None:
        return _stop_reply(turn, run)
    template = _template_named(options[read["index"]]["answer"]) if read["index"] is not None else None
    assumed = _template_named(state.get("assume") or "")
    if template is None or (assumed is not None and template.code == assumed.code):
        turn.pending(NAME).clear()
        reply = words(gettext_noop("OK — going on with “%(template)s”."),
                      template=template_name_words(assumed) if assumed else "")
        if assumed is not None:
            reply = sentences(reply, _template_sentences(before, assumed))
        return TurnReply(route="resume_run", reply=reply, run_id=run.id)
    requirements = _with_items(before, template)
    lead = words(gettext_noop("OK — switching to the template “%(template)s”."), template=template_name_words(template))
    try:
        from workflows.services import run_revise
    except ImportError:  # no revision service: start again
        run_revise = None
    if run_revise is not None:
        from config.api import DomainError

        try:
            run_revise(membership=turn.membership, run_id=run.id, replace=["match"],
                       params_update={"template_code": template.code, "requirements": requirements},
                       reason=f"the user chose the template “{template.name}”")
        except DomainError as refused:
            return TurnReply(route="resume_run", run_id=run.id, reply=words(gettext_noop(
                "I couldn't switch the template just now (%(why)s). Please say it again in a moment."),
                why=refused.message))
        turn.pending(NAME).clear()
        return TurnReply(route="resume_run", run_id=run.id,
                         reply=sentences(lead, _template_sentences(before, template)))
    return _restart(turn, run, name=run.params.get("group_name") or "", requirements=before, template=template,
                    lead=lead)


# --- Read-only questions -----------------------------------------------------------------------

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
        how = _percent(i.rate) + (f" × {i.base}" if i.rate is not None and i.base else "") if i.rate is not None \
            else (i.formula or "")
        said = words(gettext_noop("%(item)s: %(how)s"), item=localised(i.name, i.name_zh or i.name), how=how)
        described = words(gettext_noop("%(first)s; %(second)s"), first=described, second=said) if described else said
    return words(gettext_noop("In the template “%(template)s”, %(items)s."), template=template_name_words(template),
                 items=described)


def _configuration(turn: TurnContext) -> TurnReply:
    """A configuration question: on a tool-calling backend the model picks a read-only tool
    (function calling) and phrases the answer from its observation, streamed; otherwise, or
    when its call is not a valid read-only one, the rules pick (recorded)."""
    if backend_structured():
        return _configuration_by_tool_call(turn)
    action, arguments = _configuration_by_rules(turn)
    return TurnReply(route="analyze", reply=_read_only_observe(turn, action, arguments, chosen_by="rules"))


def _read_only_observe(turn: TurnContext, action: str, arguments: dict[str, Any], *, chosen_by: str) -> str:
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
    from workflows.conversation import conversation_domains

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
                       {"role": "tool", "tool_call_id": call["id"] or "call_0", "content": observed}]
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


# --- The attachment: an HR export ----------------------------------------------------------------

def _employee_list(membership, conversation_id: int, text: str, filename: str, raw: bytes, lang: str) -> Attached:
    employees = employee_list_parse(tenant_id=membership.tenant_id, filename=filename, raw=raw, lang=lang)
    return Attached(filename=employees.filename, data=employees, rows=employees.rows,
                    summary=words(gettext_noop("An employee list of %(rows)s people was attached and checked."),
                                  rows=employees.rows),
                    payload={"file": employees.filename, "rows": employees.rows})


def _too_large(size: int) -> AttachmentError:
    return AttachmentError(gettext("The file is larger than %(value)s KB.") % {"value": MAX_BYTES // 1024},
                           code="attachment_too_large")


EMPLOYEE_LIST = AttachmentKind(name="employee_list", suffixes=(".csv", ".xlsx"), max_bytes=MAX_BYTES,
                               described=gettext_noop("a CSV or XLSX employee list (.csv or .xlsx)"),
                               parse=_employee_list, too_large=_too_large)


# --- The domain ------------------------------------------------------------------------------

class PayrollConversation(ConversationDomain):
    name = NAME
    persona = PERSONA
    blueprints = (BLUEPRINT, "payroll_direct_import", "payroll_tenant_restore")
    vocabulary = VOCABULARY
    attachments = (EMPLOYEE_LIST,)

    @property
    def evaluation(self):
        from .evaluation import EVALUATION

        return EVALUATION

    @property
    def dialogues(self):
        from .evaluation import DIALOGUE_EVALUATION

        return DIALOGUE_EVALUATION

    def holds(self, turn: TurnContext) -> Claim | None:
        """It asked (the exploration, or its run asked which template) and this message answers.
        A message the intent reads as chat still answers when it carries an answer ("never mind",
        "the second one", "叫成都运营")."""
        state = turn.pending(NAME).get()
        if state is not None:
            if turn.signal == "analyze":
                return None
            if turn.signal == "chat" and not answer_carries(turn.text, state.get("options") or [],
                                                            state.get("requirements") or {}):
                return None
            return Claim(1.0, "an exploration or a question is waiting for the user; this message answers it")
        run, node = _waiting_question(turn)
        if node is None or node.key != "match" or turn.signal == "analyze":
            return None
        options = (node.question or {}).get("options") or []
        if turn.signal == "chat" and not answer_carries(turn.text, options, _run_requirements(run)):
            return None
        return Claim(1.0, "its run asked which template to use; this message answers it as a whole")

    def claims(self, turn: TurnContext) -> Claim | None:
        if turn.signal != "resolve":
            return None
        return Claim(0.5, "a request to set up a payroll group")

    def answer(self, turn: TurnContext) -> TurnReply:
        exploration = turn.pending(NAME).get()
        if exploration is not None and exploration.get("kind") in ("template", "assumed"):
            _route_frame(turn, "resume_run",
                         gettext_noop("a template question is open; this message answers it as a whole"))
            if exploration["kind"] == "assumed":
                return _answer_assumed(turn, exploration)
            run, node = _waiting_question(turn)
            if run is None or run.id != exploration.get("run_id"):
                turn.pending(NAME).clear()
            else:
                return _answer_template_question(turn, run, exploration.get("options") or [], 2,
                                                 dict(exploration.get("requirements") or {}),
                                                 assumed=exploration.get("assume"))
            exploration = None
        if exploration is None:
            run, node = _waiting_question(turn)
            if node is not None and node.key == "match" and turn.signal != "analyze":
                _route_frame(turn, "resume_run", gettext_noop("its run asked which template to use; this message "
                                                              "answers it as a whole"))
                return _answer_template_question(turn, run, (node.question or {}).get("options") or [], 1,
                                                 _run_requirements(run))
        if exploration is not None and turn.signal != "analyze":
            _route_frame(turn, "resume_exploration",
                         gettext_noop("an exploration is waiting for a missing value; this message adds to it"))
            reply = _resume_exploration(turn, exploration)
            reply.route = "resume_exploration"
            return reply
        requirements = _requirements(turn, turn.text)
        known, missing = dependencies_known(requirements, None)
        attached = _employees(turn)
        employees = attached.employee_ids if attached else None
        new_employees = list(attached.new_employees) if attached else []
        turn.anchor_set(turn.text)
        if known:
            _route_frame(turn, "plan", _reason_built(
                f"the request is complete ({requirements_words(requirements)}; group “{requirements['group_name']}”): "
                "a fixed plan runs at once",
                gettext_noop("the request is complete (group “%(group)s”): a fixed plan runs at once"),
                group=requirements["group_name"]))
            return _plan_start(turn, request=turn.text, requirements=requirements, template_name=None,
                               employees=employees, new_employees=new_employees)
        _route_frame(turn, "explore", _reason_built(
            "the request lacks " + ", ".join(m.replace("_", " ") for m in missing) + ": explore before planning",
            gettext_noop("the request lacks something it needs: explore before planning")))
        reply = _explore(turn, ExplorationState(request=turn.text, requirements=requirements),
                         employees=employees, new_employees=new_employees)
        reply.route = "explore"
        return reply

    def question(self, text: str) -> Claim | None:
        kind = question_kind(text)
        return Claim(KIND_SCORES[kind], f"a question about the payroll {kind}", kind=kind)

    def analyze(self, turn: TurnContext, kind: str) -> TurnReply | None:
        if kind == "rate":
            reply = rate_answer(turn.text)
            if reply:
                turn.frame("observation", "observation: template items", reply, {"kind": kind})
                return TurnReply(route="analyze", reply=reply)
        return _configuration(turn)

    def option_choose(self, text: str, options: list[dict[str, Any]]) -> int | None:
        return option_choose(text, options)

    def change(self, turn: TurnContext, run: Any) -> Change | None:
        return change_read(turn, run)  # payroll/changes.py

    def run_title(self, run: Any) -> Stored:
        name = run.params.get("group_name")
        if not name:
            return None
        return words(gettext_noop("The setup of “%(name)s”"), name=name)

    def run_made(self, run: Any) -> Stored:
        coordinate = StateCoordinate.objects.filter(run=run, key="group_id").order_by("-plan_version").first()
        group = coordinate and PayrollGroup.objects.filter(id=int(coordinate.value), tenant_id=run.tenant_id).first()
        if not group:
            return None
        return words(gettext_noop("The group “%(name)s” has been created."), name=group.name)

    def clarify_hint(self, text: str, zh: bool) -> str:
        missing = requirements_extract(text)["missing"] if text.strip() else ["region", "pay_frequency"]
        if zh:
            asks = {"region": "哪个地区（例如上海、北京、新加坡）", "pay_frequency": "发薪频率（例如每月、半月）"}
            return "如果要创建，请告诉我" + "和".join(asks[m] for m in missing) + "。" if missing else ""
        asks = {"region": "which region (for example Shanghai, Beijing, Singapore)",
                "pay_frequency": "how often they are paid (for example monthly)"}
        return " If it's a setup, tell me " + " and ".join(asks[m] for m in missing) + "." if missing else ""

    def capability(self, zh: bool) -> str:
        return "创建薪资组、导入员工" if zh else "set up payroll groups, import employees"

    def example(self, zh: bool) -> str:
        return "为我们上海销售团队设置一个含提成的月度薪资组" if zh else \
            "set up a monthly payroll group for our Shanghai sales team with commission"
