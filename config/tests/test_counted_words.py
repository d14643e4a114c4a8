"""A count said with its noun reads in the form the count needs, in the reader's language: "1
employee", "3 employees", "1 晚" — never "1 employees" or "2 night(s)". Counted words are stored
as meaning with both English forms and read with ngettext (config.words)."""
import re
from pathlib import Path

import pytest

from config.words import ngettext_noop, words, words_render

ROOT = Path(__file__).resolve().parents[2]
SAID = words(ngettext_noop("%(n)s employee changes group", "%(n)s employees change group"), n=1)


def test_it_reads_one_in_the_singular_and_more_in_the_plural():
    assert words_render(SAID, "en") == "1 employee changes group"
    assert words_render({**SAID, "params": {"n": 3}}, "en") == "3 employees change group"
    assert words_render({**SAID, "params": {"n": 0}}, "en") == "0 employees change group"


def test_chinese_has_one_form_from_the_catalog():
    assert words_render(SAID, "zh-hans") == "1 名员工更换所在组"
    assert words_render({**SAID, "params": {"n": 3}}, "zh-hans") == "3 名员工更换所在组"


def test_counted_words_without_their_count_are_refused_when_written():
    with pytest.raises(ValueError):
        words(ngettext_noop("%(n)s row", "%(n)s rows"), rows=2)


def test_the_catalog_has_the_counted_words_as_plural_entries():
    po = (ROOT / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po").read_text(encoding="utf-8")
    assert 'msgid "%(n)s employee changes group"\nmsgid_plural "%(n)s employees change group"' in po
    assert 'msgid "%(start)s to %(end)s, %(nights)s night"' in po


# Where a count is said with a noun: no "(s)" and no count pasted before a fixed plural noun.
PASTED = re.compile(r"(?<!%)\(s\)|(?<!\{% plural %\})\{\{ ?\w+ ?\}\} (rows|employees|nights|items)\b")


def test_no_word_a_person_reads_pastes_a_count_before_a_fixed_plural():
    found = []
    for path in [*ROOT.glob("templates/**/*.html"), *ROOT.glob("*/**/*.py")]:
        if ".venv" in path.parts or "tests" in path.parts or "migrations" in path.parts or "locale" in path.parts:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if PASTED.search(line) and ("translate" in line or "gettext" in line or 'f"' in line):
                found.append(f"{path.relative_to(ROOT)}:{n}")
    assert not found, found
