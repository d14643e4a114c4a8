"""The expense pages' own template filters (the generic apps never load them)."""
from django import template
from django.utils import translation

from expenses.models import ClaimStatus
from expenses.agent.news import CITY_ZH

register = template.Library()


@register.filter
def claim_status(code: str) -> str:
    """An expense claim's status code ("submitted") as its label in the reader's language; other text as is."""
    return str(ClaimStatus(code).label) if code in ClaimStatus.values else code


@register.filter
def city(name: str) -> str:
    """A claim's city as stored ("Beijing"), in the reader's language when it is one the chat knows."""
    chinese = (translation.get_language() or "").lower().startswith("zh")
    return CITY_ZH.get((name or "").strip().lower(), name) if chinese else name
