"""The policy's part in the conversation (workflows.conversation is the contract):
a question about the travel policy is answered through the exact-graph policy workflow
(policy.services.policy_answer), quoting the policy lines it rests on, or abstains."""
from __future__ import annotations

import json
import re
from datetime import date

from django.utils import timezone
from django.utils.translation import gettext_noop

from config.words import english_aside, words
from workflows.conversation import Claim, ConversationDomain, TurnContext, TurnReply, Vocabulary, text_normalize

from .models import PolicyVersion
from .services import _unit, policy_answer

NAME = "policy"
PERSONA = "Keel answers questions about the company's travel policy."
POLICY_EN = r"\b(travel|trip|lodging|hotel|accommodation|per diem|policy|policies|business trip)\b"
POLICY_ZH = ("差旅", "出差", "住宿", "酒店", "宾馆", "政策", "制度", "报销")
VOCABULARY = Vocabulary(
    subject_en=(r"policy", r"policies", r"travel", r"lodging", r"hotels?", r"accommodation", r"limit", r"per diem"),
    subject_zh=("差旅", "出差", "住宿", "酒店", "政策", "制度", "标准"),
    exemplars={"analyze": ("how much is the travel allowance", "what is the lodging limit in beijing",
                           "北京住宿标准是多少", "差旅补贴是多少")},
)


def is_policy_question(text: str) -> bool:
    return bool(re.search(POLICY_EN, text_normalize(text))) or any(w in text for w in POLICY_ZH)


def _topic(text: str) -> str:
    return "travel"  # the one topic the demo corpus has


def _date_in(text: str) -> date:
    today = timezone.localdate()
    full = re.search(r"(20\d\d)-(\d\d)-(\d\d)", text)
    if full:
        try:
            return date(int(full.group(1)), int(full.group(2)), int(full.group(3)))
        except ValueError:
            pass
    year = re.search(r"(?<!\d)(20\d\d)(?!\d)", text)
    if year and int(year.group(1)) != today.year:
        return date(int(year.group(1)), 7, 1)  # a year alone: its middle, well inside any yearly version
    return today


def policy_reply(turn: TurnContext) -> TurnReply:
    on_date = _date_in(turn.text)
    topic = _topic(turn.text)
    turn.budget_spend()  # the policy workflow's one bounded decision counts against the turn
    result = policy_answer(tenant=turn.membership.tenant, question=turn.text[:500], on_date=on_date,
                           topic=topic, lang="zh" if turn.zh else "en")
    result = json.loads(json.dumps(result, default=str))
    turn.frame("tool_call", "policy workflow",
               words(gettext_noop("Policy workflow: %(path)s — %(state)s (%(n)s model call).") if result["model_calls"] == 1
                     else gettext_noop("Policy workflow: %(path)s — %(state)s (%(n)s model calls)."),
                     path=" → ".join(result["path"]), state=result["state"], n=result["model_calls"]),
               {"question": turn.text, "date": on_date.isoformat(), "topic": topic, **result},
               operation="execute_tool", tool_name="policy_answer")
    answer = result.get("answer") or {}
    # The reply is words (config.words): each reader reads it in their language; the policy's
    # own lines are quoted as the policy states them.
    if result["state"] == "ANSWERED":
        citations = answer.get("citation", [])
        quote = [words(gettext_noop("[%(source)s line %(line)s] %(text)s"), source=c["source"], line=c["line"],
                       text=c["text"]) for c in citations]
        version = (PolicyVersion.objects.filter(document__tenant=turn.membership.tenant, document__topic=topic,
                                                label=citations[0]["source"]).first() if citations else None)
        reply = words(gettext_noop("%(amount)s %(unit)s (the policy in force on %(date)s). Source: %(quote)s"),
                      amount=answer["amount"], unit=_unit(version, answer["unit"]), date=on_date.isoformat(),
                      quote=quote)
    elif result["state"] == "ABSTAINED":
        reply = words(gettext_noop("I can't answer that from the policy (%(reason)s)."),
                      reason=english_aside(result["reason"].replace("_", " ")))
    else:
        reply = words(gettext_noop("I stopped before answering (%(reason)s)."), reason=result["reason"].replace("_", " "))
    return TurnReply(route="analyze", reply=reply)


class PolicyConversation(ConversationDomain):
    name = NAME
    persona = PERSONA
    vocabulary = VOCABULARY

    def question(self, text: str) -> Claim | None:
        if not is_policy_question(text):
            return None
        return Claim(0.9, "a question about the travel policy", kind="policy")

    def analyze(self, turn: TurnContext, kind: str) -> TurnReply | None:
        return policy_reply(turn) if kind == "policy" else None

    def capability(self, zh: bool) -> str:
        return "回答差旅政策的问题" if zh else "answer questions about your travel policy"

    def example(self, zh: bool) -> str:
        return "北京的住宿标准是多少？" if zh else "What is the lodging limit in Beijing?"
