"""Numbers typed into forms, and ids sent in requests: finite, bounded, ASCII, or a clear refusal.

float("inf") and float("1e300") are numbers to Python; an hour count of either
overflows round() or the database column (OverflowError, DataError: a 500).
Parse the text with a pattern that only admits plain decimal notation, then
bound it, and do it before anything else looks at the request (a role check
must not be the thing that happens to stop a bad number)."""
from __future__ import annotations

import re
from decimal import Decimal

from django.utils.translation import gettext as _

from config.api import DomainError, InvalidId
from config.ids import MAX_ID

# Plain decimal notation: no exponent, no inf/nan, no Unicode digits ("²", "٣").
_NUMBER_TEXT = re.compile(r"[+-]?[0-9]{1,20}(?:\.([0-9]{1,20}))?", re.ASCII)


class InvalidNumber(DomainError):
    code = "invalid_number"


def number_parse(value: object, *, what: str, minimum: int | Decimal, maximum: int | Decimal,
                 places: int = 0, required: bool = False) -> Decimal | None:
    """A number from form text: `minimum` … `maximum`, at most `places` decimals.

    Blank is None (or a refusal when `required`). Thousands separators (",") are
    allowed because people type them. Anything else is InvalidNumber (400) naming
    the field and the range."""
    text = "" if value is None else str(value).strip().replace(",", "")
    if not text:
        if required:
            raise InvalidNumber(f"{what} is required.")
        return None
    kind = "a whole number" if places == 0 else f"a number with at most {places} decimals"
    hint = f"{kind} from {minimum} to {maximum}"
    match = _NUMBER_TEXT.fullmatch(text)
    if match is None or len((match.group(1) or "").rstrip("0")) > places:
        raise InvalidNumber(f"{what} must be {hint}.")
    number = Decimal(text)  # exact from text, whatever the context's precision
    if not minimum <= number <= maximum:
        raise InvalidNumber(f"{what} must be {hint}.")
    return number


def int_parse(value: object, *, what: str, minimum: int, maximum: int, required: bool = False) -> int | None:
    """number_parse for whole numbers, as an int."""
    number = number_parse(value, what=what, minimum=minimum, maximum=maximum, required=required)
    return None if number is None else int(number)


# ASCII digits only: str.isdigit() also accepts "²" and "٣", which int() then
# refuses with a ValueError (or, for "٣", silently reads as 3).
_ID_TEXT = re.compile(r"[0-9]{1,19}", re.ASCII)


def id_parse(value: object, *, what: str = "The id") -> int:
    """A business id from a request (a string of ASCII digits, or a JSON int):
    1 … 2**63-1, else InvalidId (400) with a sentence that says what an id is."""
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


def query_flag(params, name: str, *, default: bool) -> bool:
    """A boolean query parameter as OpenAPI writes one: absent is `default`, "true" or "false"
    is that; anything else ("", "yes", "TRUE", "1") is a 400 naming the parameter, so what
    the schema documents is exactly what is read."""
    if name not in params:
        return default
    value = params.get(name)
    if value not in ("true", "false"):
        raise DomainError(_("%(name)s is true or false.") % {"name": name}, code="invalid", extra={"field": name})
    return value == "true"
