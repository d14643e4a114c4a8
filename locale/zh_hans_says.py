# Chinese for the words added by the "says" branch (counted words, withdrawn waits, the chat's
# chips, the template in use). A counted msgid is keyed by its singular: Chinese has one form.
ZH = {
    "withdrawn: %(why)s": "已撤回：%(why)s",
    "withdrawn by a new plan": "已被新计划撤回",
    "answer": "回答",
    "%(start)s to %(end)s, %(nights)s night": "%(start)s 至 %(end)s，%(nights)s 晚",
    "%(category)s in %(city)s, %(start)s + %(nights)s night, %(amount)s %(currency)s by %(claimant)s":
        "%(city)s%(category)s，%(start)s 起 %(nights)s 晚，%(amount)s %(currency)s，申请人 %(claimant)s",
    "The expense system reports the claim %(status)s (%(amount)s %(currency)s, %(invoices)s invoice).":
        "报销系统报告申请状态为 %(status)s（%(amount)s %(currency)s，%(invoices)s 张发票）。",
    "Totals for %(n)s employee in %(city)s": "%(city)s %(n)s 名员工的合计",
    "Trial payroll for %(n)s employee in %(year)s (CNY) — %(months)s.":
        "%(year)s 年 %(n)s 名员工的试算工资（人民币）——%(months)s。",
    "Group “%(name)s” is deleted (%(items)s, %(members)s)": "删除组“%(name)s”（%(items)s，%(members)s）",
    "%(n)s item": "%(n)s 个项目",
    "%(n)s employee taken out of it": "%(n)s 名员工移出该组",
    "Group “%(name)s” comes back (%(items)s item)": "组“%(name)s”恢复（%(items)s 个项目）",
    "Imported the template: %(count)s payroll item created.": "已导入模板：创建了 %(count)s 个薪资项目。",
    "Undid this run's changes: removed %(groups)s, put %(count)s employee back.":
        "已撤销本次运行的更改：删除了 %(groups)s，将 %(count)s 名员工恢复原状。",
    "Assigned %(count)s employee to the new group.": "已将 %(count)s 名员工分配到新薪资组。",
    "An employee list of %(rows)s person was attached and checked.": "附上了 %(rows)s 人的员工名单，已检查。",
    "No catalog template fits what is known.": "模板目录中没有符合已知条件的模板。",
    "%(n)s template fits: %(names)s.": "%(n)s 个模板符合：%(names)s。",
    "The company has no payroll groups yet.": "公司还没有薪资组。",
    "%(name)s (%(n)s employee)": "%(name)s（%(n)s 名员工）",
    "%(n)s group: %(groups)s.": "%(n)s 个薪资组：%(groups)s。",
    "%(n)s employee by %(by)s — %(counts)s; %(unassigned)s in no group.":
        "共 %(n)s 名员工，按 %(by)s 统计——%(counts)s；%(unassigned)s 名不在任何组。",
    "Recalled %(n)s earlier experience as context.": "调取了 %(n)s 条以往经验作为参考。",
    "Recalled %(n)s earlier experience as context; it ranks candidates but authorises nothing.":
        "调取了 %(n)s 条以往经验作为参考；它们只用于候选排序，不授权任何操作。",
    "Then I'll assign the %(count)s employee on your list.": "导入后会把名单中的 %(count)s 名员工分配到该组。",
    "The setup of “%(name)s” uses the template “%(template)s”.": "“%(name)s”的设置使用的模板是“%(template)s”。",
    "%(place)s's own templates (%(local)s) do not fit this request; I'll use “%(template)s” — its social insurance "
    "and housing fund rates are %(city)s's, not %(place)s's.":
        "%(place)s的模板（%(local)s）不符合这次的要求，我会使用“%(template)s”——其社保和公积金比例是%(city)s的，不是%(place)s的。",
    "%(count)s employee of the payroll group “%(name)s” that this conversation set up was moved to “%(into)s” by "
    "%(who)s's run.": "本对话创建的薪资组“%(name)s”中有 %(count)s 名员工被 %(who)s 的运行调到了“%(into)s”。",
    "%(done)s of %(total)s employee": "%(done)s 名员工（共 %(total)s 名）",
    "Trial payroll for %(count)s employee, months 1–%(months)s of %(year)s: month 1 gross %(gross)s, employer cost "
    "%(cost)s, tax %(tax)s, net %(net)s CNY.":
        "已试算 %(count)s 名员工 %(year)s 年第 1–%(months)s 月的薪资：第 1 月应发 %(gross)s，雇主成本 %(cost)s，"
        "个税 %(tax)s，实发 %(net)s 元。",
    "checked by run %(run)s": "由运行 %(run)s 核对",
    "%(i)s item": "%(i)s 个项目",
    "%(e)s employee": "%(e)s 名员工",
    "%(n)s difference": "%(n)s 处差异",
    "%(n)s row": "%(n)s 行",
    "%(n)s session ended": "结束了 %(n)s 个会话",
    "%(n)s API token revoked": "撤销了 %(n)s 个 API 令牌",
    "Signed out everywhere: %(sessions)s, %(tokens)s.": "已在所有设备退出：%(sessions)s，%(tokens)s。",
}
ZH.update({
    "Retrieved %(count)s candidate from the CV bank.": "已从简历库检索到 %(count)s 名候选人。",
    "Recorded %(count)s match in the HR system.": "已在人力资源系统中记录 %(count)s 个匹配。",
    "Removed %(count)s match this run had recorded.": "已移除本次运行记录的 %(count)s 个匹配。",
    "%(n)s match for the TAN “%(title)s” was recorded": "已记录招聘申请“%(title)s”的 %(n)s 个匹配",
    "Verified the group “%(name)s”: %(count)s item.": "已核验薪资组“%(name)s”：%(count)s 个项目。",
    "with the attachment %(name)s (%(rows)s row)": "附带附件 %(name)s（%(rows)s 行）",
})
