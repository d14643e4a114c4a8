"""What the builtin model backend answers for the conversation front's purposes: the
intent signal, a clarifying question, and short plain replies. Registered with
llm.builtin by AgentsConfig.ready(); another backend answers these from its model. What
Keel can do, and what would make an unclear request clear, each domain says
(workflows.conversation.ConversationDomain.capability and clarify_hint)."""
from __future__ import annotations

import re

from llm.builtin import answerer_register, is_chinese
from workflows.conversation import conversation_domains

from .intent import intent_classify


def _intent_answer(purpose: str, text: str) -> str:
    return intent_classify(text).signal


def capabilities(zh: bool) -> str:
    """What the registered domains say Keel can do, as one phrase ("set up …, … and file …")."""
    said = [c for c in (d.capability(zh) for d in conversation_domains()) if c]
    if zh:
        return "、".join(said)
    return said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1] if said else "help"


def plain_reply(purpose: str, text: str) -> str:
    """A clarifying question for "clarify"; otherwise a greeting, thanks or what Keel can do."""
    zh = is_chinese(text)
    lowered = text.lower()
    if purpose == "clarify":
        hints = "".join(d.clarify_hint(text, zh) for d in conversation_domains())
        if zh:
            return f"我还不太确定您想做什么。我可以{capabilities(zh)}：您想做哪一件？" + hints
        return f"I'm not sure what you'd like me to do. I can {capabilities(zh)}: which would you like?" + hints
    if any(w in lowered for w in ("thank", "cheers", "appreciate")) or any(w in text for w in ("谢谢", "多谢", "感谢")):
        return "不客气！" if zh else "You're welcome!"
    if re.search(r"\b(bye|goodbye|see you)\b", lowered) or "再见" in text:
        return "再见！" if zh else "Goodbye!"
    if intent_classify(text).signal == "chat" or purpose == "chat":
        return f"您好！我可以{capabilities(zh)}。" if zh else f"Hello! I can {capabilities(zh)}."
    return "好的，已收到。" if zh else "Understood."


def answerers_register() -> None:
    answerer_register("intent", _intent_answer)
    answerer_register("*", plain_reply)
