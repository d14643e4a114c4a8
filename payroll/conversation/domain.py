"""Payroll's conversation domain (workflows.conversation is the contract): whether a turn is
its own, the answer, its read-only questions, its attachment (an HR export, whose employees
are assigned after the import), how its runs are titled and what they made."""
from __future__ import annotations

from typing import Any

from django.utils.translation import gettext, gettext_noop

from config.words import Stored, ngettext_noop, sentences, words
from workflows.conversation import (
    Attached,
    AttachmentKind,
    Change,
    Claim,
    ConversationDomain,
    TurnContext,
    TurnReply,
)
from workflows.models import StateCoordinate

from payroll.agent.changes import change_read
from payroll.agent.previews import requirements_words
from payroll.models import PayrollGroup
from payroll.reading.attachments import MAX_BYTES, AttachmentError, employee_list_parse
from payroll.reading.matching import option_choose
from payroll.reading.requirements import requirements_extract

from .answers import answer_carries
from .evaluation import DIALOGUE_EVALUATION, EVALUATION
from .exploration import ExplorationState, dependencies_known
from .questions import KIND_SCORES, configuration_answer, question_kind, rate_answer
from .setup import attached_employees, explore, plan_start, resume_exploration
from .template_question import answer_assumed, answer_template_question, run_requirements, waiting_question
from .template_used import template_in_use_answer
from .understanding import reason_built, turn_requirements, route_frame
from .vocabulary import BLUEPRINT, NAME, PERSONA, VOCABULARY


def _employee_list(membership, conversation_id: int, text: str, filename: str, raw: bytes, lang: str) -> Attached:
    employees = employee_list_parse(tenant_id=membership.tenant_id, filename=filename, raw=raw, lang=lang)
    return Attached(filename=employees.filename, data=employees, rows=employees.rows,
                    summary=words(ngettext_noop("An employee list of %(rows)s person was attached and checked.",
                                                     "An employee list of %(rows)s people was attached and checked.", "rows"),
                                  rows=employees.rows),
                    payload={"file": employees.filename, "rows": employees.rows})


