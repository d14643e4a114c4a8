""""Which template is it using?": answered from the run, not the catalog. A question about the
template asked in a conversation whose setup has matched one is about that template — the one
the run actually took (its `template_id`, at its newest plan version), said with what is true of
it (another city's template said plainly), so the answer agrees with what Keel offered and the
person accepted."""
from __future__ import annotations

import re

from django.utils.translation import gettext_noop

from config.words import Stored, sentences, words
from workflows.conversation import TurnContext, text_normalize
from workflows.models import Run, StateCoordinate

from payroll.models import PayrollTemplate
from payroll.reading.matching import template_name_words
from payroll.reading.requirements import requirements_extract

from .setup import template_sentences

# "which template is it using?", "what template did you pick?", "what template?", "用的是哪个模板？"
ASKS_USED = re.compile(r"\b(which|what)\s+template\b(?!s)|\btemplate\b.*\b(use|using|used|chose|chosen|picked|took)\b")
ASKS_USED_ZH = re.compile(r"哪个模板|什么模板|哪一个模板|用的.*模板|模板.*(用的|用了|选的)")
SETUPS = ("payroll_group_setup", "payroll_direct_import")


def template_in_use_answer(turn: TurnContext) -> Stored:
    """The template this conversation's newest setup uses, as words; None when the question
    names a place (a question about the catalog) or no setup here has a template yet."""
    lowered = text_normalize(turn.text)
    if not (ASKS_USED.search(lowered) or ASKS_USED_ZH.search(turn.text)):
        return None
    if requirements_extract(turn.text).get("region"):
        return None  # "is there a Shenzhen template?": the catalog answers
    run = (Run.objects.filter(conversation_id=turn.conversation_id, tenant_id=turn.membership.tenant_id,
                              blueprint__in=SETUPS).order_by("-created_at").first())
    if run is None:
        return None
    chosen = (StateCoordinate.objects.filter(run=run, key="template_id").order_by("-plan_version", "-id")
              .values_list("value", flat=True).first())
    template = PayrollTemplate.objects.filter(id=int(chosen)).first() if str(chosen or "").isdigit() else None
    if template is None:
        return None
    said = words(gettext_noop("The setup of “%(name)s” uses the template “%(template)s”."),
                 name=run.params.get("group_name") or "", template=template_name_words(template))
    return sentences(said, template_sentences(run.params.get("requirements") or {}, template))
