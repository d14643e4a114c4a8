"""Words a person reads, stored as meaning and rendered for the reader (CONVENTIONS 12).

A writer never stores an English sentence. It stores *words*: a message key — the English
source text with `%(name)s` placeholders, marked for the catalog with `gettext_noop` where
it is written — and its parameters. A reader renders them with `gettext` in the language
active for *them*, when they read (GitLab's system notes, Sentry's message templates):
an approver who reads Chinese sees a Chinese card for an English request.

Stored form (JSON): {"key": "Done: %(what)s.", "params": {...}}. A parameter is

- a string or number: shown as it is (a person's own words, a name, an id, an amount);
- words of its own ({"key", "params"}): rendered too, in the same language;
- a name in several languages ({"en": "Beijing", "zh-hans": "北京"}: `localised(...)`):
  the reader's language, else English;
- a list of those: joined as the language joins a list ("a, b" / "a、b").

A count said with a noun ("1 employee", "3 employees") is stored with both English forms:
{"key": singular, "plural": plural, "count": "n", "params": {...}} — written as
`words(ngettext_noop("%(n)s employee", "%(n)s employees"), n=3)` — and read with `ngettext`, so
each language picks its own plural form from the catalog (Chinese has one).

Rows written before words existed hold plain prose: `words_render` shows a string as it is.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.utils import translation
from django.utils.translation import gettext, gettext_noop, ngettext

Stored = dict[str, Any] | str | None


class Plural(tuple):
    """Both English forms of a counted message and the parameter that counts (`ngettext_noop`)."""

    count: str


def ngettext_noop(singular: str, plural: str, count: str = "n") -> Plural:
    """Marks a counted message for the catalog (makemessages knows this name, as it knows
    ngettext: `keel makemessages`) and says which parameter is the count."""
    marked = Plural((singular, plural))
    marked.count = count
    return marked


def words(key: str | Plural, **params: Any) -> dict[str, Any]:
    """Words to store: `key` is an English msgid (mark it with gettext_noop where written), or
    a counted one (`ngettext_noop`): its form is chosen when read, in the reader's language."""
    stored = {name: _storable(value) for name, value in params.items()}
    if isinstance(key, Plural):
        if key.count not in params:
            raise ValueError(f"counted words need their count {key.count!r}")
        return {"key": str(key[0]), "plural": str(key[1]), "count": key.count, "params": stored}
    return {"key": str(key), "params": stored}


def localised(en: str, zh: str | None = None) -> dict[str, str]:
    """A proper name in the reader's language: {"en": "Beijing", "zh-hans": "北京"}."""
    return {"en": en, "zh-hans": zh or en}


def sentences(*parts: Any) -> Stored:
    """Sentences said one after another, as words: joined as the reader's language joins them
    ("A. B." / "甲。乙。"). Empty parts are left out; a single part is itself."""
    kept = [p for p in parts if p]
    if not kept:
        return ""
    said = kept[-1]
    for part in reversed(kept[:-1]):
        said = words(gettext_noop("%(first)s %(then)s"), first=part, then=said)
    return said


def english_aside(en: str) -> dict[str, str]:
    """A detail said in English only (a name made of English codes, a reason code): the English
    reader reads it, a reader of another language reads nothing in its place."""
    return {"en": en, "zh-hans": ""}


def is_words(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("key"), str) and isinstance(value.get("params", {}), dict)


def words_render(value: Stored, lang: str | None = None) -> str:
    """What `value` says in `lang` (default: the active language). A plain string is shown
    as it is (a person's own words, or prose stored before words existed)."""
    if lang is not None:
        with translation.override(lang):
            return words_render(value)
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if is_words(value):
        template = _template(value)
        params = {name: _param_render(p) for name, p in (value.get("params") or {}).items()}
        if not params:
            return template
        try:
            return template % params
        except (KeyError, ValueError, TypeError):
            # A catalog entry that lost a placeholder must not hide the meaning: the source text.
            try:
                return value["key"] % params
            except (KeyError, ValueError, TypeError):
                return value["key"]
    return _param_render(value)


def _template(value: dict[str, Any]) -> str:
    """The stored key in the reader's language: a counted one in the form its count needs."""
    if isinstance(value.get("plural"), str):
        try:
            count = int(str((value.get("params") or {}).get(value.get("count") or "n")))
        except ValueError:
            count = 2
        return ngettext(value["key"], value["plural"], count)
    return gettext(value["key"])


def words_english(value: Stored) -> str:
    """The English rendering: kept beside stored words where a column wants plain text
    (search, the admin, logs)."""
    return words_render(value, "en")


def _storable(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_storable(v) for v in value]
    if isinstance(value, dict):
        return {k: _storable(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)  # a lazy translation, a date: its text now (use words/localised to translate later)


def _param_render(value: Any) -> str:
    if value is None:
        return ""
    if is_words(value):
        return words_render(value)
    if isinstance(value, dict):  # a name in several languages
        lang = (translation.get_language() or "en").lower()
        for candidate in (lang, lang.split("-")[0], "zh-hans" if lang.startswith("zh") else "en", "en"):
            if candidate in value:
                return str(value[candidate])
        return str(next(iter(value.values()), ""))
    if isinstance(value, list):
        separator = "、" if (translation.get_language() or "").lower().startswith("zh") else ", "
        return separator.join(_param_render(v) for v in value)
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def value_text(value: Any, *, limit: int = 400) -> str:
    """Any stored value as a person reads it, in the reader's language — never a Python
    dict: words and names in several languages rendered, a record as "label: value · …"
    (its keys as words: "group_name" → "Group name"), a list joined as the language joins
    one, a list of records one per "; ". Long text is cut at `limit` characters with "…"."""
    text = _value_text(value)
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _is_name(value: dict) -> bool:
    return bool(value) and set(value) <= {"en", "zh-hans", "zh", "zh_hans"}


def _key_label(key: str) -> str:
    return str(key).replace("_", " ").strip().capitalize()


def _value_text(value: Any) -> str:
    if value is None:
        return "—"
    if is_words(value):
        return words_render(value)
    if isinstance(value, dict):
        if _is_name(value):
            return _param_render(value if "zh-hans" in value else {**value, "zh-hans": value.get("zh") or value.get(
                "zh_hans") or value.get("en", "")})
        return " · ".join(f"{_key_label(k)}: {_value_text(v)}" for k, v in value.items())
    if isinstance(value, list):
        if value and all(isinstance(v, dict) and not _is_name(v) and not is_words(v) for v in value):
            return "; ".join(_value_text(v) for v in value)
        return _param_render([_value_text(v) for v in value])
    return _param_render(value)
