"""A fourth domain that lives only in the test suite: leave requests. It joins Keel the
only way a domain may — by registering its blueprint, its tools and their measure, its
approval card, its news and its part in the conversation (CONVENTIONS 11) — and no
generic app is edited for it. `leave_registered()` registers it and takes it back out.

Its words carry both languages with them (`localised`): a domain outside the project's
catalog brings its own Chinese, as a blueprint brings its `title_zh`."""
from __future__ import annotations

import re
from contextlib import contextmanager
from datetime import date
from typing import Any

from config.words import localised, words
from workflows import cards, conversation, news
from workflows.blueprints import BLUEPRINTS, Door, blueprint_register
from workflows.conversation import Claim, ConversationDomain, TurnReply, Vocabulary
from workflows.services import run_start
from workflows.tools import TOOLS, Measure, Preview, Tool, tool_register

NAME = "leave"
BLUEPRINT = "leave_request"
BOOKED: dict[tuple[int, str], dict[str, Any]] = {}  # the system of record: (tenant, key) → booking
BALANCE = 15


def said(en: str, zh: str, **params: Any) -> dict[str, Any]:
    """Words in both languages, with parameters of their own."""
    return words("%(text)s", text=localised(en % params, zh % params))


SPEC = {
    "name": BLUEPRINT, "title": "Leave request", "title_zh": "请假申请",
    "start": {"roles": ["business", "approver", "developer", "admin"], "doors": ["runs", "conversation"]},
    "params": {"days": {"type": "integer", "minimum": 1, "maximum": 30},
               "start_date": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}},
    "required": ["days", "start_date"],
    "nodes": [
        {"key": "balance", "tool": "leave_balance", "goal": "Check the leave balance", "goal_zh": "查询假期余额",
         "depends_on": [], "arguments": {"days": "$params.days"}},
        {"key": "book", "tool": "leave_book", "goal": "Book the leave", "goal_zh": "登记休假",
         "depends_on": ["balance"], "arguments": {"days": "$params.days", "start_date": "$params.start_date"}},
    ],
}


def balance(ctx, arguments):
    return {"balance": BALANCE, "enough": arguments["days"] <= BALANCE}


def book(ctx, arguments):
    booking = BOOKED.setdefault((ctx.tenant_id, ctx.idempotency_key),
                                {"days": arguments["days"], "start_date": arguments["start_date"]})
    return {"booked": True, "days": booking["days"]}


def book_preview(tenant_id, arguments, params) -> Preview:
    return Preview(summary=said("Book %(days)s days of leave from %(start)s.", "从 %(start)s 起休假 %(days)s 天。",
                                days=arguments["days"], start=arguments["start_date"]),
                   measures={"days": arguments["days"]})


def book_card(approval) -> list:
    return [cards.fields([(localised("Days", "天数"), cards.text(str(approval.arguments["days"]))),
                          (localised("From", "开始日期"), cards.text(approval.arguments["start_date"])),
                          (localised("Balance", "余额"), cards.text(str(BALANCE)))], mark="leave-card")]


def leave_news(item: news.RunNews) -> news.News | None:
    days = item.run.params.get("days")
    if item.kind == "approval.requested":
        return news.News(said("Your %(days)s days of leave wait for %(who)s to approve them.",
                              "您的 %(days)s 天休假正在等待%(who)s批准。",
                              days=days, who=" / ".join(item.approvers) or "?"))
    if item.kind == "run.completed":
        return news.News(said("Done: your %(days)s days of leave are booked.", "完成了：您的 %(days)s 天休假已登记。",
                              days=days))
    return None


class LeaveConversation(ConversationDomain):
    name = NAME
    persona = "Keel books the user's leave."
    blueprints = (BLUEPRINT,)
    vocabulary = Vocabulary(subject_en=(r"leave", r"holidays?", r"vacation"), subject_zh=("请假", "年假", "休假"),
                            act_en=(r"take (\d+ days of )?(annual )?leave", r"book (my )?leave"), act_zh=("请假", "休假"))

    def claims(self, turn) -> Claim | None:
        if re.search(r"\b(annual leave|take .*leave|book .*leave|vacation)\b", turn.text, re.I) or \
                any(w in turn.text for w in ("请假", "年假", "休假")):
            return Claim(0.92, "a request to take leave")
        return None

    def answer(self, turn) -> TurnReply:
        days = re.search(r"(\d+)\s*(days?|天)", turn.text)
        start = re.search(r"(\d{4}-\d{2}-\d{2})", turn.text)
        params = {"days": int(days.group(1)) if days else 1,
                  "start_date": start.group(1) if start else date.today().isoformat()}
        reply = said("I've asked for %(days)s days of leave from %(start)s; an approver decides.",
                     "好的，我已提交 %(days)s 天休假（%(start)s 起），等待审批。",
                     days=params["days"], start=params["start_date"])

        def started() -> int:
            return run_start(membership=turn.membership, blueprint=BLUEPRINT, params=params,
                             conversation_id=turn.conversation_id, door=Door.CONVERSATION).id

        return TurnReply(route="leave_request", reply=reply, start_run=started)

    def run_title(self, run):
        return said("The leave request", "请假申请")

    def capability(self, zh: bool) -> str:
        return "请假" if zh else "book leave"


@contextmanager
def leave_registered():
    """The leave domain registered, as its AppConfig.ready() would; taken back out after."""
    blueprint_register(SPEC)
    tool_register(Tool(name="leave_balance", description="How many days of leave are left.",
                       input_schema={"type": "object", "properties": {"days": {"type": "integer"}}},
                       output_schema={"type": "object"}, fn=balance))
    tool_register(Tool(name="leave_book", description="Book the leave.",
                       input_schema={"type": "object", "properties": {"days": {"type": "integer"},
                                                                      "start_date": {"type": "string"}}},
                       output_schema={"type": "object"}, fn=book, side_effects=True, read_only=False,
                       irreversible="a booked leave is cancelled by a leave request of its own",
                       needs_approval=True, preview=book_preview,
                       approval_rule={"roles": ["approver", "admin"], "deadline_seconds": 24 * 3600,
                                      "remind_before_seconds": 3600},
                       measures=[Measure("days", "Days of leave", "days")]))
    cards.card_register("leave_book", book_card)
    news.news_register(BLUEPRINT, leave_news)
    conversation.conversation_register(LeaveConversation())
    try:
        yield
    finally:
        BLUEPRINTS.pop(BLUEPRINT, None)
        TOOLS.pop("leave_balance", None)
        TOOLS.pop("leave_book", None)
        cards.CARDS.pop("leave_book", None)
        news._tellers[:] = [t for t in news._tellers if t[1] is not leave_news]
        conversation._domains.pop(NAME, None)
        BOOKED.clear()
