"""Intent classification into a finite control signal (DESIGN.md §2).

`intent_classify(text)` is the builtin backend's classifier: keyword rules in English and
Chinese, the words each registered domain declares (workflows.conversation.Vocabulary: its
subject, its own requests to act, what it reads in a text — a region or a pay item is itself
a sign of a request to its domain), and a character-n-gram similarity to the domains'
exemplars as the fallback for misspellings and phrasings the rules miss.

- resolve: asks to act (set up, create, configure, import, file…) on a domain's subject, or
  describes such a request in the domain's own terms;
- analyze: a read-only question about a domain's records or its policies, or about the runs;
- chat: greetings, thanks, small talk, "what can you do";
- unknown: empty, gibberish, out of scope (no domain's subject), or ambiguous (a subject
  with neither a request nor a question).

`signal_parse(model_text)` turns a model's answer into a signal; anything that is not
exactly one of the four (after trimming, or as {"signal": ...} JSON) is "unknown".
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

from workflows.conversation import SIGNALS, Signs, conversation_domains, text_normalize

__all__ = ["SIGNALS", "IntentResult", "intent_classify", "intent_messages", "signal_parse", "similarity"]


@dataclass(frozen=True)
class IntentResult:
    signal: str
    confidence: float
    reason: str


CHAT_EN = [r"hi", r"hello", r"hey", r"howdy", r"good (morning|afternoon|evening|day)", r"thanks?", r"thank you",
           r"thx", r"cheers", r"bye", r"goodbye", r"see you", r"how are you( doing)?", r"who are you",
           r"what can you do", r"nice to meet you", r"appreciate it", r"great job", r"well done", r"have a nice day"]
CHAT_ZH = ["你好", "您好", "谢谢", "多谢", "感谢", "早上好", "下午好", "晚上好", "再见", "辛苦了", "哈喽", "嗨",
           "你是谁", "你能做什么", "拜拜", "你好吗"]

# The front's own subject: the conversation's runs (any domain's).
RUN_SUBJECT_EN = [r"status", r"progress", r"approv\w*", r"fail(ed|ure)?", r"rolled back", r"roll ?back", r"rejected",
                  r"my run", r"the run", r"is it (done|ready|finished)", r"done yet", r"what happened",
                  r"where are we"]
RUN_SUBJECT_ZH = ["进度", "状态", "审批", "批准", "失败", "回滚", "拒绝", "驳回"]

RESOLVE_EN = [r"set ?up", r"set-up", r"create", r"configure", r"import", r"make (a|an|the|new|us|me)", r"build",
              r"add (a|an|new|the)", r"establish", r"onboard", r"spin up", r"put together", r"register",
              r"sort out", r"organi[sz]e", r"prepare", r"load"]
RESOLVE_ZH = ["设置", "设立", "创建", "建立", "建一个", "建个", "新建", "搭建", "配置", "导入", "添加", "开一个",
              "开个", "帮我建", "弄一个", "做一个", "跑一次", "上线", "新增", "录入", "弄一下", "安排一下", "搞定",
              "配一下", "配个", "弄个", "搞个", "整一个", "整个"]

QUESTION_EN = [r"how (much|many)", r"list", r"show( me)?", r"tell me", r"do we have", r"is there", r"are there",
               r"check", r"look up", r"explain", r"currently", r"existing", r"can i (claim|spend|get)",
               r"am i allowed"]
# Wh-words ask only where a sentence starts: "people who sell" is no question.
WH_START = (r"(?:^|[.!;,?]\s*|\b(?:and|so|hey|also|ok|okay)\s+)(which|what'?s?|whats|when|where|who|how|why|"
            r"has|is|did|was)\b")
QUESTION_ZH = ["多少", "哪些", "什么", "是否", "有没有", "吗", "查看", "查询", "查一下", "列出", "几个", "怎样",
               "现有", "目前", "当前", "是几", "为什么", "怎么样", "如何", "谁", "哪一步", "到哪"]
# A polite or imperative request: "can you set up" is a request, not a question about set-up.
REQUEST_MARKERS = [r"can you", r"could you", r"would you", r"please", r"i want", r"i'd like", r"i would like",
                   r"we need", r"i need", r"we want", r"help me", r"let'?s", r"go ahead"]
REQUEST_ZH = ["帮我", "请", "麻烦", "我想", "我们想", "我要", "我们要", "需要"]

CHAT_EXEMPLARS = ("hi there", "hello", "thanks a lot", "thank you so much", "good morning", "how are you",
                  "你好", "谢谢你", "早上好", "再见")


def _hits(text: str, english: list[str], chinese: list[str]) -> list[str]:
    found = [m.group() for p in english if (m := re.search(rf"(?<![a-z0-9]){p}(?![a-z0-9])", text))]
    found += [w for w in chinese if w in text]
    return found


def _grams(text: str) -> set[str]:
    """Character trigrams of Latin text and bigrams of Chinese runs."""
    grams: set[str] = set()
    for run in re.findall(r"[\u4e00-\u9fff]+", text):
        grams.update(run[i:i + 2] for i in range(max(1, len(run) - 1)))
    latin = " " + " ".join(re.findall(r"[a-z0-9]+", text)) + " "
    if latin.strip():
        grams.update(latin[i:i + 3] for i in range(len(latin) - 2))
    return grams


def similarity(a: str, b: str) -> float:
    """Dice coefficient of the two texts' character n-grams, 0..1."""
    ga, gb = _grams(text_normalize(a)), _grams(text_normalize(b))
    if not ga or not gb:
        return 0.0
    return 2 * len(ga & gb) / (len(ga) + len(gb))


