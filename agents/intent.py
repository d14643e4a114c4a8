"""Intent classification into a finite control signal (seed 000 §4, DESIGN.md §2).

`intent_classify(text)` is the builtin backend's classifier: keyword rules in English and
Chinese, the requirement lexicons of payroll.requirements (a region, a population or a pay
item is itself a sign of a payroll request), and a character-n-gram similarity to a few
exemplars as the fallback for misspellings and phrasings the rules miss.

- resolve: asks to set up / create / configure / import a payroll group or run, or says
  how some staff should be paid;
- analyze: a read-only question about the tenant's payroll configuration or its policies;
- chat: greetings, thanks, small talk, "what can you do";
- unknown: empty, gibberish, out of scope (no payroll or policy subject), or ambiguous
  (a subject with neither a request nor a question).

`signal_parse(model_text)` turns a model's answer into a signal; anything that is not
exactly one of the four (after trimming, or as {"signal": ...} JSON) is "unknown".
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

from payroll.requirements import requirements_extract, text_corrected, text_normalize

SIGNALS = ("chat", "analyze", "resolve", "unknown")


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

DOMAIN_EN = [r"payroll", r"pay ?groups?", r"salar(y|ies)", r"wages?", r"pay(ing|s|ment)?", r"paid", r"paychecks?",
             r"payslips?", r"compensation", r"remuneration", r"policy", r"policies", r"travel", r"lodging",
             r"hotels?", r"accommodation", r"expenses?", r"reimburse(ment)?", r"groups?", r"employees?", r"staff",
             r"team", r"headcount", r"templates?", r"tax(es)?", r"payday", r"pay ?runs?", r"limit", r"per diem",
             r"benefits?", r"deductions?", r"earnings?", r"status", r"progress", r"approv\w*", r"fail(ed|ure)?",
             r"rolled back", r"roll ?back", r"rejected", r"my run", r"the run", r"the setup", r"the import",
             r"rates?", r"pension", r"insurance", r"housing fund", r"is it (done|ready|finished)", r"done yet",
             r"what happened", r"where are we", r"the group"]
DOMAIN_ZH = ["薪资", "工资", "薪酬", "薪水", "发薪", "算薪", "计薪", "薪资组", "工资组", "差旅", "出差", "住宿",
             "酒店", "报销", "政策", "制度", "员工", "模板", "个税", "扣款", "福利", "标准", "组", "进度", "状态",
             "审批", "批准", "失败", "回滚", "拒绝", "驳回", "比例", "公积金", "养老", "医疗", "社保"]

RESOLVE_EN = [r"set ?up", r"set-up", r"create", r"configure", r"import", r"make (a|an|the|new|us|me)", r"build",
              r"add (a|an|new|the)", r"establish", r"onboard", r"spin up", r"put together", r"register",
              r"run (the |a |this month'?s? |our )?payroll", r"process (the )?payroll", r"do (the |our )?payroll",
              r"handle (the )?payroll", r"new (payroll )?group", r"get (them|people|staff|everyone) paid",
              r"pay (them|our|my|the|people|staff|folks|everyone)", r"sort out", r"organi[sz]e", r"prepare",
              r"load"]
RESOLVE_EN += [r"file (an? |my |the )?(expense|claim|reimbursement)s?( claim)?", r"reimburse me"]  # issue 15
RESOLVE_ZH = ["设置", "设立", "创建", "建立", "建一个", "建个", "新建", "搭建", "配置", "导入", "添加", "开一个",
              "开个", "帮我建", "弄一个", "做一个", "跑一次", "发工资", "算工资", "上线", "新增", "录入", "弄一下", "安排一下", "搞定", "配一下", "配个", "弄个", "建组", "搞个",
              "整一个", "整个"]
RESOLVE_ZH += ["报销"]  # issue 15: asking to be reimbursed is a request to act
RESOLVE_ZH_RE = [r"给.{0,12}发(工资|薪)", r"(需要|要|想)(一个|个).{0,10}(组|薪资|工资)"]

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

EXEMPLARS = {
    "chat": ["hi there", "hello", "thanks a lot", "thank you so much", "good morning", "how are you",
             "你好", "谢谢你", "早上好", "再见"],
    "analyze": ["how much is the travel allowance", "which payroll groups do we have",
                "what is the lodging limit in beijing", "list our payroll groups", "我们有哪些薪资组",
                "北京住宿标准是多少", "差旅补贴是多少"],
    "resolve": ["set up a monthly payroll group for shanghai sales with commission", "create a payroll group",
                "import employees into a payroll group", "run payroll for this month", "帮我设置上海销售的月薪薪资组",
                "创建一个薪资组", "导入员工名单"],
}


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


def _nearest(text: str) -> tuple[str, float]:
    return max(((signal, max(similarity(text, e) for e in examples)) for signal, examples in EXEMPLARS.items()),
               key=lambda pair: pair[1])


def _confidence(hit_count: int, bonus: float = 0.0) -> float:
    return round(min(0.95, 0.6 + 0.1 * min(hit_count, 3) + bonus), 2)


@lru_cache(maxsize=256)  # a pure function of the text; a turn asks twice (the builtin model, then the reason)
def intent_classify(text: str) -> IntentResult:
    """Classify one user message into chat / analyze / resolve / unknown, with the reason."""
    lowered = text_corrected(text).strip()
    if not re.search(r"[a-z0-9\u4e00-\u9fff]", lowered):
        return IntentResult("unknown", 0.95, "empty message")
    chat = _hits(lowered, CHAT_EN, CHAT_ZH)
    domain = _hits(lowered, DOMAIN_EN, DOMAIN_ZH)
    resolve = _hits(lowered, RESOLVE_EN, RESOLVE_ZH) + [p for p in RESOLVE_ZH_RE if re.search(p, lowered)]
    question = (_hits(lowered, QUESTION_EN, QUESTION_ZH) + (["question mark"] if re.search(r"[?？]", lowered) else [])
                + [m.group(1) for m in re.finditer(WH_START, lowered)])
    request = _hits(lowered, REQUEST_MARKERS, REQUEST_ZH)
    req = requirements_extract(text)
    named = [k for k in ("region", "pay_frequency", "population") if req[k]] + req["items_named"]
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
                            f"asks to act ({resolve[0]}) on payroll ({subject[0]})")
    # A place alone is no payroll subject: "the weather in Shanghai?" is out of scope.
    topical = domain + req["items_named"] + ([req["population"]] if req["population"] else [])
    if question and topical:
        return IntentResult("analyze", _confidence(len(question) + len(topical) - 1),
                            f"read-only question ({question[0]}) about {topical[0]}")
    # A description with no verb ("Shenzhen factory crew, overtime, monthly") is a request too.
    # A bare noun phrase ("Shanghai sales commission", "上海销售") stays ambiguous: it takes a
    # pay cycle, a payroll word, a stated name or a polite request to make it a description.
    described = req["pay_frequency"] or request or req["name_stated"] or any(
        re.search(r"pay|salar|wage|group", d) or d in ("薪资", "工资", "薪酬", "薪资组", "工资组", "组") for d in domain)
    if not question and described and (req["region"] or req["population"]) and len(subject) >= 2:
        return IntentResult("resolve", _confidence(len(named), -0.1),
                            f"describes a payroll group ({', '.join(named + domain[:1])}) without naming the operation")
    if len(named) >= 2 and re.search(r"\b(paid|pay|get|earn|need|want)\b|发|拿|需要", lowered):
        return IntentResult("resolve", _confidence(len(named), -0.1),
                            f"describes how staff are paid ({', '.join(named)}) without naming the operation")
    if chat and not subject:
        return IntentResult("chat", _confidence(len(chat)), f"small talk ({chat[0]})")
    if question and not topical:
        return IntentResult("unknown", 0.7, "out of scope: a question about neither payroll nor policy")
    if subject:
        return IntentResult("unknown", 0.6, f"ambiguous: mentions {', '.join(subject[:3])} but neither asks a "
                                            "question nor requests an operation")
    if question or resolve:
        return IntentResult("unknown", 0.7, "out of scope: not about payroll configuration or policy")
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
    """The classification prompt for a real model; the builtin reads the last user message."""
    return [
        {"role": "system", "content": (
            "Classify the user's message for a payroll set-up assistant. Answer with exactly one word: "
            "chat (greeting, thanks, small talk), analyze (a read-only question about the company's payroll "
            "configuration or policies), resolve (a request to set up, create, configure or import a payroll "
            "group or run), or unknown (empty, gibberish, out of scope or ambiguous).")},
        {"role": "user", "content": text},
    ]
