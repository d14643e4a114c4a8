"""The expense pages' own template filters (the generic apps never load them)."""
from django import template

from expenses.models import ClaimStatus

register = template.Library()


@register.filter
def claim_status(code: str) -> str:
    """An expense claim's status code ("submitted") as its label in the reader's language; other text as is."""
    return str(ClaimStatus(code).label) if code in ClaimStatus.values else code
