"""The payroll month in the conversation (workflows.conversation is the contract): "run November
payroll for Shanghai Sales", "发11月工资", "发上海销售11月的工资" start the month's workflow for
that group through the same service as the group page and the API (month_start). Which group:
the one the text names, or the tenant's only group; otherwise Keel asks, offering the groups,
and the answer (a click, a name, "the first one") starts it. Which year: the current payroll
year, unless early in a year a November or December may be last year's: then it asks."""
from __future__ import annotations

from typing import Any

from django.utils import timezone
from django.utils.translation import gettext_noop

from config.words import words
from workflows.blueprints import Door
from workflows.conversation import Claim, ConversationDomain, TurnContext, TurnReply, Vocabulary, option_choose

from payroll.models import MonthStatus, PayrollGroup, PayrollMonth
from payroll.reading.month_request import MonthRequest, month_request_read, year_is_ambiguous
from payroll.records.months import month_start

from .month_evaluation import MONTH_EVALUATION
from .understanding import route_frame

NAME = "payroll_month"
MONTH_WORDS = (gettext_noop("January"), gettext_noop("February"), gettext_noop("March"), gettext_noop("April"),
               gettext_noop("May"), gettext_noop("June"), gettext_noop("July"), gettext_noop("August"),
               gettext_noop("September"), gettext_noop("October"), gettext_noop("November"),
               gettext_noop("December"))
STATUS_WORDS = {"open": gettext_noop("open"), "computed": gettext_noop("computed"),
                "awaiting_approval": gettext_noop("awaiting approval"), "closed": gettext_noop("closed")}
MONTH_NAMES = r"(jan(uary)?|feb(ruary)?|march|apr(il)?|june?|july?|aug(ust)?|sep(t(ember)?)?|oct(ober)?|nov(ember)?|dec(ember)?)"
VOCABULARY = Vocabulary(
    act_en=(rf"run {MONTH_NAMES}('s)? (payroll|pay|salar\w*|wages)",
            rf"{MONTH_NAMES}('s)? (payroll|salar\w*|wages)",
            rf"(run|process|close|pay) (the )?(payroll|salar\w*|wages) (for|of) {MONTH_NAMES}",
            rf"pay .{{1,40}} for {MONTH_NAMES}", rf"(run|process|close) .{{0,40}}(payroll|salar\w*|wages) for {MONTH_NAMES}",
            r"(run|process|close|pay) (the )?((this|last) month'?s?|20\d\d-\d\d) (payroll|salar\w*|wages)"),
    act_zh_re=(r"(发|算|跑|核算|结算)[^，。,]{0,16}((1[0-2]|[1-9]|十[一二]?|[一二三四五六七八九])\s*月(份)?|上个?月|本月|这个月)"
               r"的?(工资|薪资|薪水|薪)",
               r"(1[0-2]|[1-9]|十[一二]?|[一二三四五六七八九])\s*月(份)?的?(工资|薪资)(发放|核算|结算)"),
    exemplars={"resolve": ("run november payroll for shanghai sales", "发11月工资", "发上海销售11月的工资")})


def _groups(tenant_id: int) -> list[PayrollGroup]:
    return list(PayrollGroup.objects.filter(tenant_id=tenant_id).order_by("name"))


def group_named(request: MonthRequest, groups: list[PayrollGroup], text: str) -> PayrollGroup | None:
    """The group the text names: a group's name written in it (the longest wins: "Shanghai Sales
    2" over "Shanghai Sales"), else one the reading names ("上海销售" → Shanghai Sales)."""
    lowered = text.lower()
    written = sorted((g for g in groups if g.name and g.name.lower() in lowered), key=lambda g: -len(g.name))
    if written:
        return written[0]
    wanted = {n.lower() for n in request.group_names}
    named = [g for g in groups if g.name.lower() in wanted]
    return named[0] if len(named) == 1 else None


def _period_words(month: int, year: int) -> dict[str, Any]:
    return words(gettext_noop("%(month)s %(year)s"), month=words(MONTH_WORDS[month - 1]), year=str(year))


