"""Names as people read them: what a person types as a name is stored in one form
(NFKC, whitespace runs as one space), refused when it holds a character nobody can
see (format and bidirectional controls, other controls, default-ignorable code points,
blank fillers), and compared by its *skeleton*: Unicode's TR39 confusable folding, so
that "P1 Group 01", "p1 group 01" and a Cyrillic "Р1 Grоup 01" are one name.

The skeleton is TR39's (UTS #39 §4: NFD, each character replaced by its prototype,
NFD again) over the pinned data file beside this module, `unicode/confusables.txt`
(UTS #39 version 13.0.0, © Unicode, Inc., under the Unicode licence in
`unicode/LICENSE`), with upper and lower case read as one (`name_skeleton` says how). Pinned
on purpose: a skeleton may be stored as a key, and a stored key must not change when
a library is upgraded. Replacing the file changes skeletons: recompute stored keys
in a data migration in the same change."""
from __future__ import annotations

import unicodedata
from functools import lru_cache
from pathlib import Path

from django.utils.translation import gettext_noop

from config.api import DomainError
from config.words import Stored, words, words_render

CONFUSABLES = Path(__file__).with_name("unicode") / "confusables.txt"

# Categories nobody reads as part of a name: controls (C0, C1), format characters (ZWSP,
# ZWJ/ZWNJ, BOM, word joiner, soft hyphen, the bidi embeddings, overrides, isolates and
# marks, U+061C), surrogates, private use (it shows whatever a font puts there),
# unassigned code points, and the line and paragraph separators.
INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})

# Default_Ignorable_Code_Point (DerivedCoreProperties.txt, Unicode 15.0) outside those
# categories: the combining grapheme joiner, the Hangul fillers, the Khmer inherent
# vowels, the Mongolian free variation selectors and the variation selectors; and the
# blank Braille pattern, which renders as nothing and is the other favourite blank name.
INVISIBLE_RANGES = (
    (0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F), (0x2800, 0x2800),
    (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xE0000, 0xE0FFF),
)


def char_invisible(ch: str) -> bool:
    """Whether a person reading the name cannot see this character (or sees what it does
    to its neighbours, as with a right-to-left override, instead of the character)."""
    if unicodedata.category(ch) in INVISIBLE_CATEGORIES:
        return True
    code = ord(ch)
    return any(low <= code <= high for low, high in INVISIBLE_RANGES)


def char_words(ch: str) -> str:
    """A character as an error names it: "U+200B ZERO WIDTH SPACE"."""
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X}" + (f" {name}" if name else "")


def name_normalised(value: str | None, *, field: Stored, max_length: int | None = None) -> str:
    """The name in the form it is stored and shown: NFKC (fullwidth "Ｐ１" is "P1"), whitespace
    runs as one space, trimmed. Refused (400, naming `field` in the reader's language) when
    empty, when made only of invisible characters, when it holds one at all (the error
    says which and where), or when longer than `max_length`. The refusal is words (its
    `words`; `field` may be words too), so a run that quotes it reads in its reader's language."""
    text = unicodedata.normalize("NFKC", value or "")
    named = words_render(field)
    if not "".join(ch for ch in text if not char_invisible(ch)).strip():
        if text.strip():
            raise DomainError(words(gettext_noop("The %(what)s is made only of invisible characters; give a name "
                                                 "people can read."), what=field),
                              code="invalid_name", extra={"field": named})
        raise DomainError(words(gettext_noop("Give the %(what)s; it may not be empty."), what=field), code="invalid",
                          extra={"field": named})
    for position, ch in enumerate(text, start=1):
        if char_invisible(ch):
            raise DomainError(
                words(gettext_noop("The %(what)s contains an invisible or text-direction character (%(character)s) "
                                   "at position %(position)s; type it again without that character."),
                      what=field, character=char_words(ch), position=position),
                code="invalid_name", extra={"field": named, "character": f"U+{ord(ch):04X}", "position": position})
    text = " ".join(text.split())
    if max_length is not None and len(text) > max_length:
        raise DomainError(words(gettext_noop("The %(what)s may be at most %(MAX_NAME_LENGTH)s characters."),
                                what=field, MAX_NAME_LENGTH=max_length), code="invalid", extra={"field": named})
    return text


def name_visible(value: str) -> str:
    """A stored name as a reader should see it, whatever it holds: each invisible character
    shown as ⟨U+200B⟩, so a name written before names were checked cannot hide one on a card
    (a right-to-left override reversing what follows it, a zero-width space making a twin)."""
    return "".join(f"⟨U+{ord(ch):04X}⟩" if char_invisible(ch) else ch for ch in value or "")


@lru_cache(maxsize=1)
def _prototypes() -> dict[str, str]:
    """confusables.txt: each source character → its prototype (one or more characters)."""
    table: dict[str, str] = {}
    for line in CONFUSABLES.read_text(encoding="utf-8-sig").splitlines():
        data = line.split("#", 1)[0].strip()
        if not data:
            continue
        source, target = (field.strip() for field in data.split(";")[:2])
        table[chr(int(source, 16))] = "".join(chr(int(code, 16)) for code in target.split())
    return table


def _skeleton(text: str) -> str:
    """TR39's skeleton: NFD, prototypes, NFD."""
    prototypes = _prototypes()
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", "".join(prototypes.get(ch, ch) for ch in decomposed))


def _folded(text: str) -> str:
    """The skeleton of a case-folded text."""
    return _skeleton(text.casefold())


@lru_cache(maxsize=4096)
def name_skeleton(value: str) -> str:
    """What a name reads as: equal skeletons are names a person cannot tell apart. NFKC,
    invisible characters dropped, whitespace runs as one space; then TR39's skeleton of the
    text in capitals, and of that case folded, twice.

    Capitals first, because the prototypes are of the letters as written: a capital I is
    "l" ("SaIes" reads "Sales"), while its lower case "i" is a letter of its own, so folding
    case first lost the lookalike. Capitals, not the text as written, because upper and
    lower case must still read as one ("IT Team", "it team"): a name is one with another
    if it reads like it in any case, so "i" reads as "l" too. Folded twice, because a
    prototype may be a capital ("0" → "O") whose lower case has a prototype of its own."""
    text = unicodedata.normalize("NFKC", value or "")
    text = " ".join("".join(ch for ch in text if not char_invisible(ch)).split())
    return _folded(_folded(_skeleton(text.upper())))
