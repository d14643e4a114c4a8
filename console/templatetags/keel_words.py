"""Words the console's own templates show for codes Keel keeps: a chat message's intent
("resolve") is a code the agent records; a reader sees what it means, in their language."""
from django import template
from django.utils.translation import gettext_lazy as _

register = template.Library()

INTENT_LABELS = {
    "chat": _("small talk"),
    "analyze": _("question"),
    "resolve": _("request"),
    "unknown": _("not understood"),
    "news": _("run news"),
    # what a message said to a waiting run was understood as (agents.orchestrator.understood_as)
    "answer": _("answer"),
    "change": _("change"),
    "cancel": _("cancel"),
}


@register.filter
def intent_label(intent: str) -> str:
    """A message's intent ("resolve") as the chip's word ("request" / "请求"); an unknown code reads as itself."""
    return str(INTENT_LABELS.get(intent, intent or ""))
