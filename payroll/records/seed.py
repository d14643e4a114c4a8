"""Demo data for the payroll system of record: the global template catalog and the
demo tenants' employees. Idempotent: templates are keyed on (code, version) and
employees on (tenant, employee_no), so a second run changes nothing."""
from decimal import Decimal

from tenants.models import Tenant

from .evaluator import Item, structure
from payroll.models import Employee, ItemKind, PayFrequency, PayrollTemplate, TemplateItem

E, D, C, T = ItemKind.EARNING, ItemKind.DEDUCTION, ItemKind.EMPLOYER_CONTRIBUTION, ItemKind.TAX
CN_VARS = ["base_salary", "contribution_base", "housing_fund_base", "gross_pay"]
# The month's inputs an attendance and sales import gives (payroll.records.month_inputs' names).
MONTH_INPUTS = ["sales_amount", "overtime_workday_hours", "overtime_restday_hours", "overtime_holiday_hours",
                "personal_leave_days", "sick_leave_days"]


def item(code: str, name: str, name_zh: str, kind: str, *, rate: str | None = None, base: str = "",
         formula: str = "", rate_name: str = "") -> dict:
    return {"code": code, "name": name, "name_zh": name_zh, "kind": kind,
            "rate": None if rate is None else Decimal(rate), "base": base, "formula": formula, "rate_name": rate_name}


def _insured(kind: str, side: str, name: str, name_zh: str) -> dict:
    """One share of an insurance or the housing fund: the kind's base (clamped to the city's
    floor and cap) × the city's rate for that side; the rates are the city rules', not the template's."""
    return item(f"{kind}_{'ee' if side == 'employee' else 'er'}", name, name_zh, D if side == "employee" else C,
                base=f"{kind}_base", rate_name=f"{kind}_{side}_rate")


# The five insurances and one fund (五险一金), employee and employer shares, at the rates of the
# group's city (payroll.rules): a template is a structure, a city is a rule set.
CN_SOCIAL = [
    _insured("pension", "employee", "Pension insurance (employee)", "养老保险（个人）"),
    _insured("medical", "employee", "Medical insurance (employee)", "医疗保险（个人）"),
    _insured("unemployment", "employee", "Unemployment insurance (employee)", "失业保险（个人）"),
    _insured("housing_fund", "employee", "Housing provident fund (employee)", "住房公积金（个人）"),
    _insured("pension", "employer", "Pension insurance (employer)", "养老保险（单位）"),
    _insured("medical", "employer", "Medical insurance (employer)", "医疗保险（单位）"),
    _insured("unemployment", "employer", "Unemployment insurance (employer)", "失业保险（单位）"),
    _insured("injury", "employer", "Work injury insurance (employer)", "工伤保险（单位）"),
    _insured("maternity", "employer", "Maternity insurance (employer)", "生育保险（单位）"),
    _insured("housing_fund", "employer", "Housing provident fund (employer)", "住房公积金（单位）"),
]


def cn_iit(income: str = "gross_pay") -> dict:
    """Individual income tax by the cumulative withholding method on the annual table (3–45 %,
    5,000 a month basic deduction), over the tax year's months so far."""
    return item("iit", "Individual income tax", "个人所得税", T,
                formula=f"cumulative_tax({income}, employee_contributions, special_additional_deductions)")


CN_IIT = cn_iit()
BASE_PAY = item("base_pay", "Base salary", "基本工资", E, rate="1", base="base_salary")
ALLOWANCES = item("allowances_pay", "Fixed allowances", "固定津贴", E, formula="allowances")

