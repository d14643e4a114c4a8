"""What a run tells its conversation, in the words of its domain (CONVENTIONS 11, 12).

The engine and the approval gate write timeline events (a run waits for an approver, is
rejected, replanned, completes, rolls back, fails, stops); the conversation front turns
each into a chat message. What that message says belongs to the domain whose run it is:
an expense claim is not "a payroll group", a candidate match is not "an import". So a
domain registers, from its AppConfig.ready(), a teller for its blueprints
(`news_register`); the front asks `news_tell` and gets words (config.words: a key and
its parameters, rendered in the reader's language when read), an optional link and
options. A blueprint that registers nothing gets the generic words below, which name
only the run.

This module is below the approvals app, so it cannot look up who may approve: the front
(which may) gathers that into the `RunNews` it passes: approvers, the routing reason,
the measures, who decided and the comment.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext_noop

from config.words import Stored, localised, words

from .blueprints import BLUEPRINTS


@dataclass(frozen=True)
class RunNews:
    """One event of a run a conversation is told about, with what the front knows of it.

    `kind` is the event's type, with a run's status change as `run.<to>`:
    approval.requested, approval.rejected, plan.replanned, run.completed,
    run.rolled_back, run.failed, run.blocked, run.stopped."""

    run: Any  # workflows.models.Run
    kind: str
    data: dict[str, Any] = field(default_factory=dict)
    approval: Any = None  # the approval the event is about (approvals.models.ApprovalRequest), if any
    approvers: list[str] = field(default_factory=list)  # who may decide it, by name
    routing_reason: Stored = ""  # why the matrix routes it to them (as stored)
    measures: dict[str, Any] = field(default_factory=dict)  # the size the matrix compared
    decided_by: str = ""  # who decided it (a rejection)
    comment: str = ""  # the decider's own words
    reason: Stored = ""  # why the run changed status or plan (as the engine stored it)


@dataclass(frozen=True)
class News:
    """What to post: words, a link ({href, label} with the label as words or a name) and options."""

    words: Stored
    link: dict[str, Any] = field(default_factory=dict)
    options: list[dict[str, Any]] = field(default_factory=list)


Teller = Callable[[RunNews], News | None]
_tellers: list[tuple[Callable[[str], bool], Teller]] = []


def news_register(blueprint: str | Callable[[str], bool], teller: Teller) -> None:
    """Tell the runs of `blueprint` (a name, or a predicate on the name) with `teller`.
    The teller returns News, or None for "nothing of my own": the generic words then."""
    matches = (lambda name: name == blueprint) if isinstance(blueprint, str) else blueprint
    _tellers.append((matches, teller))


def news_tell(item: RunNews) -> News | None:
    """The news an event calls for: the domain's words if it has any, else the generic ones."""
    for matches, teller in _tellers:
        if matches(item.run.blueprint):
            told = teller(item)
            if told is not None:
                return told
            break
    return news_generic(item)


# --- The generic words: a blueprint that registered nothing -----------------------------------

def run_name(run: Any) -> Stored:
    """The run as a reader names it: its blueprint's title in their language."""
    spec = BLUEPRINTS.get(run.blueprint) or {}
    title = spec.get("title") or run.blueprint.replace("_", " ")
    return localised(title, spec.get("title_zh"))


def either(names: list[str]) -> Stored:
    """"Bob", "Bob or Carol", "Bob, Carol or Dora" — in the reader's language."""
    if not names:
        return words(gettext_noop("an approver"))
    if len(names) == 1:
        return names[0]
    return words(gettext_noop("%(some)s or %(last)s"), some=names[:-1], last=names[-1])


def then(said: Stored, next_: Stored) -> dict[str, Any]:
    """Two sentences as one message (a language decides how they join)."""
    return words(gettext_noop("%(said)s %(next)s"), said=said, next=next_)


def news_generic(item: RunNews) -> News | None:
    name = run_name(item.run)
    if item.kind == "approval.requested":
        return News(words(gettext_noop("The run “%(name)s” is waiting for %(who)s to approve it. I'll carry on "
                                       "once it is approved."), name=name, who=either(item.approvers)))
    if item.kind == "approval.rejected":
        what = words(gettext_noop("the run “%(name)s”"), name=name)
        return News(then(rejected(item, what), rejected_next(item)))
    if item.kind == "plan.replanned":
        return News(words(gettext_noop("I changed the plan for “%(name)s” (version %(version)s): %(reason)s."),
                          name=name, version=item.data.get("plan_version"), reason=item.reason))
    if item.kind == "run.completed":
        return News(words(gettext_noop("Done: %(what)s."),
                          what=words(gettext_noop("the run “%(name)s” has finished"), name=name)))
    if item.kind == "run.rolled_back":
        return News(words(gettext_noop("The run “%(name)s” failed, so I undid what it had done. Why: %(reason)s."),
                          name=name, reason=item.reason))
    if item.kind == "run.failed":
        return News(words(gettext_noop("The run “%(name)s” failed: %(reason)s. You can retry it from the run panel."),
                          name=name, reason=item.reason))
    if item.kind in ("run.blocked", "run.stopped"):
        return News(words(gettext_noop("The run “%(name)s” stopped: %(reason)s."), name=name, reason=item.reason))
    return None


def rejected(item: RunNews, what: Stored) -> dict[str, Any]:
    """"Bob rejected <what>: “comment”." — a domain passes its own <what>."""
    if item.comment:
        return words(gettext_noop("%(by)s rejected %(what)s: “%(comment)s”."), by=item.decided_by, what=what,
                     comment=item.comment)
    return words(gettext_noop("%(by)s rejected %(what)s."), by=item.decided_by, what=what)


def rejected_next(item: RunNews) -> dict[str, Any]:
    """What happens after a rejection: another plan, or nothing changed."""
    if item.data.get("replan"):
        return words(gettext_noop("I'll look for another plan."))
    return words(gettext_noop("Nothing was changed; tell me what to adjust and I'll start again."))
