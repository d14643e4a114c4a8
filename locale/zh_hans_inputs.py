"""Chinese for the month's data: attendance rules, monthly inputs, year-to-date openings, ID and
bank details (scripts/i18n_fill.py reads it after zh_hans_strings.py)."""
ZH = {
    "Resident identity card": "居民身份证",
    "Passport": "护照",
    "Mainland travel permit for Hong Kong and Macao residents": "港澳居民来往内地通行证",
    "Mainland travel permit for Taiwan residents": "台湾居民来往大陆通行证",
    "Foreigner's permanent residence ID card": "外国人永久居留身份证",
    "attendance rules": "考勤规则",
    "monthly inputs": "月度数据",
    "monthly input row": "月度数据行",
    "monthly input rows": "月度数据行",
    "year-to-date opening": "年初累计数",
    "year-to-date openings": "年初累计数",
    "Only a tenant admin may change the attendance rules.": "只有租户管理员可以修改考勤规则。",
    "Attach the file (CSV or XLSX) as the multipart field “file”.": "请以 multipart 字段“file”附上文件（CSV 或 XLSX）。",
    "Hours a day": "每日工时",
    "Hours a week": "每周工时",
    "Paid days a month": "月计薪天数",
    "Overtime on workdays (× hourly wage)": "工作日加班（× 小时工资）",
    "Overtime on rest days (× hourly wage)": "休息日加班（× 小时工资）",
    "Overtime on statutory holidays (× hourly wage)": "法定节假日加班（× 小时工资）",
    "Absence deduction (× daily wage per unpaid day)": "缺勤扣款（每个无薪日 × 日工资）",
    "Sick-leave pay (share of the daily wage)": "病假工资（日工资的比例）",
    "Why (shown in the history)": "修改原因（显示在历史记录中）",
    "A date between 2000-01-01 and 2100-12-31.": "请填写 2000-01-01 至 2100-12-31 之间的日期。",
    "Attendance rules from %(date)s are saved.": "自 %(date)s 起的考勤规则已保存。",
    "Inputs of %(year)s-%(month)02d imported: version %(version)s, %(rows)s rows.":
        "%(year)s-%(month)02d 的月度数据已导入：第 %(version)s 版，共 %(rows)s 行。",
    "Year-to-date figures of %(count)s employees imported for %(year)s.": "已导入 %(count)s 名员工 %(year)s 年的年初累计数。",
    "Only a tenant admin may import ID and bank details.": "只有租户管理员可以导入证件和银行信息。",
    "ID and bank details of %(count)s employees imported.": "已导入 %(count)s 名员工的证件和银行信息。",
    "Attach a CSV or XLSX file (.csv or .xlsx).": "请附上 CSV 或 XLSX 文件（.csv 或 .xlsx）。",
    "the header needs an employee number (工号) or a name (姓名) column.": "表头需要有“工号”或“姓名”列。",
    "the header names none of the figures this file is for.": "表头中没有本文件所需的任何数据列。",
    "the file has a header but no rows.": "文件只有表头，没有数据行。",
    "No employee with number “%(value)s”.": "没有工号为“%(value)s”的员工。",
    "No employee named “%(name)s”; give the employee number.": "没有名为“%(name)s”的员工，请填写工号。",
    "Several employees are named “%(name)s”; give the employee number.": "有多名员工叫“%(name)s”，请填写工号。",
    "The row names no employee (no number, no name).": "这一行没有员工（既无工号也无姓名）。",
    "This employee is already in an earlier row.": "这名员工在前面的行中已经出现过。",
    "“%(value)s” is not a number.": "“%(value)s”不是数字。",
    "%(value)s is negative; a figure here is 0 or more.": "%(value)s 是负数；此处的数值必须大于或等于 0。",
    "%(value)s is too large.": "%(value)s 太大了。",
    "This employee is not in the group.": "这名员工不在该薪资组中。",
    "%(absent)s absent days (personal and sick leave) but the month has %(days)s days.":
        "缺勤 %(absent)s 天（事假加病假），但该月只有 %(days)s 天。",
    "%(hours)s hours but the month has %(max)s hours.": "%(hours)s 小时，但该月只有 %(max)s 小时。",
    "This figure is required.": "此项必填。",
    "Months employed is a whole number from 0 to 11; %(value)s is refused.": "已任职月数必须是 0 到 11 的整数；%(value)s 无效。",
    "Not an ID type the tax declaration knows (居民身份证, 护照, …).": "不是个税申报认可的证件类型（居民身份证、护照等）。",
    "An ID number needs its ID type.": "填写证件号码时需要同时填写证件类型。",
    "Not a valid resident ID number (18 characters; the last is a check character).":
        "不是有效的居民身份证号码（18 位，最后一位为校验码）。",
    "Not a valid ID number (5 to 40 letters and digits).": "不是有效的证件号码（5 到 40 位字母和数字）。",
    "Not a bank account number (8 to 30 digits).": "不是有效的银行账号（8 到 30 位数字）。",
    "A bank account needs its bank's name.": "填写银行账号时需要同时填写开户银行。",
    "Unknown attendance term: %(names)s.": "未知的考勤条款：%(names)s。",
    "%(field)s: “%(value)s” is not a number with at most four decimals.": "%(field)s：“%(value)s”不是最多四位小数的数字。",
    "%(field)s must be between %(low)s and %(high)s; %(value)s is refused.":
        "%(field)s 必须在 %(low)s 到 %(high)s 之间；%(value)s 无效。",
    "Attendance rules from %(date)s are already saved; a change takes effect on a later date.":
        "自 %(date)s 起的考勤规则已经保存；修改请选择更晚的生效日期。",
    "effective_from must be a date between 2000-01-01 and 2100-12-31.": "生效日期必须在 2000-01-01 至 2100-12-31 之间。",
    "hours_per_day × 5 days may not exceed hours_per_week by more than 20 hours.": "每日工时 × 5 天不得超过每周工时 20 小时以上。",
    "Attach the file (CSV or XLSX).": "请附上文件（CSV 或 XLSX）。",
    "%(field)s must be a whole number from %(low)s to %(high)s.": "%(field)s 必须是 %(low)s 到 %(high)s 之间的整数。",
    "%(count)s refusal in the file; nothing was imported. Correct the file and import it again.":
        "文件中有 %(count)s 处被拒绝；未导入任何数据。请修改文件后重新导入。",
    "Only an approver or a tenant admin may import year-to-date figures.": "只有审批人或租户管理员可以导入年初累计数。",
    "Only a tenant admin may replace year-to-date figures already imported.": "只有租户管理员可以替换已导入的年初累计数。",
    "This employee's figures for %(year)s are already imported; a tenant admin may replace them.":
        "这名员工 %(year)s 年的累计数已经导入；租户管理员可以替换。",
    "Monthly inputs": "月度数据",
    "Attendance and commission for a month: a CSV or XLSX with Employee No and any of Personal leave days, Sick "
    "leave days, Workday overtime hours, Rest day overtime hours, Holiday overtime hours, Sales amount, Other (an "
    "HR export's Chinese headers are read too). A file with any refused row imports nothing; a second file for the "
    "month is a new version.":
        "某月的考勤和提成数据：CSV 或 XLSX 文件，包含工号以及事假天数、病假天数、工作日加班小时、休息日加班小时、"
        "节假日加班小时、销售额、其他中的任意列。只要有一行被拒绝，整个文件都不会导入；同一月份再次导入会生成新版本。",
    "Row": "行",
    "Column": "列",
    "Problem": "问题",
    "Columns not read as an input (kept with each row):": "未识别为数据项的列（随每行保留）：",
    "File": "文件",
    "Import the inputs": "导入月度数据",
    "Version": "版本",
    "Rows": "行数",
    "Unknown columns": "未识别的列",
    "Imported": "导入",
    "version %(n)s": "第 %(n)s 版",
    "No inputs imported yet.": "尚未导入月度数据。",
    "Attendance rules": "考勤规则",
    "The working-hours system and the overtime, absence and sick-leave terms every payroll month of this tenant "
    "computes with.": "本租户每个薪资月计算所用的工时制度以及加班、缺勤和病假条款。",
    "In force since %(start)s": "自 %(start)s 起生效",
    "The statutory defaults: no change has been saved.": "法定默认值：尚未保存任何修改。",
    "What the law says": "法律规定",
    "Labour Law of the PRC, art. 44: overtime is paid at no less than 150 %% of the wage on a workday, 200 %% on a "
    "rest day when no time off in lieu is given, and 300 %% on a statutory holiday.":
        "《中华人民共和国劳动法》第四十四条：工作日延长工作时间的，支付不低于工资 150 %% 的报酬；休息日安排工作又不能"
        "安排补休的，支付不低于工资 200 %% 的报酬；法定休假日安排工作的，支付不低于工资 300 %% 的报酬。",
    "Hourly wage = monthly base ÷ %(days)s ÷ %(hours)s (for a base of %(base)s: %(hourly)s).":
        "小时工资 = 月基本工资 ÷ %(days)s ÷ %(hours)s（基本工资为 %(base)s 时：%(hourly)s）。",
    "Daily wage = monthly base ÷ %(days)s (for a base of %(base)s: %(daily)s); an unpaid day deducts the daily wage "
    "times the absence deduction rate.":
        "日工资 = 月基本工资 ÷ %(days)s（基本工资为 %(base)s 时：%(daily)s）；每个无薪日扣除日工资 × 缺勤扣款比例。",
    "Changed by": "修改人",
    "No change saved yet: the statutory defaults apply.": "尚未保存修改：适用法定默认值。",
    "Change the terms from a date": "从某日起修改条款",
    "A change is a new row from its date on: months before it keep the terms that were in force then.":
        "每次修改都是从生效日期起的新记录：之前的月份仍按当时有效的条款计算。",
    "Save these terms": "保存这些条款",
    "ID": "证件",
    "not given": "未提供",
    "Bank account": "银行账号",
    "Back to the group": "返回薪资组",
    "Year-to-date figures": "年初累计数",
    "Year-to-date figures, %(year)s": "%(year)s 年年初累计数",
    "For a customer that starts mid-year: each employee's figures from the previous payroll system, so the "
    "cumulative withholding continues from them.": "适用于年中开始使用的客户：每名员工在原薪资系统中的累计数，累计预扣法从这些数继续计算。",
    "Months employed": "已任职月数",
    "Cumulative income": "累计收入额",
    "Cumulative special deductions": "累计专项扣除",
    "Cumulative special additional deductions": "累计专项附加扣除",
    "Tax already withheld": "累计已预缴税额",
    "No year-to-date figures for %(year)s: a month treats each employee as having joined this year in that month.":
        "%(year)s 年没有年初累计数：薪资月会把每名员工视为当年于该月入职。",
    "Row %(row)s, column %(column)s: %(message)s": "第 %(row)s 行，“%(column)s”列：%(message)s",
    "File (工号, 累计收入额, 累计专项扣除, 累计专项附加扣除, 已任职月数, 累计已预缴税额)":
        "文件（工号、累计收入额、累计专项扣除、累计专项附加扣除、已任职月数、累计已预缴税额）",
    "Replace figures already imported": "替换已导入的累计数",
    "Import the figures": "导入累计数",
    "ID and bank details": "证件和银行信息",
    "The list's ID and bank columns (%(columns)s) are not taken in the chat: an admin imports them from the same "
    "file under “ID and bank details” on the year-to-date figures page.":
        "名单中的证件和银行列（%(columns)s）不在聊天中导入：管理员可在“年初累计数”页面的“证件和银行信息”处从同一文件导入。",
    "From the HR export: 工号 with 证件类型, 证件号码, 银行账号, 开户银行 (ID type, ID number, Bank account, Bank "
    "name). Only tenant admins see the numbers; everyone else sees the last four characters.":
        "来自 HR 导出文件：工号及证件类型、证件号码、银行账号、开户银行。只有租户管理员能看到完整号码；其他人只能看到最后四位。",
    "Import ID and bank details": "导入证件和银行信息",
}