TEMPLATES: list[dict] = [
    {"code": "cn-sh-monthly-salaried", "name": "Shanghai monthly salaried staff", "name_zh": "上海月薪员工",
     "region": "CN-Shanghai", "frequency": PayFrequency.MONTHLY, "currency": "CNY", "variables": CN_VARS,
     "description": "Monthly salaried staff in Shanghai: pension, medical and unemployment insurance, work injury, "
                    "housing fund at 7%, and individual income tax. 上海月薪员工：五险一金（公积金7%）及个人所得税。",
     "items": [BASE_PAY, ALLOWANCES, *CN_SOCIAL, CN_IIT]},
    {"code": "cn-bj-monthly-salaried", "name": "Beijing monthly salaried staff", "name_zh": "北京月薪员工",
     "region": "CN-Beijing", "frequency": PayFrequency.MONTHLY, "currency": "CNY", "variables": CN_VARS,
     "description": "Monthly salaried staff in Beijing: social insurance, housing fund at 12%, individual income "
                    "tax. 北京月薪员工：社保、公积金12%及个人所得税。",
     "items": [BASE_PAY, ALLOWANCES, *CN_SOCIAL, CN_IIT]},
    {"code": "cn-sz-monthly-salaried", "name": "Shenzhen monthly salaried staff", "name_zh": "深圳月薪员工",
     "region": "CN-Shenzhen", "frequency": PayFrequency.MONTHLY, "currency": "CNY", "variables": CN_VARS,
     "description": "Monthly salaried staff in Shenzhen: social insurance (tier-1 medical), housing fund at 5%, "
                    "individual income tax. 深圳月薪员工：社保（一档医疗）、公积金5%及个人所得税。",
     "items": [BASE_PAY, ALLOWANCES, *CN_SOCIAL, CN_IIT]},
    {"code": "cn-gz-monthly-salaried", "name": "Guangzhou monthly salaried staff", "name_zh": "广州月薪员工",
     "region": "CN-Guangzhou", "frequency": PayFrequency.MONTHLY, "currency": "CNY", "variables": CN_VARS,
     "description": "Monthly salaried staff in Guangzhou with social insurance and a 5% housing fund. "
                    "广州月薪员工：五险一金及个人所得税。",
     "items": [BASE_PAY, ALLOWANCES, *CN_SOCIAL, CN_IIT]},
    {"code": "cn-sh-hourly-shift", "name": "Shanghai hourly shift workers with overtime",
     "name_zh": "上海小时工（轮班，含加班）", "region": "CN-Shanghai", "frequency": PayFrequency.MONTHLY,
     "currency": "CNY", "variables": [*CN_VARS, "hourly_rate", "regular_hours", "weekday_overtime_hours",
                                      "rest_day_overtime_hours", "holiday_overtime_hours", "night_shifts"],
     "description": "Hourly shift workers paid monthly: overtime at 150% on weekdays, 200% on rest days and 300% on "
                    "public holidays, a night-shift allowance. 小时工：工作日加班1.5倍、休息日2倍、法定节假日3倍，夜班津贴。",
     "items": [
         item("hourly_pay", "Hourly pay", "计时工资", E, formula="hourly_rate * regular_hours"),
         item("ot_weekday", "Weekday overtime (150%)", "工作日加班费（150%）", E,
              formula="hourly_rate * weekday_overtime_hours * 1.5"),
         item("ot_rest_day", "Rest-day overtime (200%)", "休息日加班费（200%）", E,
              formula="hourly_rate * rest_day_overtime_hours * 2"),
         item("ot_holiday", "Public holiday overtime (300%)", "法定节假日加班费（300%）", E,
              formula="hourly_rate * holiday_overtime_hours * 3"),
         item("night_allowance", "Night-shift allowance", "夜班津贴", E, formula="night_shifts * 30"),
         *CN_SOCIAL, CN_IIT]},
    {"code": "cn-sz-factory-shift", "name": "Shenzhen factory shift workers", "name_zh": "深圳工厂倒班工人",
     "region": "CN-Shenzhen", "frequency": PayFrequency.MONTHLY, "currency": "CNY",
     "variables": [*CN_VARS, "hourly_rate", "weekday_overtime_hours", "rest_day_overtime_hours", "meal_days"],
     "description": "Production-line workers on the Shenzhen minimum-wage base with overtime and a meal allowance. "
                    "深圳生产线倒班工人：加班费与餐补。",
     "items": [BASE_PAY, ALLOWANCES,
               item("ot_weekday", "Weekday overtime (150%)", "工作日加班费（150%）", E,
                    formula="hourly_rate * weekday_overtime_hours * 1.5"),
               item("ot_rest_day", "Rest-day overtime (200%)", "休息日加班费（200%）", E,
                    formula="hourly_rate * rest_day_overtime_hours * 2"),
               item("meal_allowance", "Meal allowance", "餐费补贴", E, formula="meal_days * 15"),
               *CN_SOCIAL, CN_IIT]},
    {"code": "cn-sales-commission", "name": "Sales staff with commission", "name_zh": "销售人员（含提成）",
     "region": "CN-Shanghai", "frequency": PayFrequency.MONTHLY, "currency": "CNY",
     "variables": [*CN_VARS, "sales_amount", "quota"],
     "description": "Base salary plus 3% commission on sales and a 2% accelerator above quota. "
                    "销售人员：底薪加3%销售提成，超额部分另加2%。",
     "items": [BASE_PAY, ALLOWANCES,
               item("commission", "Sales commission (3%)", "销售提成（3%）", E, rate="0.03", base="sales_amount"),
               item("accelerator", "Above-quota accelerator (2%)", "超额提成（2%）", E, rate="0.02",
                    base="max(0, sales_amount - quota)"),
               *CN_SOCIAL, CN_IIT]},
    {"code": "cn-sh-sales-attendance", "name": "Shanghai sales — commission, overtime and absence",
     "name_zh": "上海销售（提成、加班与缺勤）", "region": "CN-Shanghai", "frequency": PayFrequency.MONTHLY,
     "currency": "CNY", "variables": [*CN_VARS, *MONTH_INPUTS],
     "description": "Shanghai sales staff paid from the month's attendance and sales: 3% commission, overtime at "
                    "150/200/300% of the hourly wage (base ÷ 21.75 ÷ 8), a day's wage deducted per day of personal "
                    "leave, sick days at the sick-leave rate. 上海销售：3%提成，加班费按小时工资的150%/200%/300%，"
                    "事假按日工资扣减，病假按病假工资比例。",
     # The attendance names (hourly_wage, the rates…) are the tenant's attendance rules in force,
     # never figures of the template; the hours and days are the month's inputs.
     "items": [BASE_PAY,
               item("commission", "Sales commission (3%)", "销售提成（3%）", E, rate="0.03", base="sales_amount"),
               item("ot_workday", "Workday overtime (150%)", "工作日加班费（150%）", E,
                    formula="overtime_workday_hours * hourly_wage * overtime_workday_rate"),
               item("ot_restday", "Rest-day overtime (200%)", "休息日加班费（200%）", E,
                    formula="overtime_restday_hours * hourly_wage * overtime_restday_rate"),
               item("ot_holiday", "Statutory holiday overtime (300%)", "法定节假日加班费（300%）", E,
                    formula="overtime_holiday_hours * hourly_wage * overtime_holiday_rate"),
               # Earnings with a minus sign, not deductions: they lower the taxable income, and
               # "deduction" items are the special deductions (social insurance, housing fund).
               item("absence_deduction", "Personal leave deduction", "事假扣款", E,
                    formula="-personal_leave_days * daily_wage * absence_deduction_rate"),
               item("sick_leave_pay", "Sick leave (paid at the sick-leave rate)", "病假工资（按病假工资比例）", E,
                    formula="-sick_leave_days * daily_wage * (1 - sick_leave_pay_rate)"),
               *CN_SOCIAL, CN_IIT]},
    {"code": "cn-executive-annual-bonus", "name": "Executives with annual bonus", "name_zh": "高管（含年终奖）",
     "region": "CN-Beijing", "frequency": PayFrequency.MONTHLY, "currency": "CNY",
     "variables": [*CN_VARS, "annual_bonus", "bonus_tax_rate", "bonus_quick_deduction"],
     "description": "Executives in Beijing: monthly salary, Beijing social insurance and an annual bonus taxed "
                    "separately. 北京高管：月薪、社保及单独计税的全年一次性奖金。",
     # The bonus comes before the tax that leaves it out (an import checks each item against those before it).
     "items": [BASE_PAY, ALLOWANCES,
               item("annual_bonus_pay", "Annual bonus", "全年一次性奖金", E, rate="1", base="annual_bonus"),
               *CN_SOCIAL, cn_iit("gross_pay - annual_bonus_pay"),
               item("annual_bonus_tax", "Annual bonus tax (separate)", "年终奖个税（单独计税）", T,
                    formula="annual_bonus * bonus_tax_rate - bonus_quick_deduction")]},
    {"code": "cn-intern", "name": "Interns (labour remuneration)", "name_zh": "实习生（劳务报酬）",
     "region": "CN", "frequency": PayFrequency.MONTHLY, "currency": "CNY",
     "variables": ["daily_rate", "days_worked"],
     "description": "Student interns paid a daily rate; no social insurance; 20% withholding on labour remuneration "
                    "above 800 CNY. 实习生：按日计薪，不缴社保，劳务报酬预扣个税。",
     "items": [item("intern_pay", "Intern daily pay", "实习日薪", E, formula="daily_rate * days_worked"),
               item("labour_tax", "Labour remuneration withholding", "劳务报酬预扣个税", T,
                    formula="max(0, intern_pay - 800) * 0.2")]},
    {"code": "sg-monthly-cpf", "name": "Singapore monthly salaried with CPF", "name_zh": "新加坡月薪员工（中央公积金）",
     "region": "SG", "frequency": PayFrequency.MONTHLY, "currency": "SGD",
     "variables": ["base_salary", "ordinary_wages", "sdl_wages"],
     "description": "Singapore citizens and PRs aged 55 and below: CPF at 20% employee and 17% employer on ordinary "
                    "wages, Skills Development Levy. 新加坡：中央公积金个人20%、雇主17%，技能发展税。",
     "items": [BASE_PAY,
               item("cpf_ee", "CPF (employee, 20%)", "公积金（个人20%）", D, rate="0.20", base="ordinary_wages"),
               item("cpf_er", "CPF (employer, 17%)", "公积金（雇主17%）", C, rate="0.17", base="ordinary_wages"),
               item("sdl", "Skills Development Levy (0.25%)", "技能发展税（0.25%）", C, rate="0.0025",
                    base="sdl_wages")]},
    {"code": "us-semi-monthly-salaried", "name": "US semi-monthly salaried", "name_zh": "美国半月薪员工",
     "region": "US", "frequency": PayFrequency.SEMI_MONTHLY, "currency": "USD",
     "variables": ["base_salary", "taxable_wages", "federal_withholding_rate", "state_withholding_rate"],
     "description": "Exempt salaried staff paid on the 15th and last day: Social Security, Medicare, federal and "
                    "state withholding. 美国半月薪：社会保障税、医疗保险税、联邦和州预扣税。",
     "items": [item("salary", "Salary (half month)", "半月薪", E, formula="base_salary / 24"),
               item("social_security_ee", "Social Security (employee)", "社会保障税（个人）", T, rate="0.062",
                    base="taxable_wages"),
               item("medicare_ee", "Medicare (employee)", "医疗保险税（个人）", T, rate="0.0145",
                    base="taxable_wages"),
               item("federal_income_tax", "Federal income tax withholding", "联邦所得税预扣", T,
                    formula="taxable_wages * federal_withholding_rate"),
               item("state_income_tax", "State income tax withholding", "州所得税预扣", T,
                    formula="taxable_wages * state_withholding_rate"),
               item("social_security_er", "Social Security (employer)", "社会保障税（雇主）", C, rate="0.062",
                    base="taxable_wages"),
               item("medicare_er", "Medicare (employer)", "医疗保险税（雇主）", C, rate="0.0145",
                    base="taxable_wages")]},
    {"code": "us-biweekly-hourly", "name": "US bi-weekly hourly with overtime", "name_zh": "美国双周时薪员工（含加班）",
     "region": "US", "frequency": PayFrequency.BIWEEKLY, "currency": "USD",
     "variables": ["hourly_rate", "regular_hours", "overtime_hours", "taxable_wages", "federal_withholding_rate"],
     "description": "Non-exempt hourly staff, overtime at 1.5x above 40 hours a week (FLSA). "
                    "美国非豁免时薪员工：每周超过40小时按1.5倍支付加班费。",
     "items": [item("hourly_pay", "Regular pay", "正常工时工资", E, formula="hourly_rate * regular_hours"),
               item("overtime_pay", "Overtime (1.5x)", "加班费（1.5倍）", E, formula="hourly_rate * overtime_hours * 1.5"),
               item("social_security_ee", "Social Security (employee)", "社会保障税（个人）", T, rate="0.062",
                    base="taxable_wages"),
               item("medicare_ee", "Medicare (employee)", "医疗保险税（个人）", T, rate="0.0145",
                    base="taxable_wages"),
               item("federal_income_tax", "Federal income tax withholding", "联邦所得税预扣", T,
                    formula="taxable_wages * federal_withholding_rate")]},
    {"code": "hk-monthly-mpf", "name": "Hong Kong monthly salaried with MPF", "name_zh": "香港月薪员工（强积金）",
     "region": "HK", "frequency": PayFrequency.MONTHLY, "currency": "HKD",
     "variables": ["base_salary", "relevant_income"],
     "description": "Mandatory Provident Fund at 5% each side, capped at HKD 1,500 a month. "
                    "香港强积金：雇员与雇主各5%，每月上限1,500港元。",
     "items": [BASE_PAY,
               item("mpf_ee", "MPF (employee)", "强积金（雇员）", D, formula="min(1500, relevant_income * 0.05)"),
               item("mpf_er", "MPF (employer)", "强积金（雇主）", C, formula="min(1500, relevant_income * 0.05)")]},
    # The one that fails part-way: its third item names a variable the template never declares.
    # It is kept unchecked on purpose (the import's refusal at that item is what it shows).
    {"unchecked": True, "code": "cn-sh-legacy-grade-2015", "name": "Shanghai grade-based payroll (legacy 2015)",
     "name_zh": "上海职级工资（旧版 2015）", "region": "CN-Shanghai", "frequency": PayFrequency.MONTHLY,
     "currency": "CNY", "variables": CN_VARS,
     "description": "Legacy template migrated from the 2015 payroll system; kept for reference. Its grade allowance "
                    "still uses the old grade factor. 旧版模板（2015年系统迁移），仅供参考。",
     "items": [BASE_PAY,
               item("pension_ee", "Pension insurance (employee)", "养老保险（个人）", D, rate="0.08",
                    base="contribution_base"),
               item("grade_allowance", "Grade allowance", "职级津贴", E, formula="base_salary * legacy_grade_factor"),
               item("medical_ee", "Medical insurance (employee)", "医疗保险（个人）", D, rate="0.02",
                    base="contribution_base"),
               item("iit", "Individual income tax", "个人所得税", T,
                    formula="max(0, gross_pay - pension_ee - medical_ee - 5000) * 0.03")]},
]

