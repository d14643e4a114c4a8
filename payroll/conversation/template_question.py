"""The second turn of "which template?": the run asked (or the chat asked a second time, saying
what it will assume), and a whole message answers — a pick, a new name (the run is revised
under it), a change that calls for other options, "never mind", or nothing it can read (asked
once more, then the assumption)."""
from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_noop

from config.api import DomainError
from config.words import Stored, localised, sentences, words
from workflows.conversation import TurnContext, TurnReply
from workflows.models import Run, RunStatus
from workflows.services import active_nodes, node_input_answer, run_revise

from payroll.reading.matching import template_decide, template_fit, template_name_words
from payroll.reading.requirements import requirements_extract
from payroll.records.selectors import template_catalog

from .answers import answer_read
from .setup import stop_reply, template_named, template_sentences, with_items
from .vocabulary import BLUEPRINT, NAME


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


def waiting_question(turn: TurnContext):
    """This conversation's payroll run waiting for the user's answer, and the step that asks."""
    run = (Run.objects.filter(conversation_id=turn.conversation_id, tenant_id=turn.membership.tenant_id,
                              status=RunStatus.AWAITING_INPUT, blueprint=BLUEPRINT).order_by("-created_at").first())
    if run is None:
        return None, None
    node = active_nodes(run.id).filter(status="awaiting_input").first()
    return run, node


def run_requirements(run) -> dict[str, Any]:
    understood = run.params.get("requirements")
    if isinstance(understood, dict):
        return dict(understood)
    return requirements_extract(run.params.get("request") or "")


def _revise(turn: TurnContext, run, *, name: str, requirements: dict[str, Any], template,
            lead: Stored, pending: dict[str, Any] | None = None) -> TurnReply:
    """A name given with the answer revises the waiting run (a new plan version under the name,
    with the template), in the reply's commit: it never cancels the run and starts another, so
    the runs page shows no cancelled run the user never cancelled, and the card reads the name
    as stated."""
    requirements = with_items({**requirements, "group_name": name, "name_stated": True}, template)
    who = turn.membership.user.get_full_name() or turn.membership.user.username

    def revised() -> int:
        run_revise(membership=turn.membership, run_id=run.id, replace=["interpret"],
                   params_update={"group_name": name, "template_code": template.code, "requirements": requirements},
                   reason=words(gettext_noop("named “%(name)s” with the template “%(template)s” at %(who)s's word"),
                                name=name, template=template_name_words(template), who=who))
        if pending is not None:
            turn.pending(NAME).set({**pending, "run_id": run.id})
        else:
            turn.pending(NAME).clear()
        return run.id

    return TurnReply(route="resume_run", run_id=run.id, reply=sentences(lead, template_sentences(requirements, template)),
                     start_run=revised)


def _answer_node(turn: TurnContext, run, template, requirements: dict[str, Any]) -> TurnReply:
    """The run's own question answered with the template; its params keep what is (not) met."""
    turn.pending(NAME).clear()
    requirements = with_items(requirements, template)

    def answered() -> int:
        node_input_answer(membership=turn.membership, run_id=run.id, answer=template.name)
        Run.objects.filter(id=run.id).update(params={**run.params, "requirements": requirements})
        return run.id

    reply = words(gettext_noop("Thanks — continuing with “%(answer)s”."), answer=template_name_words(template))
    return TurnReply(route="resume_run", reply=sentences(reply, template_sentences(requirements, template)),
                     start_run=answered)


def _assume_question(turn: TurnContext, options: list[dict[str, Any]], why: Stored) -> Stored:
    return sentences(why, words(gettext_noop("Which template should it use: %(labels)s? Reply with a name or “the "
                                             "second one”. If you don't say, I'll use “%(first)s”."),
                                labels=_labels(options), first=_option_name(options[0])))


def answer_template_question(turn: TurnContext, run, options: list[dict[str, Any]], asked: int,
                              before: dict[str, Any], assumed: str | None = None) -> TurnReply:
    """An answer to "which template?" (the run asked it once, or the chat a second time)."""
    zh = turn.zh
    read = answer_read(turn.text, options, before)
    if read["stop"] and read["index"] is None:
        return stop_reply(turn, run)
    merged = {**before, **read["changes"]}
    if read["changes"]:
        merged["missing"] = [k for k in ("region", "pay_frequency") if not merged.get(k)]
    name_now = run.params.get("group_name") or ""
    name = read["name"] or name_now
    catalog = template_catalog()
    template = None
    if read["index"] is not None:
        template = template_named(options[read["index"]]["answer"])
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
        template = template_named(assumed or options[0]["answer"])
    if template is None and read["changes"] and read["index"] is not None:
        decision = template_decide(merged, catalog)
        if decision.kind == "clear":
            template = decision.chosen
        elif decision.options:
            options = _options_of(decision.options, zh)
    if template is None and asked >= 2:
        template = template_named(assumed or options[0]["answer"])  # never a third time: the assumption
    named = words(gettext_noop("OK — it'll be called “%(name)s”."), name=name) if name != name_now else ""
    if template is not None:
        if name != name_now:
            lead = sentences(named, words(gettext_noop("I'm going on under that name with the template "
                                                       "“%(template)s”."), template=template_name_words(template)))
            return _revise(turn, run, name=name, requirements=merged, template=template, lead=lead)
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
        template = template_named(assume)
        lead = sentences(named, words(gettext_noop("I'm going on under that name, with “%(template)s” for now."),
                                      template=template_name_words(template)))
        question = _assume_question(turn, options, lead)
        state.update(kind="assumed", question=question)
        reply = _revise(turn, run, name=name, requirements=merged, template=template, lead="", pending=state)
        reply.reply, reply.options = question, options
        return reply
    state["run_id"] = run.id
    turn.pending(NAME).set(state)
    # Nothing of it was read (no pick, no name, no change): the chip says it was not understood.
    return TurnReply(route="resume_run", reply=question, options=options, run_id=run.id,
                     understood="" if read["name"] or read["changes"] else "unknown")


def answer_assumed(turn: TurnContext, state: dict[str, Any]) -> TurnReply:
    """The run went on with the assumption; a pick in this message switches the template."""
    run = Run.objects.filter(id=state.get("run_id"), tenant_id=turn.membership.tenant_id).first()
    options = state.get("options") or []
    before = dict(state.get("requirements") or {})
    read = answer_read(turn.text, options, before)
    if run is None:
        turn.pending(NAME).clear()
        return TurnReply(route="resume_run", reply=words(gettext_noop("OK.")))
    if read["stop"] and read["index"] is None:
        return stop_reply(turn, run)
    template = template_named(options[read["index"]]["answer"]) if read["index"] is not None else None
    assumed = template_named(state.get("assume") or "")
    if template is None or (assumed is not None and template.code == assumed.code):
        turn.pending(NAME).clear()
        reply = words(gettext_noop("OK — going on with “%(template)s”."),
                      template=template_name_words(assumed) if assumed else "")
        if assumed is not None:
            reply = sentences(reply, template_sentences(before, assumed))
        return TurnReply(route="resume_run", reply=reply, run_id=run.id)
    requirements = with_items(before, template)
    lead = words(gettext_noop("OK — switching to the template “%(template)s”."), template=template_name_words(template))
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
                     reply=sentences(lead, template_sentences(before, template)))
