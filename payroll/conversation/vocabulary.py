"""Payroll's words in the conversation: the subject and the requests to act that are payroll's,
the exemplars, and what the requirement lexicons read in a text (a region, a pay cycle, a
population or a pay item is itself a sign of a payroll request; payroll.reading.requirements)."""
from __future__ import annotations

import re

from workflows.conversation import Reading, Signs, Vocabulary

from payroll.reading.requirements import requirements_extract, text_corrected


NAME = "payroll"
BLUEPRINT = "payroll_group_setup"
PERSONA = ("Keel sets up payroll groups for the user's company, imports employees and answers questions about "
           "the payroll configuration.")


SUBJECT_EN = (r"payroll", r"pay ?groups?", r"salar(y|ies)", r"wages?", r"pay(ing|s|ment)?", r"paid", r"paychecks?",
              r"payslips?", r"compensation", r"remuneration", r"groups?", r"employees?", r"staff", r"team",
              r"headcount", r"templates?", r"tax(es)?", r"payday", r"pay ?runs?", r"benefits?", r"deductions?",
              r"earnings?", r"the setup", r"the import", r"rates?", r"pension", r"insurance", r"housing fund",
              r"the group")
SUBJECT_ZH = ("薪资", "工资", "薪酬", "薪水", "发薪", "算薪", "计薪", "薪资组", "工资组", "员工", "模板", "个税", "扣款",
              "福利", "组", "比例", "公积金", "养老", "医疗", "社保")
ACT_EN = (r"run (the |a |this month'?s? |our )?payroll", r"process (the )?payroll", r"do (the |our )?payroll",
          r"handle (the )?payroll", r"new (payroll )?group", r"get (them|people|staff|everyone) paid",
          r"pay (them|our|my|the|people|staff|folks|everyone)")
ACT_ZH = ("发工资", "算工资", "建组")
ACT_ZH_RE = (r"给.{0,12}发(工资|薪)", r"(需要|要|想)(一个|个).{0,10}(组|薪资|工资)")
EXEMPLARS = {
    "analyze": ("which payroll groups do we have", "list our payroll groups", "我们有哪些薪资组"),
    "resolve": ("set up a monthly payroll group for shanghai sales with commission", "create a payroll group",
                "import employees into a payroll group", "run payroll for this month", "帮我设置上海销售的月薪薪资组",
                "创建一个薪资组", "导入员工名单"),
}


def _read(signs: Signs) -> Reading:
    """What the requirement lexicons read: named things, and a request described without a verb."""
    req = requirements_extract(signs.text)
    named = tuple([k for k in ("region", "pay_frequency", "population") if req[k]] + req["items_named"])
    topical = tuple(req["items_named"] + ([req["population"]] if req["population"] else []))
    subject = len(signs.words) + len(named)
    # A description with no verb ("Shenzhen factory crew, overtime, monthly") is a request too.
    # A bare noun phrase ("Shanghai sales commission", "上海销售") stays ambiguous: it takes a
    # pay cycle, a payroll word, a stated name or a polite request to make it a description.
    described = req["pay_frequency"] or signs.request or req["name_stated"] or any(
        re.search(r"pay|salar|wage|group", d) or d in ("薪资", "工资", "薪酬", "薪资组", "工资组", "组")
        for d in signs.words)
    reason = ""
    if not signs.question and described and (req["region"] or req["population"]) and subject >= 2:
        reason = f"describes a payroll group ({', '.join(list(named) + list(signs.words[:1]))}) without naming the operation"
    elif len(named) >= 2 and re.search(r"\b(paid|pay|get|earn|need|want)\b|发|拿|需要", signs.lowered):
        reason = f"describes how staff are paid ({', '.join(named)}) without naming the operation"
    return Reading(named=named, topical=topical, described=reason)


def _correct(lowered: str) -> str:
    return text_corrected(lowered)


VOCABULARY = Vocabulary(subject_en=SUBJECT_EN, subject_zh=SUBJECT_ZH, act_en=ACT_EN, act_zh=ACT_ZH,
                        act_zh_re=ACT_ZH_RE, exemplars=EXEMPLARS, read=_read, correct=_correct)
