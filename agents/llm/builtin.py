"""The builtin backend: a deterministic interpreter with honest rules, no network.

It answers by `purpose`:
- "intent": one of chat / analyze / resolve / unknown, from agents.intent's keyword and
  character-n-gram rules over the last user message;
- "requirements": JSON of agents.requirements' extraction from the last user message;
- "decide" with `choices`: the listed candidate whose words best match the user
  messages once the candidate list itself is removed from them (English words, plus
  Chinese glosses); a candidate named "abstain" wins only when no other scores above
  zero, and ties go to the first listed;
- "clarify": a question asking for what the request is missing;
- anything else: a short plain reply (a greeting, thanks, or what Keel can do).
It never emits tool calls. Token counts are `tokens_estimate` figures; cost is 0.
"""
from __future__ import annotations

import json
import re
import time

from .base import ModelResult, last_user_text, message_text, messages_tokens_estimate, tokens_estimate

MODEL = "keel-builtin-1"

# Chinese words a candidate's English words may appear as in a Chinese prompt.
_GLOSSES = {
    "evidence": ["证据", "依据", "引文", "条款"],
    "use": ["使用", "采用"],
    "abstain": ["弃权", "不回答"],
    "answer": ["回答", "答复"],
}


def _is_chinese(text: str) -> bool:
    return bool(re.search(r"[\u4e00-\u9fff]", text))


def decide(messages: list[dict], choices: list[str]) -> str:
    text = " ".join(message_text(m) for m in messages if m.get("role") == "user").lower()
    for choice in sorted(choices, key=len, reverse=True):  # the list itself is no evidence
        text = text.replace(choice.lower(), " ")
    words = set(re.findall(r"[a-z0-9]+", text))

    def score(choice: str) -> int:
        total = 0
        for part in re.split(r"[_\s\-]+", choice.lower()):
            if not part:
                continue
            if part in words or any(g in text for g in _GLOSSES.get(part, [])):
                total += 1
        return total

    scored = [(score(c), -i, c) for i, c in enumerate(choices)]
    best = max(scored)
    if best[2].lower() == "abstain" or best[0] == 0:
        others = [s for s in scored if s[2].lower() != "abstain" and s[0] > 0]
        if others:
            return max(others)[2]
        abstain = [c for c in choices if c.lower() == "abstain"]
        return abstain[0] if abstain else choices[0]
    return best[2]


def _plain_reply(purpose: str, text: str) -> str:
    from agents.intent import intent_classify
    from agents.requirements import requirements_extract

    zh = _is_chinese(text)
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


class BuiltinBackend:
    name = "builtin"

    def complete(self, messages: list[dict], *, purpose: str, tools, choices, max_tokens: int,
                 stream: bool, on_delta) -> ModelResult:
        from agents.intent import intent_classify
        from agents.requirements import requirements_extract

        started = time.monotonic()
        text = last_user_text(messages)
        if purpose == "intent":
            answer = intent_classify(text).signal
        elif purpose == "requirements":
            answer = json.dumps(requirements_extract(text), ensure_ascii=False, sort_keys=True)
        elif purpose == "decide" and choices:
            answer = decide(messages, choices)
        else:
            answer = _plain_reply(purpose, text)
        if on_delta:
            on_delta(answer)
        latency = int((time.monotonic() - started) * 1000)
        return ModelResult(
            text=answer, provider=self.name, model=MODEL,
            input_tokens=messages_tokens_estimate(messages), output_tokens=tokens_estimate(answer),
            tokens_estimated=True, latency_ms=latency, first_token_ms=latency,
            prompt=messages, output_raw=answer, finish_reason="stop",
        )
