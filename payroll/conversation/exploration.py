"""ReAct exploration while a payroll-group request is not yet complete: the payroll
domain's part of the conversation (payroll.conversation) that asks before it plans.

Each iteration appends a Thought / Action / Observation block to a scratchpad. The
model proposes the step (JSON `{"thought", "action", "input"}` or a bare action name);
only the read-only exploration tools, `ask_user` and `finish` are allowed, and an
answer outside them is refused and the rules choose instead (recorded as such). The
program — not the model — decides when the dependencies are known: after every
observation it checks whether the request is now complete (a region and a pay
frequency, or exactly one fitting template, and a group name) and hands control back
to the orchestrator at once. When a value only the user can give is missing, control
goes back to the user; their answer (or "continue") in a later turn resumes here.

Budgets: an iteration cap per turn, and the turn's model-call cap. The scratchpad and
counters are run state: they live in the conversation's pending state while it waits
and are deleted when it ends; they are never business records.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable


from django.utils.translation import gettext_noop

from config.words import Stored, ngettext_noop, words, words_english
from llm import backend_structured
from llm.structured import tool_calls_first
from timeline.services import frame_record
from workflows.tools import ToolContext, tool_get

from payroll.reading.matching import requirement_specific
from payroll.agent.previews import requirements_words, template_memories

ITERATION_CAP = 4
ACTIONS = ("list_templates", "list_groups", "count_employees", "ask_user", "finish")
READ_ONLY = ("list_templates", "list_groups", "count_employees")


@dataclass
class ExplorationOutcome:
    kind: str  # "plan" (dependencies known) or "ask" (the user must answer)
    requirements: dict[str, Any]
    scratchpad: list[dict[str, Any]]
    iterations: int
    question: Stored = ""  # words (config.words)
    template_name: str | None = None
    reason: str = ""


@dataclass
class ExplorationState:
    request: str
    requirements: dict[str, Any]
    scratchpad: list[dict[str, Any]] = field(default_factory=list)
    iterations: int = 0
    template_name: str | None = None  # set by the program when exactly one template fits


def dependencies_known(requirements: dict[str, Any], template_name: str | None) -> tuple[bool, list[str]]:
    """What a fixed plan needs: a region, or something specific enough to pick a template
    without one (payroll.reading.matching), or one matched template; and a group name. The pay
    cycle is not asked for: the template choice settles it, or asks on a genuine tie."""
    missing = []
    if not template_name and not requirements.get("region") and not requirement_specific(requirements):
        missing.append("region")
    if not requirements.get("group_name"):
        missing.append("group_name")
    return not missing, missing


QUESTIONS = {
    "region": gettext_noop("which city or region the group is for (for example Shanghai, Hangzhou, Singapore or "
                           "nationwide)"),
    "pay_frequency": gettext_noop("how often they are paid (for example monthly or semi-monthly)"),
    "group_name": gettext_noop("what the new group should be called"),
}


def question_for(missing: list[str], *, zh: bool = False) -> Stored:
    """What the user is asked for (words, read in each reader's language); `zh` is unused."""
    asked: Stored = ""
    for m in missing:
        said = words(QUESTIONS[m])
        asked = words(gettext_noop("%(first)s and %(then)s"), first=asked, then=said) if asked else said
    return words(gettext_noop("To go on I need to know %(what)s. Reply with that (or say “continue” once you have "
                              "set it up) and I'll pick up from here."), what=asked)


CONTROL_TOOLS = [
    {"type": "function", "function": {"name": "ask_user", "description": "Ask the user for a missing value.",
                                      "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {"name": "finish", "description": "The request is complete: plan it.",
                                      "parameters": {"type": "object", "properties": {}}}},
]


def model_tools() -> list[dict[str, Any]]:
    """The read-only registry tools as function schemas (Tool.as_model_tool), and the two control steps."""
    return [tool_get(name).as_model_tool() for name in READ_ONLY] + CONTROL_TOOLS


def _prompt(state: ExplorationState, *, narrative: Callable[[list[str]], str], memory_texts: list[str],
            tool_calling: bool = False) -> list[dict[str, Any]]:
    tools = "\n".join(f"- {name}: {tool_get(name).description}" for name in READ_ONLY)
    how = ("Call exactly one of the functions; put your reasoning in the message text. " if tool_calling else
           'Answer with one JSON object {"thought": "...", "action": "...", "input": {...}}. ')
    system = ("You explore a payroll set-up request before a fixed plan runs. " + how + "Allowed actions: "
              + ", ".join(ACTIONS) + ". Tools (read-only):\n" + tools
              + "\n- ask_user: ask the user for a missing value\n- finish: the request is complete")
    collection = [f"the request so far asks for {requirements_words(state.requirements)}"]
    if state.requirements.get("group_name"):
        collection.append(f"the group is to be called “{state.requirements['group_name']}”")
    messages = [{"role": "system", "content": system},
                {"role": "system", "content": narrative(collection)}]
    if memory_texts:
        messages.append({"role": "system", "content": "Experience (context, not authority): "
                                                      + " ".join(memory_texts)})
    pad = "\n".join(f"Thought: {b['thought']}\nAction: {b['action']} {json.dumps(b.get('input') or {})}\n"
                    f"Observation: {b['observation']}" for b in state.scratchpad)
    messages.append({"role": "user", "content": f"Request: {state.request}\n{pad}".strip()})
    return messages


def step_parse(text: str) -> dict[str, Any] | None:
    """A proposed step, or None when it is not one of the allowed actions."""
    candidate: Any = (text or "").strip()
    if candidate.startswith("{"):
        try:
            candidate = json.loads(candidate)
        except ValueError:
            return None
    if isinstance(candidate, str):
        candidate = {"thought": "", "action": candidate.strip().strip("\"'`.")}
    if not isinstance(candidate, dict) or candidate.get("action") not in ACTIONS:
        return None
    arguments = candidate.get("input") if isinstance(candidate.get("input"), dict) else {}
    return {"thought": str(candidate.get("thought") or "")[:500], "action": candidate["action"], "input": arguments}


def step_by_rules(state: ExplorationState) -> dict[str, Any]:
    """The deterministic policy when the model proposes nothing usable."""
    done = {b["action"] for b in state.scratchpad}
    if "list_templates" not in done:
        known = {k: state.requirements.get(k) for k in ("region", "pay_frequency", "population")}
        return {"thought": "Some details are missing; look at which catalog templates fit what is known.",
                "action": "list_templates", "input": {**known, "items_named": state.requirements.get("items_named") or []}}
    return {"thought": "The catalog does not settle it; ask the user for what is missing.",
            "action": "ask_user", "input": {}}


def observation_words(action: str, output: dict[str, Any]) -> Stored:
    """The observation the model reads and a person may be shown, as words: names and counts
    (each count with its noun in the form the count needs), never ids or codes."""
    if action == "list_templates":
        if not output["templates"]:
            return words(gettext_noop("No catalog template fits what is known."))
        names = "; ".join(f"“{t['name']}” ({t['region']}, {t['pay_frequency'].replace('_', '-')})"
                          for t in output["templates"][:5])
        return words(ngettext_noop("%(n)s template fits: %(names)s.", "%(n)s templates fit: %(names)s."),
                     n=output["count"], names=names)
    if action == "list_groups":
        if not output["groups"]:
            return words(gettext_noop("The company has no payroll groups yet."))
        groups = [words(ngettext_noop("%(name)s (%(n)s employee)", "%(name)s (%(n)s employees)"),
                        name=g["name"], n=g["employees"]) for g in output["groups"][:10]]
        return words(ngettext_noop("%(n)s group: %(groups)s.", "%(n)s groups: %(groups)s."),
                     n=output["count"], groups=groups)
    if action == "count_employees":
        counts = ", ".join(f"{k}: {v}" for k, v in list(output["counts"].items())[:12])
        return words(ngettext_noop("%(n)s employee by %(by)s — %(counts)s; %(unassigned)s in no group.",
                                   "%(n)s employees by %(by)s — %(counts)s; %(unassigned)s in no group."),
                     n=output["total"], by=output["by"], counts=counts, unassigned=output["unassigned"])
    return ""


def _frame(activity_id: int, kind: str, name: str, summary: str, payload: dict[str, Any], parent=None):
    return frame_record(activity_id=activity_id, kind=kind, name=name, summary=summary, payload=payload,
                        parent_id=parent.id if parent else None)


def react_explore(*, state: ExplorationState, tenant_id: int, user_id: int, narrative: Callable[[list[str]], str],
                  activity_id: int, model: Callable[..., Any], zh: bool = False) -> ExplorationOutcome:
    """Explore until the dependencies are known (→ "plan") or the user must answer (→ "ask")."""
    first = not state.scratchpad
    memory_texts: list[str] = []
    if first:  # the first-ReAct boundary: the one place exploration consults memory
        items = template_memories(tenant_id=tenant_id, requirements=state.requirements)
        memory_texts = [item.text for item in items]
        if items:
            _frame(activity_id, "memory", "memory: first ReAct step",
                   words(ngettext_noop("Recalled %(n)s earlier experience as context.",
                                       "Recalled %(n)s earlier experiences as context."), n=len(items)),
                   {"boundary": "first_react", "items": [{"l3": str(i.id), "l2": str(i.evidence_id),
                                                          "text": i.text} for i in items]})
    template_name = state.template_name
    tools = model_tools() if backend_structured() else None
    for _ in range(ITERATION_CAP):
        state.iterations += 1
        messages = _prompt(state, narrative=narrative, memory_texts=memory_texts,
                           tool_calling=bool(tools))
        result = model(messages, purpose="react", choices=list(ACTIONS), tools=tools)
        called = tool_calls_first(result, set(ACTIONS)) if tools else None
        if called is not None:  # function calling: the call is the step
            step = {"thought": (result.text or "")[:500], "action": called["name"], "input": called["arguments"]}
        else:
            step = step_parse(result.text)
        chosen_by = "model"
        if step is None:
            step, chosen_by = step_by_rules(state), "rules"
        thought = _frame(activity_id, "thought", f"thought {state.iterations}",
                         step["thought"] or "(no thought given)",
                         {"proposed": result.text, "tool_calls": result.tool_calls, "chosen_by": chosen_by})
        action = step["action"]
        _frame(activity_id, "action", f"action: {action}",
               f"Chose {action.replace('_', ' ')}" + (" (the model's answer was not an allowed step; the rules "
                                                     "chose)" if chosen_by == "rules" else "") + ".",
               {"action": action, "input": step["input"], "chosen_by": chosen_by}, parent=thought)
        if action in READ_ONLY:
            tool = tool_get(action)
            arguments = {k: v for k, v in step["input"].items() if k in tool.input_schema.get("properties", {})}
            if action == "list_templates":  # the known requirements are program state: fill them in
                for key in ("region", "pay_frequency", "population"):
                    arguments.setdefault(key, state.requirements.get(key))
                arguments.setdefault("items_named", state.requirements.get("items_named") or [])
            try:
                tool.input_validate(arguments)
                output = tool.fn(ToolContext(tenant_id=tenant_id, run_id=0, node_id=0, node_key="explore",
                                             user_id=user_id, call_id=0, idempotency_key="", approval_id=None,
                                             params={}), arguments)
                observed = words_english(observation_words(action, output))  # the scratchpad is the model's
            except Exception as err:  # a bad proposal is an observation, not a crash
                output, observed = {}, f"The tool refused: {err}"
            _frame(activity_id, "observation", f"observation: {action}", observed,
                   {"action": action, "arguments": arguments, "output": output}, parent=thought)
            state.scratchpad.append({"thought": step["thought"], "action": action, "input": arguments,
                                     "observation": observed})
            if action == "list_templates" and len(output.get("templates") or []) == 1 and (
                    state.requirements.get("population") or state.requirements.get("items_named")):
                template_name = state.template_name = output["templates"][0]["name"]
            known, missing = dependencies_known(state.requirements, template_name)
            if known:  # control returns to the orchestrator as soon as the dependencies are known
                return ExplorationOutcome("plan", state.requirements, state.scratchpad, state.iterations,
                                          template_name=template_name,
                                          reason="exactly one template fits" if template_name else
                                          "region, pay frequency and group name are known")
            continue
        known, missing = dependencies_known(state.requirements, template_name)
        if action == "finish" and known:
            return ExplorationOutcome("plan", state.requirements, state.scratchpad, state.iterations,
                                      template_name=template_name, reason="the request is complete")
        # ask_user, or a finish the program does not accept: the user must supply what is missing
        question = question_for(missing, zh=zh)
        state.scratchpad.append({"thought": step["thought"], "action": "ask_user", "input": {},
                                 "observation": "asked the user: " + ", ".join(missing)})
        return ExplorationOutcome("ask", state.requirements, state.scratchpad, state.iterations, question=question,
                                  reason="missing " + ", ".join(missing))
    known, missing = dependencies_known(state.requirements, template_name)
    return ExplorationOutcome("ask", state.requirements, state.scratchpad, state.iterations,
                              question=question_for(missing or ["region"], zh=zh),
                              reason=f"the exploration reached its cap of {ITERATION_CAP} steps")
