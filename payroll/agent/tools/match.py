"""match_salary_template: the catalog template for the requirements (documented weights, what
an approved import taught as a preference among equals), or the question which one."""
from __future__ import annotations

import threading
from typing import Any

from django.utils.translation import gettext_noop

from config.words import Stored, localised, words, words_english
from memory.services import memory_link, working_memory_record
from timeline.services import frame_record
from workflows.pipeline import coordinate_resolve, node_activity_id
from workflows.tools import Acceptance, NeedsInput, Tool, ToolContext, ToolError, tool_register

from payroll.agent import previews
from payroll.models import PayrollTemplate
from payroll.reading.matching import decision_question, option_choose, template_decide, template_fit

from .common import ID
from .interpret import _interpret_summary


def _requirements(ctx: ToolContext) -> dict[str, Any]:

    coordinate = coordinate_resolve(run_id=ctx.run_id, tenant_id=ctx.tenant_id, key="requirements")
    return dict(coordinate.value) if coordinate else {}


def template_score(template, requirements: dict[str, Any]) -> tuple[int, list[str]]:
    """How well a catalog template fits the requirements, with the reasons (payroll.reading.matching's
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