class MonthConversation(ConversationDomain):
    name = NAME
    persona = ("Keel runs a payroll group's month: it computes every payslip from the month's attendance and sales, "
               "asks an approver once, then closes the month with the bank payment file and the tax declaration.")
    blueprints = ("payroll_month", "payroll_month_reopen")
    vocabulary = VOCABULARY

    @property
    def evaluation(self):
        return MONTH_EVALUATION

    def holds(self, turn: TurnContext) -> Claim | None:
        state = turn.pending(NAME).get()
        if state is None or turn.signal == "analyze":
            return None
        if option_choose(turn.text, state.get("options") or []) is None and month_request_read(
                turn.text, timezone.localdate()) is None:
            return None  # not an answer to which group or year: the turn is someone else's
        return Claim(1.0, "it asked which group or year the month is for; this message answers it")

    def claims(self, turn: TurnContext) -> Claim | None:
        if turn.signal != "resolve":
            return None
        read = month_request_read(turn.text, timezone.localdate())
        if read is None:
            return None
        # Above the setup's 0.5: a request naming a month to pay is a month's, never a new group.
        return Claim(0.8, f"a request to run the payroll of month {read.month}")

    def answer(self, turn: TurnContext) -> TurnReply:
        today = timezone.localdate()
        pending = turn.pending(NAME)
        state = pending.get()
        groups = _groups(turn.membership.tenant_id)
        if state is not None:
            pending.clear()
            options = state.get("options") or []
            picked = option_choose(turn.text, options)
            request = MonthRequest(month=state["month"], year=state.get("year"), group_names=())
            group = next((g for g in groups if str(g.id) == state.get("group_id")), None)
            if picked is not None and state["asks"] == "group":
                group = next((g for g in groups if str(g.id) == options[picked]["answer"]), None)
            elif picked is not None and state["asks"] == "year":
                request = MonthRequest(month=request.month, year=int(options[picked]["answer"]), group_names=())
            else:  # a new request in place of an answer: read it whole
                request = month_request_read(turn.text, today) or request
                group = group_named(request, groups, turn.text) or group
            route_frame(turn, "resume_exploration", gettext_noop("a question about the month was open; this message "
                                                                 "answers it"))
        else:
            request = month_request_read(turn.text, today)
            assert request is not None  # claims() read it
            group = group_named(request, groups, turn.text) or (groups[0] if len(groups) == 1 else None)
        if not groups:
            route_frame(turn, "plan", gettext_noop("no payroll group to run a month for"))
            return TurnReply(route="plan", reply=words(gettext_noop(
                "There is no payroll group to run a month for yet. Set one up first, for example: “set up a "
                "monthly payroll group for our Shanghai sales team with commission”.")))
        if group is None:
            return self._ask_group(turn, request, groups)
        if request.year is None and year_is_ambiguous(request.month, today):
            return self._ask_year(turn, request, group, today)
        year = request.year or today.year
        return self._start(turn, group, year, request.month)

    def _ask_group(self, turn: TurnContext, request: MonthRequest, groups: list[PayrollGroup]) -> TurnReply:
        options = [{"label": g.name, "answer": str(g.id)} for g in groups[:8]]
        turn.pending(NAME).set({"asks": "group", "month": request.month, "year": request.year, "options": options})
        route_frame(turn, "explore", gettext_noop("the request names no group this tenant has: ask which"))
        return TurnReply(route="explore", status="awaiting_input", options=options, reply=words(gettext_noop(
            "Which group's payroll for %(period)s? Pick one, or type its name."),
            period=words(MONTH_WORDS[request.month - 1])))

    def _ask_year(self, turn: TurnContext, request: MonthRequest, group: PayrollGroup, today) -> TurnReply:
        options = [{"label": str(y), "answer": str(y)} for y in (today.year - 1, today.year)]
        turn.pending(NAME).set({"asks": "year", "month": request.month, "group_id": str(group.id),
                                "options": options})
        route_frame(turn, "explore", gettext_noop("the month may be last year's or this year's: ask which"))
        return TurnReply(route="explore", status="awaiting_input", options=options, reply=words(gettext_noop(
            "%(month)s of which year for “%(group)s”?"), month=words(MONTH_WORDS[request.month - 1]),
            group=group.name))

    def _start(self, turn: TurnContext, group: PayrollGroup, year: int, month: int) -> TurnReply:
        period = _period_words(month, year)
        existing = PayrollMonth.objects.filter(group=group, year=year, month=month).first()
        if existing is not None and existing.status != MonthStatus.REOPENED:
            route_frame(turn, "plan", gettext_noop("that month of the group exists already: say so, start nothing"))
            return TurnReply(route="plan", reply=words(gettext_noop(
                "The payroll of “%(group)s” for %(period)s exists already (%(status)s): open it on the group's "
                "page, %(url)s."), group=group.name, period=period,
                status=words(STATUS_WORDS.get(existing.status, existing.status)),
                url=f"/payroll/months/{existing.id}/"))
        route_frame(turn, "plan", gettext_noop("the group and the month are known: the month's workflow starts"))
        turn.anchor_set(turn.text)
        membership, conversation_id = turn.membership, turn.conversation_id

        def run_started() -> int:  # inside the reply's transaction, as every door starts it
            return month_start(membership=membership, group_id=group.id, year=year, month=month,
                               door=Door.CONVERSATION, conversation_id=conversation_id).run.id

        return TurnReply(route="plan", start_run=run_started, reply=words(gettext_noop(
            "Running the payroll of “%(group)s” for %(period)s: I gather the month's attendance and sales, compute "
            "every payslip and ask an approver before the month closes with the bank file and the tax "
            "declaration."), group=group.name, period=period))

    def run_title(self, run: Any):
        name, year, month = run.params.get("group_name"), run.params.get("year"), run.params.get("month")
        if not (name and year and month):
            return None
        if run.blueprint == "payroll_month_reopen":
            return words(gettext_noop("The reopen of “%(name)s”, %(period)s"), name=name,
                         period=_period_words(month, year))
        return words(gettext_noop("The payroll of “%(name)s”, %(period)s"), name=name, period=_period_words(month, year))

    def capability(self, zh: bool) -> str:
        return "发放某个月的工资" if zh else "run a month's payroll"

    def example(self, zh: bool) -> str:
        # No group's name: an example names no tenant's records (another tenant reads it too).
        return "发11月工资" if zh else "run November payroll"