def _too_large(size: int) -> AttachmentError:
    return AttachmentError(gettext("The file is larger than %(value)s KB.") % {"value": MAX_BYTES // 1024},
                           code="attachment_too_large")


EMPLOYEE_LIST = AttachmentKind(name="employee_list", suffixes=(".csv", ".xlsx"), max_bytes=MAX_BYTES,
                               described=gettext_noop("a CSV or XLSX employee list (.csv or .xlsx)"),
                               parse=_employee_list, too_large=_too_large)


def _identities_said(attached, reply: TurnReply) -> TurnReply:
    """An employee list with ID or bank columns: the reply says they are not taken here (a bank
    account changes only through an admin's import), so nobody closes a month believing them in."""
    if attached is not None and attached.identity_columns:
        reply.reply = sentences(reply.reply, words(gettext_noop(
            "The list's ID and bank columns (%(columns)s) are not taken in the chat: an admin imports them from "
            "the same file under “ID and bank details” on the year-to-date figures page."),
            columns=", ".join(attached.identity_columns)))
    return reply


class PayrollConversation(ConversationDomain):
    name = NAME
    persona = PERSONA
    blueprints = (BLUEPRINT, "payroll_direct_import", "payroll_tenant_restore")
    vocabulary = VOCABULARY
    attachments = (EMPLOYEE_LIST,)

    @property
    def evaluation(self):
        return EVALUATION

    @property
    def dialogues(self):
        return DIALOGUE_EVALUATION

    def holds(self, turn: TurnContext) -> Claim | None:
        """It asked (the exploration, or its run asked which template) and this message answers.
        A message the intent reads as chat still answers when it carries an answer ("never mind",
        "the second one", "叫成都运营")."""
        state = turn.pending(NAME).get()
        if state is not None:
            if turn.signal == "analyze":
                return None
            if turn.signal == "chat" and not answer_carries(turn.text, state.get("options") or [],
                                                            state.get("requirements") or {}):
                return None
            return Claim(1.0, "an exploration or a question is waiting for the user; this message answers it")
        run, node = waiting_question(turn)
        if node is None or node.key != "match" or turn.signal == "analyze":
            return None
        options = (node.question or {}).get("options") or []
        if turn.signal == "chat" and not answer_carries(turn.text, options, run_requirements(run)):
            return None
        return Claim(1.0, "its run asked which template to use; this message answers it as a whole")

    def claims(self, turn: TurnContext) -> Claim | None:
        if turn.signal != "resolve":
            return None
        return Claim(0.5, "a request to set up a payroll group")

    def answer(self, turn: TurnContext) -> TurnReply:
        exploration = turn.pending(NAME).get()
        if exploration is not None and exploration.get("kind") in ("template", "assumed"):
            route_frame(turn, "resume_run",
                         gettext_noop("a template question is open; this message answers it as a whole"))
            if exploration["kind"] == "assumed":
                return answer_assumed(turn, exploration)
            run, node = waiting_question(turn)
            if run is None or run.id != exploration.get("run_id"):
                turn.pending(NAME).clear()
            else:
                return answer_template_question(turn, run, exploration.get("options") or [], 2,
                                                 dict(exploration.get("requirements") or {}),
                                                 assumed=exploration.get("assume"))
            exploration = None
        if exploration is None:
            run, node = waiting_question(turn)
            if node is not None and node.key == "match" and turn.signal != "analyze":
                route_frame(turn, "resume_run", gettext_noop("its run asked which template to use; this message "
                                                              "answers it as a whole"))
                return answer_template_question(turn, run, (node.question or {}).get("options") or [], 1,
                                                 run_requirements(run))
        if exploration is not None and turn.signal != "analyze":
            route_frame(turn, "resume_exploration",
                         gettext_noop("an exploration is waiting for a missing value; this message adds to it"))
            reply = resume_exploration(turn, exploration)
            reply.route = "resume_exploration"
            return reply
        requirements = turn_requirements(turn, turn.text)
        known, missing = dependencies_known(requirements, None)
        attached = attached_employees(turn)
        employees = attached.employee_ids if attached else None
        new_employees = list(attached.new_employees) if attached else []
        turn.anchor_set(turn.text)
        if known:
            route_frame(turn, "plan", reason_built(
                f"the request is complete ({requirements_words(requirements)}; group “{requirements['group_name']}”): "
                "a fixed plan runs at once",
                gettext_noop("the request is complete (group “%(group)s”): a fixed plan runs at once"),
                group=requirements["group_name"]))
            return _identities_said(attached, plan_start(turn, request=turn.text, requirements=requirements,
                                                         template_name=None, employees=employees,
                                                         new_employees=new_employees))
        route_frame(turn, "explore", reason_built(
            "the request lacks " + ", ".join(m.replace("_", " ") for m in missing) + ": explore before planning",
            gettext_noop("the request lacks something it needs: explore before planning")))
        reply = explore(turn, ExplorationState(request=turn.text, requirements=requirements),
                         employees=employees, new_employees=new_employees)
        reply.route = "explore"
        return _identities_said(attached, reply)

    def question(self, text: str) -> Claim | None:
        kind = question_kind(text)
        return Claim(KIND_SCORES[kind], f"a question about the payroll {kind}", kind=kind)

    def analyze(self, turn: TurnContext, kind: str) -> TurnReply | None:
        if kind == "templates":
            used = template_in_use_answer(turn)
            if used:
                turn.frame("observation", "observation: the run's template", used, {"kind": kind})
                return TurnReply(route="analyze", reply=used)
        if kind == "rate":
            reply = rate_answer(turn.text)
            if reply:
                turn.frame("observation", "observation: template items", reply, {"kind": kind})
                return TurnReply(route="analyze", reply=reply)
        return configuration_answer(turn)

    def option_choose(self, text: str, options: list[dict[str, Any]]) -> int | None:
        return option_choose(text, options)

    def change(self, turn: TurnContext, run: Any) -> Change | None:
        return change_read(turn, run)  # payroll/agent/changes.py

    def run_title(self, run: Any) -> Stored:
        name = run.params.get("group_name")
        if not name:
            return None
        return words(gettext_noop("The setup of “%(name)s”"), name=name)

    def run_made(self, run: Any) -> Stored:
        coordinate = StateCoordinate.objects.filter(run=run, key="group_id").order_by("-plan_version").first()
        group = coordinate and PayrollGroup.objects.filter(id=int(coordinate.value), tenant_id=run.tenant_id).first()
        if not group:
            return None
        return words(gettext_noop("The group “%(name)s” has been created."), name=group.name)

    def clarify_hint(self, text: str, zh: bool) -> str:
        missing = requirements_extract(text)["missing"] if text.strip() else ["region", "pay_frequency"]
        if zh:
            asks = {"region": "哪个地区（例如上海、北京、新加坡）", "pay_frequency": "发薪频率（例如每月、半月）"}
            return "如果要创建，请告诉我" + "和".join(asks[m] for m in missing) + "。" if missing else ""
        asks = {"region": "which region (for example Shanghai, Beijing, Singapore)",
                "pay_frequency": "how often they are paid (for example monthly)"}
        return " If it's a setup, tell me " + " and ".join(asks[m] for m in missing) + "." if missing else ""

    def capability(self, zh: bool) -> str:
        return "创建薪资组、导入员工" if zh else "set up payroll groups, import employees"

    def example(self, zh: bool) -> str:
        return "为我们上海销售团队设置一个含提成的月度薪资组" if zh else \
            "set up a monthly payroll group for our Shanghai sales team with commission"
