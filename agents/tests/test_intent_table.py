"""The builtin interpreter's table: intent and extracted requirements for English and
Chinese requests, unknown and ambiguous ones, and paraphrases that use none of the
payroll templates' own words."""
import re

import pytest

from agents.intent import SIGNALS, intent_classify, signal_parse
from llm import model_call
from payroll.reading.requirements import requirements_extract

# Each row: text, expected signal, expected requirement fields (only those listed are checked).
TEMPLATED = [
    ("Set up a monthly payroll group for our Shanghai sales team with commission", "resolve",
     {"region": "CN-SH", "pay_frequency": "monthly", "population": "sales", "items_named": ["commission"],
      "group_name": "Shanghai Sales", "missing": []}),
    ("Create a semi-monthly payroll group for US salaried employees", "resolve",
     {"region": "US", "pay_frequency": "semi_monthly", "population": "salaried", "missing": []}),
    ("Please configure payroll for our Singapore office, monthly, with CPF", "resolve",
     {"region": "SG", "pay_frequency": "monthly", "items_named": ["cpf"]}),
    ("Import the Shenzhen factory shift workers with overtime, paid monthly", "resolve",
     {"region": "CN-SZ", "pay_frequency": "monthly", "population": "shift", "items_named": ["overtime"]}),
    ("Can you set up a payroll group for Beijing executives with an annual bonus?", "resolve",
     {"region": "CN-BJ", "pay_frequency": None, "population": "executive", "items_named": ["annual_bonus"],
      "group_name": "Beijing Executives", "missing": ["pay_frequency"]}),
    ("Run payroll for the Guangzhou office this month", "resolve", {"region": "CN-GZ"}),
    ("We need a group for Hong Kong staff with MPF, paid monthly", "resolve",
     {"region": "HK", "pay_frequency": "monthly", "items_named": ["mpf"]}),
    ("Set up payroll for Shanghai with housing fund and social insurance, every month", "resolve",
     {"region": "CN-SH", "pay_frequency": "monthly", "items_named": ["housing_fund", "social_insurance"]}),
    ("Set up a group called 'Pudong Closers' for sales in Shanghai, monthly with commission", "resolve",
     {"group_name": "Pudong Closers", "population": "sales", "items_named": ["commission"]}),
    ("please add a new group for hourly workers in the US with overtime", "resolve",
     {"region": "US", "pay_frequency": "hourly", "items_named": ["overtime"], "missing": []}),
    ("set up a payroll group for sales with commission", "resolve",
     {"region": None, "pay_frequency": None, "missing": ["region", "pay_frequency"]}),
    ("帮我设置一个上海销售的月薪薪资组，有提成", "resolve",
     {"region": "CN-SH", "pay_frequency": "monthly", "population": "sales", "items_named": ["commission"],
      "group_name": "上海销售"}),
    ("创建北京高管薪资组，每月发薪，含年终奖", "resolve",
     {"region": "CN-BJ", "pay_frequency": "monthly", "population": "executive", "items_named": ["annual_bonus"]}),
    ("导入深圳实习生，按小时计薪", "resolve", {"region": "CN-SZ", "pay_frequency": "hourly", "population": "intern"}),
    ("新建一个新加坡的薪资组，月薪，包含中央公积金", "resolve",
     {"region": "SG", "pay_frequency": "monthly", "items_named": ["cpf"]}),
    ("给美国的员工建一个半月薪的工资组", "resolve", {"region": "US", "pay_frequency": "semi_monthly"}),
    ("How much is the travel allowance?", "analyze", {"items_named": ["allowance"]}),
    ("Which payroll groups do we have?", "analyze", {}),
    ("What is the Beijing lodging limit in 2026?", "analyze", {"region": "CN-BJ"}),
    ("Show me the employees in the Shanghai Sales group", "analyze", {}),
    ("Is there a commission item in our sales template?", "analyze", {}),
    ("Which groups did we create last month?", "analyze", {}),
    ("我们有哪些薪资组？", "analyze", {}),
    ("北京出差住宿标准是多少", "analyze", {}),
    ("现在的差旅政策是什么？", "analyze", {}),
    ("hi", "chat", {}),
    ("Hello there, good morning!", "chat", {}),
    ("thanks a lot", "chat", {}),
    ("What can you do?", "chat", {}),
    ("你好", "chat", {}),
    ("谢谢，辛苦了", "chat", {}),
]

UNKNOWN_OR_AMBIGUOUS = [
    ("", "unknown", {"missing": ["region", "pay_frequency"]}),
    ("？？？", "unknown", {}),
    ("asdf qwer zxcv", "unknown", {}),
    ("payroll", "unknown", {}),
    ("Shanghai sales commission", "unknown", {"region": "CN-SH", "population": "sales"}),
    ("上海销售", "unknown", {"region": "CN-SH", "population": "sales"}),
    ("What's the weather in Shanghai tomorrow?", "unknown", {}),
    ("Write me a poem about the sea", "unknown", {}),
    ("帮我订一张去巴黎的机票", "unknown", {}),
    ("今天天气怎么样？", "unknown", {}),
]

