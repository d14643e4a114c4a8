"""Mask secrets and personal data in frame payloads before they are written.

Payloads are for developers, but developers debug runs, they do not need a
customer's API keys, ID numbers or bank accounts to do it. Masking happens
once, at write time, so nothing unmasked is ever stored.

Rules come from `settings.KEEL_MASK_RULES` (falling back to DEFAULT_RULES):
- "keys": regexes matched (case-insensitively, in full) against dict keys; the
  whole value under such a key is replaced;
- "patterns": [{"name", "regex", "replace"}] applied to every string value.

Identifiers stay intact: a value under a key named `id` or `*_id`, or a
string of 16–19 digits and nothing else (the shape of our 64-bit ids), is
never rewritten by a value pattern, because a random 64-bit business id can look
like a phone or card number, and an altered id is exactly the corruption the
provenance protocol exists to prevent.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from django.conf import settings

MASK = "•••"

DEFAULT_RULES: dict[str, Any] = {
    "keys": [
        r"password", r"passwd", r"secret", r".*_secret", r"api[_-]?key", r"authorization", r"token",
        r"access[_-]?token", r"refresh[_-]?token", r"cookie", r"id_number", r"national_id", r"passport(_no)?",
        r"bank_(account|card)(_no)?", r"iban", r"ssn",
    ],
    "patterns": [
        {"name": "email", "regex": r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}", "replace": "[email]"},
        {"name": "bearer", "regex": r"(?i)\b(bearer|token)\s+[A-Za-z0-9._~+/=-]{12,}", "replace": r"\1 [secret]"},
        {"name": "api_key", "regex": r"\bsk-[A-Za-z0-9_-]{12,}", "replace": "[secret]"},
        {"name": "cn_id_number",
         "regex": r"(?<![0-9])[1-9][0-9]{5}(19|20)[0-9]{2}(0[1-9]|1[0-2])(0[1-9]|[12][0-9]|3[01])[0-9]{3}[0-9Xx](?![0-9])",
         "replace": "[id number]"},
        {"name": "cn_mobile", "regex": r"(?<![0-9])(\+?86[ -]?)?1[3-9][0-9]{9}(?![0-9])", "replace": "[phone]"},
        {"name": "card_number", "regex": r"(?<![0-9])[0-9]{4}([ -][0-9]{4}){3}(?![0-9])", "replace": "[card]"},
    ],
}

_ID_KEY = re.compile(r"(?i)^(id|.*_id|.*_ids|.*_ref)$")


@lru_cache(maxsize=8)
def _compiled(rules_key: int) -> tuple[re.Pattern[str], list[tuple[re.Pattern[str], str]]]:
    rules = _rules()
    keys = re.compile("(?i)^(?:" + "|".join(f"(?:{k})" for k in rules.get("keys", [])) + ")$") \
        if rules.get("keys") else re.compile(r"(?!x)x")
    patterns = [(re.compile(p["regex"]), p.get("replace", MASK)) for p in rules.get("patterns", [])]
    return keys, patterns


def _rules() -> dict[str, Any]:
    return getattr(settings, "KEEL_MASK_RULES", DEFAULT_RULES)


def mask_text(text: str) -> str:
    """Apply the value patterns to one string."""
    _, patterns = _compiled(id(_rules()))
    for pattern, replace in patterns:
        text = pattern.sub(replace, text)
    return text


def payload_mask(value: Any, *, key: str = "") -> Any:
    """A copy of `value` (JSON-like) with secrets and personal data masked."""
    keys, _ = _compiled(id(_rules()))
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            k_str = str(k)
            if keys.match(k_str) and v not in (None, "", [], {}):
                out[k] = MASK
            else:
                out[k] = payload_mask(v, key=k_str)
        return out
    if isinstance(value, (list, tuple)):
        return [payload_mask(v, key=key) for v in value]
    if isinstance(value, str):
        if value.isdigit() and (_ID_KEY.match(key) or 16 <= len(value) <= 19):
            return value
        return mask_text(value)
    return value
