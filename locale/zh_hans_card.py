"""Simplified Chinese for what a setup's approval card and its owners' news say about every
change it makes (moved and new employees, salaries asked before the approval), and a name given
with a template pick. scripts/i18n_fill.py reads it after zh_hans_strings.py."""
ZH = {
    "Salaries answered before the approval": "审批前答复的工资",
    "%(count)s, each on its own line under “Salaries this approval sets”": "%(count)s 项，逐行列于“本次审批设定的工资”之下",
    "%(items)s · %(n)s employee moves out of another group": "%(items)s · %(n)s 名员工从其他薪资组移出",
    "%(items)s · %(n)s employees move out of other groups": "%(items)s · %(n)s 名员工从其他薪资组移出",
    "%(employee)s (%(number)s): “%(from)s” → “%(into)s” — moved out of %(owner)s's group":
        "%(employee)s（%(number)s）：“%(from)s” → “%(into)s”——从%(owner)s的薪资组移出",
    "%(employee)s (%(number)s): “%(from)s” → “%(into)s” — moved out of that group":
        "%(employee)s（%(number)s）：“%(from)s” → “%(into)s”——从该薪资组移出",
    "new: %(new)s": "新设：%(new)s",
    "%(old)s → %(new)s": "%(old)s → %(new)s",
    "Monthly base salary (%(currency)s)": "月基本工资（%(currency)s）",
    "answered before the approval": "审批前答复",
    "the attached list": "所附名单",
    "Salaries this approval sets": "本次审批设定的工资",
    "Noted %(count)s salary; I still need these before I ask the approver.":
        "已记下 %(count)s 项工资；在请审批人审批之前，还需要以下员工的工资。",
    "Before I ask the approver, I need a salary for every employee on the list.":
        "在请审批人审批之前，名单上每位员工都需要有工资。",
    "%(count)s answered": "已答复 %(count)s 项",
    "Ask for missing salaries": "询问缺少的工资",
    "Every listed employee has a salary; %(count)s given in answer, shown on the approval card.":
        "名单上每位员工都有工资；其中 %(count)s 项为答复所给，已列在审批卡片上。",
    "named “%(name)s” with the template “%(template)s” at %(who)s's word":
        "按%(who)s的要求命名为“%(name)s”，使用模板“%(template)s”",
    "I'm going on under that name with the template “%(template)s”.": "我将以这个名称继续，使用模板“%(template)s”。",
    "I'm going on under that name, with “%(template)s” for now.": "我将以这个名称继续，暂时使用“%(template)s”。",
    "%(people)s was moved from your group “%(name)s” to “%(into)s” by %(approver)s's approval of %(who)s's run.":
        "%(people)s 经%(approver)s批准%(who)s的运行，已从您的薪资组“%(name)s”移到了“%(into)s”。",
    "%(people)s were moved from your group “%(name)s” to “%(into)s” by %(approver)s's approval of %(who)s's run.":
        "%(people)s 经%(approver)s批准%(who)s的运行，已从您的薪资组“%(name)s”移到了“%(into)s”。",
    "%(people)s was moved from your group “%(name)s” to “%(into)s” by %(who)s's run.":
        "%(people)s 因%(who)s的运行，已从您的薪资组“%(name)s”移到了“%(into)s”。",
    "%(people)s were moved from your group “%(name)s” to “%(into)s” by %(who)s's run.":
        "%(people)s 因%(who)s的运行，已从您的薪资组“%(name)s”移到了“%(into)s”。",
}
