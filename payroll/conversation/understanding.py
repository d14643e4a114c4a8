"""Understanding a request: its requirements (the model's structured output where the backend
has it, else the rules), once per text and turn, and the route frame that says which branch
the turn took and why."""
from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_noop

from config.words import Stored, is_words, localised, words, words_english, words_render
from llm import backend_structured
from llm.structured import structured_call
from workflows.conversation import TurnContext, structured_frame

from payroll.reading.requirements import (
    MODEL_SCHEMA,
    requirements_extract,
    requirements_from_model,
    requirements_messages,
)


def requirements_understood(call, text: str):
    """The requirements of `text` in requirements_extract's shape, and how they were obtained
    (None: no structured backend, the rules read them as they always do). The turn and the
    evaluation (payroll.conversation.evaluation) both read requests through here."""
    if not backend_structured():
        return requirements_extract(text), None
    outcome = structured_call(call, requirements_messages(text), purpose="requirements", schema=MODEL_SCHEMA,
                              rules=lambda: requirements_extract(text))
    requirements = requirements_from_model(outcome.data, text) if outcome.source == "model" else outcome.data
    return requirements, outcome


def turn_requirements(turn: TurnContext, text: str) -> dict[str, Any]:
    """The request's requirements, once per text and turn: the model's structured output on a
    backend that has it (validated, repaired once, else the rules, recorded), the rules otherwise.
    Every decision after this (dependencies_known, template_decide) reads this one dict."""
    understood = turn.memo.setdefault("payroll.understood", {})
    if text in understood:
        return understood[text]
    requirements, outcome = requirements_understood(turn.model, text)
    if outcome is not None:
        structured_frame(turn, "requirements", outcome)
    understood[text] = requirements
    return requirements


def is_continue(text: str) -> bool:
    return text.strip().strip(".!。！").lower() in CONTINUE_WORDS


CONTINUE_WORDS = {"continue", "go on", "go ahead", "proceed", "carry on", "resume", "ok", "okay", "yes",
                  "继续", "好的", "可以", "继续吧", "好"}


# A route frame is words (config.words): the branch a code shown by its word, the reason a fixed
# sentence, or, built from parts, its English with a generic sentence for a reader of another
# language (`reason_built`); the payload keeps the branch and the English reason.
BRANCH_WORDS = {"resume_run": gettext_noop("resume_run"), "resume_exploration": gettext_noop("resume_exploration"),
                "plan": gettext_noop("plan"), "explore": gettext_noop("explore")}


def reason_built(english: str, generic: str, **params: Any) -> dict[str, str]:
    """Built in English from parts: as it is, and `generic` (a gettext_noop msgid) for the Chinese reader."""
    return localised(english, words_render(words(generic, **params), "zh-hans"))


def route_words(branch: str, why: Stored) -> dict[str, Any]:
    return words(gettext_noop("Route: %(branch)s — %(why)s."),
                 branch=words(BRANCH_WORDS[branch]) if branch in BRANCH_WORDS else branch, why=why)


def route_frame(turn: TurnContext, branch: str, why: Stored) -> None:
    """`why`: a msgid (a fixed sentence) or words already made."""
    why = why if isinstance(why, dict) else words(why)
    english = str(why.get("en", "")) if not is_words(why) else words_english(why)
    turn.frame("route", f"route → {branch}", route_words(branch, why),
               {"signal": turn.signal, "branch": branch, "reason": english})