# Paraphrases: none of the templates' own words (checked below), yet the same requests.
PARAPHRASES = [
    ("People who sell for us in the Pudong office get a cut of each deal; we need to pay them every month.",
     "resolve", {"region": "CN-SH", "pay_frequency": "monthly", "population": "sales",
                 "items_named": ["commission"], "group_name": "Shanghai Sales"}),
    ("Our students on summer placement in Zhongguancun need to get paid by the hour", "resolve",
     {"region": "CN-BJ", "pay_frequency": "hourly", "population": "intern", "missing": []}),
    ("Please get the leadership team in Lujiazui paid twice a month, with a thirteenth-month payout", "resolve",
     {"region": "CN-SH", "pay_frequency": "semi_monthly", "population": "executive",
      "items_named": ["annual_bonus"]}),
    ("Round-the-clock crews in Nanshan get paid every month, with extra for the longer hours", "resolve",
     {"region": "CN-SZ", "pay_frequency": "monthly", "population": "shift", "items_named": ["overtime"]}),
    ("Our C-suite in Haidian is paid every month plus a year-end payout", "resolve",
     {"region": "CN-BJ", "pay_frequency": "monthly", "population": "executive", "items_named": ["annual_bonus"]}),
    ("浦东那边跑业务的同事，每个月发钱，按单抽成，帮我弄一下", "resolve",
     {"region": "CN-SH", "pay_frequency": "monthly", "population": "sales", "items_named": ["commission"]}),
    ("九龙那边的同事按月发钱，还要交强制性公积金", "resolve",
     {"region": "HK", "pay_frequency": "monthly", "items_named": ["mpf"]}),
    ("What do we give people for a hotel night in the capital?", "analyze", {}),
]

# Words of the seeded templates' names (payroll/seed.py), English and Chinese; "US" is checked
# in capitals.
TEMPLATE_WORDS_EN = {"shanghai", "beijing", "shenzhen", "guangzhou", "hong", "kong", "singapore", "monthly",
                     "semi-monthly", "bi-weekly", "hourly", "salaried", "staff", "shift", "workers", "overtime",
                     "factory", "sales", "commission", "executives", "annual", "bonus", "interns", "labour",
                     "remuneration", "cpf", "mpf", "payroll", "grade-based", "legacy"}
TEMPLATE_WORDS_ZH = ["上海", "北京", "深圳", "广州", "香港", "新加坡", "美国", "月薪", "员工", "小时工", "轮班", "加班",
                     "工厂", "倒班", "工人", "销售", "人员", "提成", "高管", "年终奖", "实习生", "劳务报酬", "中央公积金",
                     "半月薪", "双周", "时薪", "强积金", "职级", "工资"]

ROWS = TEMPLATED + UNKNOWN_OR_AMBIGUOUS + PARAPHRASES


def test_the_table_is_big_enough_and_bilingual():
    assert len(ROWS) >= 30 and len(UNKNOWN_OR_AMBIGUOUS) >= 5 and len(PARAPHRASES) >= 5
    chinese = [t for t, _, _ in ROWS if re.search(r"[\u4e00-\u9fff]", t)]
    assert len(chinese) >= 10 and len(ROWS) - len(chinese) >= 20


@pytest.mark.parametrize("text", [t for t, _, _ in PARAPHRASES])
def test_paraphrases_use_none_of_the_templates_words(text):
    words = set(re.findall(r"[a-z][a-z-]*", text.lower()))
    assert not words & TEMPLATE_WORDS_EN
    assert not re.search(r"\bUS\b", text)  # the region; "sell for us" is a pronoun
    assert not [w for w in TEMPLATE_WORDS_ZH if w in text]


@pytest.mark.parametrize("text, signal, expected", ROWS, ids=[t[:40] or "empty" for t, _, _ in ROWS])
def test_the_builtin_reads_intent_and_requirements(text, signal, expected):
    result = intent_classify(text)
    assert result.signal == signal, result.reason
    assert 0 < result.confidence <= 1 and result.reason
    extracted = requirements_extract(text)
    assert {"region", "pay_frequency", "population", "items_named", "group_name", "missing"} <= set(extracted)
    for key, value in expected.items():
        assert extracted[key] == value, key


@pytest.mark.parametrize("text, signal", [(t, s) for t, s, _ in ROWS[::4]])
def test_the_builtin_backend_answers_the_same_signal(monkeypatch, text, signal):
    monkeypatch.setenv("KEEL_LLM", "builtin")
    answer = model_call([{"role": "user", "content": text}], purpose="intent")
    assert signal_parse(answer.text) == signal


@pytest.mark.parametrize("model_text, signal", [
    ("resolve", "resolve"), ("  Analyze\n", "analyze"), ('"chat"', "chat"), ('{"signal": "resolve"}', "resolve"),
    ('{"intent": "analyze"}', "analyze"), ("resolve.", "resolve"), ("I think resolve", "unknown"),
    ("cancel_order", "unknown"), ("", "unknown"), (None, "unknown"), ("{not json", "unknown"),
    ('{"signal": 3}', "unknown"), ("resolve analyze", "unknown"),
])
def test_signal_parse_keeps_the_signal_set_finite(model_text, signal):
    assert signal_parse(model_text) == signal and signal in SIGNALS
