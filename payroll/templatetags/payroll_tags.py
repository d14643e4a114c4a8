"""Payroll's own template filters (its pages load them; the generic apps never do)."""
from django import template

from payroll.previews import snapshot_label as _snapshot_label

register = template.Library()


@register.filter
def snapshot_label(label: str) -> str:
    """A snapshot's label; those Keel writes itself ("before run …") in the reader's language."""
    return _snapshot_label(label)