DEPARTMENTS_BY_CITY = {
    "Shanghai": ["Finance", "Human Resources", "Sales", "Engineering", "Manufacturing"],
    "Beijing": ["Executive Office", "Sales", "Engineering"],
    "Shenzhen": ["Manufacturing", "Quality", "Logistics"],
    "Guangzhou": ["Sales", "Customer Service"],
    "Singapore": ["Regional Sales", "Finance"],
}
DEMO_NAMES = [
    "Zhang Wei 张伟", "Wang Fang 王芳", "Li Na 李娜", "Liu Yang 刘洋", "Chen Jing 陈静", "Yang Lei 杨磊",
    "Zhao Min 赵敏", "Huang Yong 黄勇", "Zhou Jie 周杰", "Wu Xia 吴霞", "Xu Qiang 徐强", "Sun Li 孙丽",
    "Hu Jun 胡军", "Zhu Hong 朱红", "Gao Feng 高峰", "Lin Tao 林涛", "He Ying 何颖", "Guo Ming 郭明",
    "Ma Chao 马超", "Luo Lan 罗兰", "Liang Hao 梁浩", "Song Yu 宋雨", "Zheng Kai 郑凯", "Xie Ting 谢婷",
    "Han Bo 韩博", "Tang Yan 唐燕", "Feng Rui 冯睿", "Deng Hui 邓辉", "Cao Xin 曹欣", "Peng Fei 彭飞",
    "Zeng Qing 曾青", "Xiao Yu 肖宇", "Tian Mei 田梅", "Dong Liang 董亮", "Pan Wen 潘雯", "Yuan Shan 袁山",
    "Tan Wei Ming", "Lim Hui Ling", "Ng Kok Leong", "Goh Siew Lan",
]
OTHER_NAMES = ["Qian Bin 钱斌", "Jiang Lu 蒋璐", "Shen Yue 沈月"]


