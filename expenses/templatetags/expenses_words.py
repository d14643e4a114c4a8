"""The claim history's reasons as the reader reads them: a policy check's finding is
stored as words (expenses.records.services.check_reason) and rendered in the page's language."""
from django import template

from expenses.records.services import reason_shown
from expenses.templatetags.expenses_tags import claim_status

register = template.Library()


@register.filter
def claim_reason(reason: str) -> str:
    """A transition's reason: stored words in the reader's language, a status code as its label,
    prose written before words as it is."""
    return claim_status(reason_shown(reason or ""))
