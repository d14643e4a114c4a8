"""The persist-matches approval card as typed rows (workflows.cards): the TAN, and the
candidates as a ranked table — score and why, in the reader's language (the explanation's
words, hr.matching). Registered in HrConfig.ready()."""
from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_noop

from config.words import localised, words
from workflows import cards

from .matching import place
from .models import Candidate, Tan


def _tan_row(approval: Any) -> cards.Row:
    value = str(approval.arguments.get("tan_id", ""))
    tan = Tan.objects.filter(tenant_id=approval.tenant_id, id=int(value)).first() if value.isdigit() else None
    if tan is None:
        return cards.text(words(gettext_noop("unknown TAN")))
    return cards.fields([
        (words(gettext_noop("Title")), cards.text(localised(tan.title, tan.title_zh or tan.title))),
        (words(gettext_noop("Location")), cards.text(place(tan.location))),
        (words(gettext_noop("Skills")), cards.text(list(tan.skills))),
    ])


def _explanation(match: dict[str, Any]) -> Any:
    """The words; a result stored before explanations were stored as words has its two
    renderings, shown as a name in two languages."""
    if match.get("explanation_words"):
        return match["explanation_words"]
    return localised(match.get("explanation", ""), match.get("explanation_zh") or match.get("explanation", ""))


def _matches_row(approval: Any) -> cards.Row:
    matches = (approval.arguments.get("match_result") or {}).get("matches") or []
    ids = [int(m["candidate_id"]) for m in matches if str(m.get("candidate_id", "")).isdigit()]
    chinese = dict(Candidate.objects.filter(tenant_id=approval.tenant_id, id__in=ids).values_list("id", "name_zh"))
    rows = [[cards.person(localised(m["name"], chinese.get(int(m["candidate_id"])) or m["name"])
                          if str(m.get("candidate_id", "")).isdigit() else m["name"]),
             cards.text(m.get("score", "")), cards.text(_explanation(m))] for m in matches]
    return cards.table([words(gettext_noop("Candidate")), words(gettext_noop("Score")),
                        words(gettext_noop("Why"))], rows, ranked=True,
                       keys=[str(m.get("candidate_id", "")) for m in matches], row_mark="candidate-match")


def persist_card(approval: Any) -> list[cards.Row]:
    return [cards.arguments_section(approval, {
        "tan_id": (words(gettext_noop("TAN")), _tan_row(approval)),
        "match_result": (words(gettext_noop("Matches")), _matches_row(approval)),
    })]


def cards_register() -> None:
    cards.card_register("persist_matches", persist_card)