def _exemplars() -> dict[str, list[str]]:
    examples: dict[str, list[str]] = {"chat": list(CHAT_EXEMPLARS)}
    for domain in conversation_domains():
        for signal, texts in domain.vocabulary.exemplars.items():
            examples.setdefault(signal, []).extend(texts)
    return examples


def _nearest(text: str) -> tuple[str, float]:
    return max(((signal, max(similarity(text, e) for e in examples))
                for signal, examples in _exemplars().items() if examples), key=lambda pair: pair[1])


def _confidence(hit_count: int, bonus: float = 0.0) -> float:
    return round(min(0.95, 0.6 + 0.1 * min(hit_count, 3) + bonus), 2)


def _corrected(text: str) -> str:
    lowered = text_normalize(text)
    for domain in conversation_domains():
        if domain.vocabulary.correct is not None:
            lowered = domain.vocabulary.correct(lowered)
    return lowered


@lru_cache(maxsize=256)  # a pure function of the text; a turn asks twice (the builtin model, then the reason)
def intent_classify(text: str) -> IntentResult:
    """Classify one user message into chat / analyze / resolve / unknown, with the reason."""
    lowered = _corrected(text).strip()
    if not re.search(r"[a-z0-9\u4e00-\u9fff]", lowered):
        return IntentResult("unknown", 0.95, "empty message")
    domains = conversation_domains()
    chat = _hits(lowered, CHAT_EN, CHAT_ZH)
    domain: list[str] = []
    for d in domains:
        domain += _hits(lowered, list(d.vocabulary.subject_en), list(d.vocabulary.subject_zh))
    domain += _hits(lowered, RUN_SUBJECT_EN, RUN_SUBJECT_ZH)
    resolve = _hits(lowered, RESOLVE_EN, RESOLVE_ZH)
    for d in domains:
        resolve += _hits(lowered, list(d.vocabulary.act_en), list(d.vocabulary.act_zh))
        resolve += [p for p in d.vocabulary.act_zh_re if re.search(p, lowered)]
    question = (_hits(lowered, QUESTION_EN, QUESTION_ZH) + (["question mark"] if re.search(r"[?？]", lowered) else [])
                + [m.group(1) for m in re.finditer(WH_START, lowered)])
    request = _hits(lowered, REQUEST_MARKERS, REQUEST_ZH)
    signs = Signs(text=text, lowered=lowered, words=tuple(domain), question=bool(question), request=bool(request))
    readings = [d.vocabulary.read(signs) for d in domains if d.vocabulary.read is not None]
    named = [n for r in readings for n in r.named]
    subject = domain + named

    if resolve and subject:
        # "Which groups did we create?" asks about the past; "can you create" asks for work.
        opens_with_question = re.match(r"(how (much|many)|which|what|when|where|who|why|list|show|do we|is there|"
                                       r"are there|has|did|is it)\b",
                                       lowered) or any(w in lowered for w in ("哪些", "多少", "有没有", "为什么"))
        if opens_with_question and not request and not re.search(r"\b(set ?up|create|configure|import)\b.*\bfor\b", lowered):
            return IntentResult("analyze", _confidence(len(question)),
                                f"question ({question[0]}) about existing {subject[0]}; the action word is not a request")
        return IntentResult("resolve", _confidence(len(resolve) + len(named)),
                            f"asks to act ({resolve[0]}) on {subject[0]}")
    # A place alone is no subject: "the weather in Shanghai?" is out of scope.
    topical = domain + [t for r in readings for t in r.topical]
    if question and topical:
        return IntentResult("analyze", _confidence(len(question) + len(topical) - 1),
                            f"read-only question ({question[0]}) about {topical[0]}")
    described = next((r.described for r in readings if r.described), "")
    if described:
        return IntentResult("resolve", _confidence(len(named), -0.1), described)
    if chat and not subject:
        return IntentResult("chat", _confidence(len(chat)), f"small talk ({chat[0]})")
    if question and not topical:
        return IntentResult("unknown", 0.7, "out of scope: a question about no subject Keel knows")
    if subject:
        return IntentResult("unknown", 0.6, f"ambiguous: mentions {', '.join(subject[:3])} but neither asks a "
                                            "question nor requests an operation")
    if question or resolve:
        return IntentResult("unknown", 0.7, "out of scope: about no subject Keel knows")
    signal, score = _nearest(lowered)
    if score >= 0.5:
        return IntentResult(signal, round(min(0.8, score), 2), f"closest to a {signal} example (similarity {score:.2f})")
    return IntentResult("unknown", 0.8, f"no recognizable request (best similarity {score:.2f})")


def signal_parse(model_text: str | None) -> str:
    """A model's answer as a signal: exactly one of SIGNALS, else "unknown"."""
    if not isinstance(model_text, str):
        return "unknown"
    candidate = model_text.strip()
    if candidate.startswith("{"):
        try:
            data = json.loads(candidate)
        except ValueError:
            return "unknown"
        candidate = data.get("signal", data.get("intent")) if isinstance(data, dict) else None
        if not isinstance(candidate, str):
            return "unknown"
    candidate = candidate.strip().strip("\"'`.").strip().lower()
    return candidate if candidate in SIGNALS else "unknown"


def intent_messages(text: str) -> list[dict]:
    """The classification prompt for a real model; the builtin reads the last user message.
    What Keel does is each registered domain's persona line."""
    does = " ".join(d.persona for d in conversation_domains() if d.persona)
    return [
        {"role": "system", "content": (
            "Classify the user's message for Keel, an assistant that acts in the company's systems of record. "
            + does + " Answer with exactly one word: "
            "chat (greeting, thanks, small talk), analyze (a read-only question about the company's records, "
            "configuration, runs or policies), resolve (a request to set up, create, configure, import or file "
            "something in one of those systems), or unknown (empty, gibberish, out of scope or ambiguous).")},
        {"role": "user", "content": text},
    ]
