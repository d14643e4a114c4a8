"""A change said to a payroll setup while it waits: "actually, call it BJ Eng 2",
"use the Beijing template", "add a 13th-month bonus", "叫北京研发二组", "改用北京的模板". The change
is read with the request's own reader (payroll.reading.requirements): a stated name becomes the group's
name; anything else the message adds (a city, a frequency, an item) joins the request, so the
run reads its requirements again from the request as changed. The run then decides again from
its first step: nothing is written before the import's approval, so nothing is undone, and only
what the change leaves open is asked again."""
from __future__ import annotations

import re
from typing import Any

from django.utils.translation import gettext_noop

from config.api import DomainError
from config.names import name_normalised
from config.words import words
from workflows.conversation import Change, TurnContext

from payroll.reading.requirements import requirements_extract

BLUEPRINT = "payroll_group_setup"
# The words that make a message a change to what was asked, not a new request.
CHANGE_EN = re.compile(r"(?i)\b(actually|instead|rather|change|rename|call it|name it|use the|switch|"
                       r"also add|add (?:a|an|the)|make it|let'?s use|scratch that)\b")
CHANGE_ZH = ("改成", "改为", "改叫", "改用", "换成", "换用", "还是用", "还是叫", "就叫", "改名", "再加", "加上", "还要加", "另外加",
             "名字改", "不叫")


def _says_a_change(text: str) -> bool:
    return bool(CHANGE_EN.search(text)) or any(w in text for w in CHANGE_ZH)


def change_read(turn: TurnContext, run: Any) -> Change | None:
    """The change this message says to the payroll setup `run`, or None."""
    if run.blueprint != BLUEPRINT or not _says_a_change(turn.text):
        return None
    said = requirements_extract(turn.text)
    update: dict[str, Any] = {}
    if said.get("name_stated") and said.get("group_name"):
        try:
            name = name_normalised(said["group_name"], field="group name", max_length=120)
        except DomainError:
            name = ""
        if name and name != run.params.get("group_name"):
            update["group_name"] = name
    adds = bool(said.get("region") or said.get("pay_frequency") or said.get("items_named") or said.get("population"))
    if adds:
        # The request as changed: the run reads its requirements again from it.
        update["request"] = f"{run.params.get('request', '')} {turn.text}".strip()[:4000]
        if said.get("region"):
            update["template_code"] = ""  # a template chosen before was for the request as it was
    if not update:
        return None
    name = update.get("group_name") or run.params.get("group_name", "")
    if "group_name" in update:
        # The name is a stated one now: the card read afterwards must not say none was.
        understood = run.params.get("requirements")
        understood = dict(understood) if isinstance(understood, dict) else requirements_extract(
            update.get("request") or run.params.get("request") or "")
        update["requirements"] = {**understood, "group_name": name, "name_stated": True}
    if "group_name" in update and not adds:
        reason = words(gettext_noop("renamed to “%(name)s” at %(who)s's word"), name=name,
                       who=turn.membership.user.get_full_name() or turn.membership.user.username)
        reply = words(gettext_noop("Done: it will be called “%(name)s”. I withdrew the card waiting for approval "
                                   "and will ask the approver again with the new name."), name=name)
    else:
        reason = words(gettext_noop("changed at %(who)s's word: “%(text)s”"), text=turn.text[:200],
                       who=turn.membership.user.get_full_name() or turn.membership.user.username)
        reply = words(gettext_noop("Done: I'm applying “%(text)s”. I withdrew the card waiting for approval and "
                                   "will match the template again before asking the approver."), text=turn.text[:80])
    follow_up = update.get("request") or run.params.get("request", "")
    before = run.params.get("group_name", "")
    if "group_name" in update and before and before in follow_up:
        follow_up = follow_up.replace(before, name)  # the request as it would be said now
    elif "group_name" in update:
        follow_up = f"{follow_up}，叫{name}" if turn.zh else f"{follow_up}. Call it {name}."
    return Change(params_update=update, replace=["interpret"], reason=reason, reply=reply, follow_up=follow_up)
