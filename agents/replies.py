"""What the builtin model backend answers for the conversation front's purposes: the
intent signal, a clarifying question, and short plain replies. Registered with
llm.builtin by AgentsConfig.ready(); another backend answers these from its model."""
from __future__ import annotations

import re

from llm.builtin import answerer_register, is_chinese
from payroll.requirements import requirements_extract

from .intent import intent_classify


def _intent_answer(purpose: str, text: str) -> str:
    return intent_classify(text).signal


def plain_reply(purpose: str, text: str) -> str:
    """A clarifying question for "clarify"; otherwise a greeting, thanks or what Keel can do."""
    zh = is_chinese(text)
    lowered = text.lower()
    if purpose == "clarify":
        missing = requirements_extract(text)["missing"] if text.strip() else ["region", "pay_frequency"]
        if zh:
            asks = {"region": "哪个地区（例如上海、北京、新加坡）", "pay_frequency": "发薪频率（例如每月、半月）"}
            return "我还不太确定您想做什么。您是想创建薪资组，还是查询现有配置或政策？" + (
                "如果要创建，请告诉我" + "和".join(asks[m] for m in missing) + "。" if missing else "")
        asks = {"region": "which region (for example Shanghai, Beijing, Singapore)",
                "pay_frequency": "how often they are paid (for example monthly)"}
        return ("I'm not sure what you'd like me to do. Do you want to set up a payroll group, or ask about "
                "your current configuration or policies?" + (
                    " If it's a setup, tell me " + " and ".join(asks[m] for m in missing) + "." if missing else ""))
    if any(w in lowered for w in ("thank", "cheers", "appreciate")) or any(w in text for w in ("谢谢", "多谢", "感谢")):
        return "不客气！" if zh else "You're welcome!"
    if re.search(r"\b(bye|goodbye|see you)\b", lowered) or "再见" in text:
        return "再见！" if zh else "Goodbye!"
    if intent_classify(text).signal == "chat" or purpose == "chat":
        return ("您好！我可以帮您创建薪资组、导入员工，并回答关于薪资配置和差旅政策的问题。" if zh else
                "Hello! I can set up payroll groups, import employees, and answer questions about your "
                "payroll configuration and travel policy.")
    return "好的，已收到。" if zh else "Understood."



def answerers_register() -> None:
    answerer_register("intent", _intent_answer)
    answerer_register("*", plain_reply)
