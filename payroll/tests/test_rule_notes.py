"""The city rules' notes are written for an HR reader, in both languages: no ticket number, no file path."""
import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from payroll.records import rules

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]
INTERNAL = re.compile(r"issue \d+|seed 00\d|\.json|\.py\b|payroll/", re.IGNORECASE)


def test_every_note_of_every_city_reads_in_english_and_chinese_with_nothing_internal():
    for city in rules.rules_all().values():
        for period in city.periods:
            notes = [*period.notes, *(r.note for r in period.contributions if r.note)]
            assert notes, city.key
            for note in notes:
                assert isinstance(note, dict) and note["en"] and note["zh"], (city.key, note)
                assert not INTERNAL.search(note["en"] + note["zh"]), (city.key, note)


@pytest.mark.parametrize("language, words", [("en", "Social insurance base 7,460–37,302"),
                                             ("zh-hans", "社保缴费基数 7,460–37,302")])
def test_the_rules_page_shows_the_notes_in_the_readers_language_and_no_file_path(language, words):
    client = Client()
    client.force_login(User.objects.get(username="alice"))
    html = client.get("/payroll/rules/?city=shanghai", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    assert words in html
    assert not INTERNAL.search(re.sub(r"<[^>]+>", " ", html)), INTERNAL.search(re.sub(r"<[^>]+>", " ", html))
