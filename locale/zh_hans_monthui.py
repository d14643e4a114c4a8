"""Chinese for the payroll month as people see it: the month page, the payslip of a month, the
group page's months, and the chat's month requests."""
ZH = {
    "April": "4月", "May": "5月", "June": "6月", "July": "7月", "August": "8月", "September": "9月",
    "October": "10月", "November": "11月", "December": "12月",
    "%(month)s %(year)s": "%(year)s年%(month)s",
    "a question about the month was open; this message answers it": "关于发薪月份的问题尚未回答；这条消息回答了它",
    "no payroll group to run a month for": "没有可以发薪的薪资组",
    "There is no payroll group to run a month for yet. Set one up first, for example: “set up a monthly payroll "
    "group for our Shanghai sales team with commission”.":
        "还没有可以发薪的薪资组。请先创建一个，例如：“为我们上海销售团队设置一个含提成的月度薪资组”。",
    "the request names no group this tenant has: ask which": "请求没有指明本租户的哪个薪资组：询问是哪一个",
    "Which group's payroll for %(period)s? Pick one, or type its name.": "要发哪个薪资组%(period)s的工资？请选择一个，或输入它的名称。",
    "the month may be last year's or this year's: ask which": "该月份可能是去年的也可能是今年的：询问是哪一年",
    "%(month)s of which year for “%(group)s”?": "“%(group)s”是哪一年的%(month)s？",
    "that month of the group exists already: say so, start nothing": "该薪资组的这个月份已存在：说明情况，不重复发起",
    "The payroll of “%(group)s” for %(period)s exists already (%(status)s): open it on the group's page, %(url)s.":
        "“%(group)s”%(period)s的工资已存在（%(status)s）：请在薪资组页面打开它，%(url)s。",
    "the group and the month are known: the month's workflow starts": "薪资组和月份均已明确：开始本月发薪流程",
    "Running the payroll of “%(group)s” for %(period)s: I gather the month's attendance and sales, compute every "
    "payslip and ask an approver before the month closes with the bank file and the tax declaration.":
        "开始发放“%(group)s”%(period)s的工资：我会收集本月考勤和业绩数据，计算每位员工的工资条，并在关账（生成银行代发文件和个税申报表）前请审批人审批。",
    "The reopen of “%(name)s”, %(period)s": "重新打开“%(name)s”%(period)s",
    "The payroll of “%(name)s”, %(period)s": "“%(name)s”%(period)s的工资",
    "Personal leave days": "事假天数", "Sick leave days": "病假天数", "Workday overtime hours": "工作日加班小时",
    "Rest-day overtime hours": "休息日加班小时", "Holiday overtime hours": "节假日加班小时", "Sales amount": "销售额",
    "Other amount": "其他",
    "Net pay": "实发工资",
    "The payroll of %(year)s-%(month)02d has started: Keel gathers the inputs, computes every payslip and asks an "
    "approver before it closes.": "%(year)s-%(month)02d 的发薪已开始：Keel 收集本月数据、计算每张工资条，并在关账前请审批人审批。",
    "The reopen of %(year)s-%(month)02d waits for an approver; once approved its files are void and its payslips "
    "drafts again.": "重新打开 %(year)s-%(month)02d 正在等待审批；批准后其文件作废，工资条恢复为草稿。",
    "Cumulative basic deduction": "累计减除费用", "Quick deduction": "速算扣除数", "Cumulative tax": "累计应纳税额",
    "Tax withheld before this month": "本月前已预扣预缴税额", "Tax this month": "本月应预扣预缴税额",
    "Payroll months": "发薪月份", "Run a month": "发放一个月的工资", "computes again": "需重新计算",
    "No month run yet.": "还没有发过任何月份的工资。",
    "Payroll of %(name)s, %(year)s-%(month)s": "%(name)s %(year)s-%(month)s 的工资",
    "An earlier month was reopened: this month computes again before it can close.":
        "之前的月份已被重新打开：本月须重新计算后才能关账。",
    "Inputs": "月度数据", "none imported": "未导入", "Its run": "查看运行", "Waiting for an approver": "等待审批人审批",
    "Closed %(at)s": "%(at)s 关账", "Reopened %(at)s": "%(at)s 重新打开", "Totals": "合计",
    "Not computed yet: the run computes every payslip once the month's inputs are in.":
        "尚未计算：本月数据就绪后，运行会计算每张工资条。",
    "%(n)s employee has no earlier month this year and no year-to-date opening: the tax is withheld as if they "
    "joined this month (the basic deduction counts from this month).":
        "%(n)s 名员工本年没有更早的月份，也没有本年累计期初数据：个税按本月入职预扣（减除费用从本月起算）。",
    "Payslips": "工资条", "Contributions": "个人缴费", "inputs missing": "缺少数据", "Total": "合计",
    "No payslips yet.": "还没有工资条。", "Files": "文件", "Checksum (SHA-256)": "校验和（SHA-256）",
    "The bank payment file and the tax declaration are written when the month closes.":
        "银行代发文件和个税申报表在关账时生成。",
    "%(n)s void file (before a reopen)": "%(n)s 个已作废文件（重新打开之前）",
    "Reopen": "重新打开",
    "Reopening voids the files and makes the payslips drafts again; the group's later months compute again before "
    "they close. A second person approves it.":
        "重新打开会作废文件并将工资条恢复为草稿；该薪资组之后的月份须重新计算后才能关账。需由另一人审批。",
    "Ask to reopen": "申请重新打开", "Payslip": "工资条", "ID number": "证件号码",
    "ID and account numbers show their last four characters: only a tenant admin, or an approver deciding the "
    "month, reads them whole.": "证件号码和银行账号只显示末四位：只有租户管理员或正在审批本月的审批人才能看到完整号码。",
    "The month's inputs": "本月数据", "No inputs were imported for this employee this month.": "本月没有为该员工导入数据。",
    "Income tax, cumulative withholding": "个人所得税（累计预扣法）", "Print": "打印",
    "Import the month's inputs": "导入本月数据",
}
