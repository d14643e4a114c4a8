"""Opaque 64-bit business identifiers.

They are random (not sequential) so a neighbour's id cannot be guessed, and the
API serialises them as strings: a JavaScript number rounds above 2**53, which would
silently change an ID's last digits: another record named, and no error to say so.
"""
import re
import secrets

from django.db import models
from django.utils.translation import gettext as _


def new_id() -> int:
    # 63 bits keeps the value inside a signed BIGINT; never zero.
    return secrets.randbits(63) or 1


class BusinessIdField(models.BigIntegerField):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("primary_key", True)
        kwargs.setdefault("default", new_id)
        kwargs.setdefault("editable", False)
        super().__init__(*args, **kwargs)


MAX_ID = 2**63 - 1
# ASCII digits only: str.isdigit() also accepts "²" and "٣", which int() then
# refuses with a ValueError (or, for "٣", silently reads as 3).
_ID_TEXT = re.compile(r"[0-9]{1,19}", re.ASCII)


def id_parse(value: object, *, what: str = "The id") -> int:
    """A business id from a request (a string of ASCII digits, or a JSON int):
    1 … 2**63-1, else InvalidId (400) with a sentence that says what an id is."""
    from config.api import (
        InvalidId,  # not at the top: models import this module, config.api imports DRF
    )

    if isinstance(value, bool):  # True is an int to Python, never an id
        raise InvalidId(_("%(what)s must be an id (a string of digits), not %(lower)s.")
                        % {"what": what, "lower": str(value).lower()})
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and _ID_TEXT.fullmatch(value.strip(" \t")):
        number = int(value.strip(" \t"))
    else:
        shown = value[:40] if isinstance(value, str) else type(value).__name__
        raise InvalidId(_('%(what)s must be an id, a string of digits such as "4821093377"; “%(shown)s” is not an id.')
                        % {"what": what, "shown": shown})
    if not 0 < number <= MAX_ID:
        raise InvalidId(_("%(what)s must be an id between 1 and %(MAX_ID)s; %(number)s is not an id.")
                        % {"what": what, "MAX_ID": MAX_ID, "number": number})
    return number
