"""Numbers typed into forms: finite, bounded, ASCII, or a clear refusal.

float("inf") and float("1e300") are numbers to Python; an hour count of either
overflows round() or the database column (OverflowError, DataError: a 500).
Parse the text with a pattern that only admits plain decimal notation, then
bound it, and do it before anything else looks at the request (a role check
must not be the thing that happens to stop a bad number)."""
from __future__ import annotations

import re
from decimal import Decimal

from config.api import DomainError

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