def templates_seed() -> None:
    for spec in TEMPLATES:
        if not spec.get("unchecked"):
            # A template whose formulas name something unknown is refused here, as on the admin's form.
            structure([Item(code=i["code"], name=i["name"], kind=i["kind"], formula=i["formula"], base=i["base"],
                            rate=i["rate"], rate_name=i.get("rate_name", "")) for i in spec["items"]],
                      spec["variables"])
        template, _ = PayrollTemplate.objects.update_or_create(
            code=spec["code"], version=spec.get("version", 1),
            defaults={"name": spec["name"], "name_zh": spec["name_zh"], "description": spec["description"],
                      "region": spec["region"], "pay_frequency": spec["frequency"], "currency": spec["currency"],
                      "variables": spec["variables"]})
        codes = []
        for position, it in enumerate(spec["items"], start=1):
            TemplateItem.objects.update_or_create(
                template=template, code=it["code"],
                defaults={"position": position, "name": it["name"], "name_zh": it["name_zh"], "kind": it["kind"],
                          "rate": it["rate"], "rate_name": it.get("rate_name", ""), "base": it["base"],
                          "formula": it["formula"]})
            codes.append(it["code"])
        TemplateItem.objects.filter(template=template).exclude(code__in=codes).delete()


def _employees_seed(tenant: Tenant, names: list[str], prefix: str, places: list[tuple[str, str]]) -> None:
    for n, name in enumerate(names):
        city, department = places[n % len(places)]
        currency = "SGD" if city == "Singapore" else "CNY"
        # A deterministic spread of salaries: the same on every run.
        salary = Decimal(6000 + (n * 1379) % 24000) if currency == "CNY" else Decimal(4200 + (n * 377) % 5000)
        # The group is not in defaults: re-seeding must not undo an assignment.
        Employee.objects.update_or_create(
            tenant=tenant, employee_no=f"{prefix}-{n + 1:04d}",
            defaults={"name": name, "department": department, "location": city, "base_salary": salary,
                      "currency": currency})


def seed_demo() -> None:
    """Catalog templates (global) and employees for tenants demo and other."""
    templates_seed()
    places = [(city, dept) for city, depts in DEPARTMENTS_BY_CITY.items() for dept in depts]
    demo = Tenant.objects.filter(slug="demo").first()
    if demo:
        _employees_seed(demo, DEMO_NAMES, "D", places)
    other = Tenant.objects.filter(slug="other").first()
    if other:
        _employees_seed(other, OTHER_NAMES, "O", [("Hangzhou", "Trading"), ("Ningbo", "Logistics")])
