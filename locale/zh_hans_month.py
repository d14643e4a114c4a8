"""Chinese for the payroll month's words (its card, tools, API refusals, models)."""
ZH = {
    "missing this month": "本月缺少",
    "net pay up more than 20 %": "实发工资上升超过20%",
    "net pay down more than 20 %": "实发工资下降超过20%",
    "an input missing": "缺少一项数据",
    "no inputs row": "无考勤/业绩数据行",
    "Employer contributions": "单位缴纳",
    "Against %(period)s, the last closed month; %(n)s flagged": "与上一个已关账月份 %(period)s 相比；%(n)s 项异常",
    "No earlier closed month to compare with; %(n)s flagged": "没有更早的已关账月份可比较；%(n)s 项异常",
    "Previous net": "上月实发",
    "Change": "变化",
    "Flags": "标记",
    "Sample payslip": "工资条样例",
    "Every item of %(name)s's payslip, with its formula": "%(name)s 工资条的每一项及其公式",
    "Tax continues from the previous payroll system's year-to-date figures for %(n)s employees.":
        "%(n)s 名员工的个税从原薪资系统的本年累计数据继续累计预扣。",
    "Tax continues from this year's closed months for %(n)s employees.":
        "%(n)s 名员工的个税从本年已关账月份继续累计预扣。",
    "%(n)s employees have no year-to-date figures and no closed month this year: each is treated as having "
    "joined this month, so the cumulative basic deduction counts from this month (5,000 a month) and no earlier "
    "income or tax is counted; import the year-to-date figures if they were paid earlier this year.":
        "%(n)s 名员工没有本年累计数据，本年也没有已关账月份：按本月入职处理，累计减除费用从本月起算（每月5,000元），"
        "不计此前的收入和已缴税额；如本年此前已发薪，请导入本年累计数据。",
    "No salary, so no payslip: %(names)s.": "没有工资，因此没有工资条：%(names)s。",
    "Columns of the inputs file that were not read: %(columns)s.": "数据文件中未读取的列：%(columns)s。",
    "What the computation started from": "计算的起点",
    "%(group)s, %(period)s: the payroll to close": "%(group)s，%(period)s：待关账的薪资",
    "Inputs version %(version)s": "数据版本 %(version)s",
    "No inputs imported: every input computed as zero": "未导入数据：所有数据按零计算",
    "Change per employee": "每位员工的变化",
    "Sample payslips": "工资条样例",
    "The %(kind)s becomes void": "%(kind)s 作废",
    "%(n)s payslips go back to draft": "%(n)s 张工资条退回草稿",
    "%(period)s must compute again before it can close": "%(period)s 须重新计算后才能关账",
    "Reopen %(group)s, %(period)s": "重新打开 %(group)s，%(period)s",
    "Reason: %(reason)s": "原因：%(reason)s",
    "No attendance or sales figures are imported for %(group)s, %(period)s, and its items read %(inputs)s. Import "
    "them on the month's page and answer “done”, or answer “compute without inputs” to compute them as zero.":
        "%(group)s %(period)s 尚未导入考勤或销售数据，而其薪资项目需要 %(inputs)s。请在该月页面导入后回复“已导入”，"
        "或回复“不导入，直接计算”按零计算。",
    "Compute without inputs": "不导入，直接计算",
    "Done, they are imported": "已导入",
    "The month's page": "该月页面",
    "No inputs imported: %(inputs)s are computed as zero, as asked.": "未导入数据：按要求将 %(inputs)s 按零计算。",
    "The group's items read no monthly inputs.": "该薪资组的项目不需要月度数据。",
    "Inputs version %(version)s: %(rows)s employees' figures.": "数据版本 %(version)s：%(rows)s 名员工的数据。",
    "Gather the month's inputs": "收集本月数据",
    "Compute the payroll month": "计算月度薪资",
    "Computed %(n)s payslips: gross %(gross)s, tax %(tax)s, net %(net)s.":
        "已计算 %(n)s 张工资条：应发 %(gross)s，个税 %(tax)s，实发 %(net)s。",
    "Close %(group)s's payroll for %(period)s: %(n)s payslips, net pay %(net)s %(currency)s, tax %(tax)s.":
        "关账 %(group)s %(period)s 的薪资：%(n)s 张工资条，实发 %(net)s %(currency)s，个税 %(tax)s。",
    "Close the payroll month": "月度薪资关账",
    "Closed the month: payslips final, the bank file and the tax declaration written.":
        "已关账：工资条定稿，已生成银行代发文件和个税申报表。",
    "Verify the payroll month's files": "核对月度薪资文件",
    "The bank file pays %(net)s to %(n)s people and the declaration withholds %(tax)s: both equal the payslips.":
        "银行文件向 %(n)s 人支付 %(net)s，申报表预扣个税 %(tax)s：均与工资条一致。",
    "Reopen %(group)s's closed payroll for %(period)s: its files become void and its payslips drafts again.":
        "重新打开 %(group)s %(period)s 已关账的薪资：文件作废，工资条退回草稿。",
    "Reopen a closed payroll month": "重新打开已关账的薪资月",
    "Reopened the month: its files are void and its payslips drafts.": "已重新打开该月：文件已作废，工资条为草稿。",
    "open": "未开始",
    "computed": "已计算",
    "awaiting approval": "待审批",
    "closed": "已关账",
    "reopened": "已重新打开",
    "payroll month": "薪资月",
    "payroll months": "薪资月",
    "draft": "草稿",
    "final": "定稿",
    "void": "作废",
    "payslip": "工资条",
    "payslips": "工资条",
    "bank payment file (CSV)": "银行代发文件（CSV）",
    "bank payment file (XLSX)": "银行代发文件（XLSX）",
    "income tax withholding declaration (XLSX)": "个人所得税扣缴申报表（XLSX）",
    "current": "当前",
    "month file": "月度文件",
    "month files": "月度文件",
    "month transition": "薪资月状态变更",
    "month transitions": "薪资月状态变更",
    "The files exist for a closed month only; this one is %(status)s.": "只有已关账的月份才有文件；该月状态为 %(status)s。",
    "This month has no such file.": "该月没有此文件。",
    "This month is closed: reopen it before importing new inputs.": "该月已关账：请先重新打开再导入新数据。",
    "format must be csv or xlsx.": "format 必须是 csv 或 xlsx。",
    "This group's month %(year)s-%(month)02d exists already; open it instead.":
        "该薪资组的 %(year)s-%(month)02d 月已存在，请直接打开。",
    "No payroll group %(id)s in your tenant.": "您的租户中没有薪资组 %(id)s。",
    "Only a tenant admin may reopen a closed month.": "只有租户管理员可以重新打开已关账的月份。",
    "Say why the month is reopened.": "请说明重新打开该月的原因。",
    "The reason is longer than %(n)s characters.": "原因超过 %(n)s 个字符。",
    "No payroll month %(id)s in your tenant.": "您的租户中没有薪资月 %(id)s。",
    "Only a closed month can be reopened; this one is %(status)s.": "只有已关账的月份可以重新打开；该月状态为 %(status)s。",
    # What a month's run tells its conversation (payroll/agent/month_news.py)
    "the payroll of “%(name)s” for %(period)s": "“%(name)s”%(period)s 的工资",
    "Reopening %(what)s is waiting for %(who)s to approve it.": "重新打开%(what)s正在等待 %(who)s 审批。",
    "Closing %(what)s is waiting for %(who)s to approve it: %(n)s employees, gross %(gross)s, employer cost %(cost)s, tax %(tax)s, net %(net)s (CNY); %(anomalies)s flagged for a look.":
        "%(what)s关账正在等待 %(who)s 审批：%(n)s 名员工，应发 %(gross)s，企业成本 %(cost)s，个税 %(tax)s，实发 %(net)s（人民币）；%(anomalies)s 项标记待查看。",
    "The month stays closed as it was.": "该月仍保持原来的关账状态。",
    "The month is open again with its payslips as drafts: fix its inputs and start it again.":
        "该月已重新打开，工资条仍为草稿：请修正数据后重新运行。",
    "Done: %(what)s is reopened; its files are void and its payslips drafts again. Compute and close it again when it is fixed.":
        "完成：%(what)s已重新打开；其文件已作废，工资条恢复为草稿。修正后请重新计算并关账。",
    "Done: %(what)s is closed — net pay %(net)s CNY for %(n)s employees. Files: %(files)s.":
        "完成：%(what)s已关账——%(n)s 名员工实发合计 %(net)s 元。文件：%(files)s。",
}
