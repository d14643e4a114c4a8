"""An independent reading of the cumulative withholding method, to check
payroll.records.calculation against: written from the published text, sharing no code with
it (not its table, not its rounding helper).

The method (国家税务总局公告2018年第61号《个人所得税扣缴申报管理办法（试行）》, art. 6):

    累计预扣预缴应纳税所得额 = 累计收入 − 累计免税收入 − 累计减除费用 − 累计专项扣除
                               − 累计专项附加扣除 − 累计依法确定的其他扣除
    本期应预扣预缴税额 = (累计预扣预缴应纳税所得额 × 预扣率 − 速算扣除数) − 累计减免税额
                         − 累计已预扣预缴税额
    累计减除费用 = 5,000 元/月 × 当年截至本月在本单位的任职受雇月份数;
    the result negative: nothing is withheld this month (no refund during the year).

The tax on the cumulative taxable income is computed here band by band (the annual table's
slices, each taxed at its own rate), not with the quick deduction the code uses: the two
agree only if the code's quick deductions are right. The rate and quick deduction a
declaration shows are derived from the band the income ends in.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

# 个人所得税预扣率表一 (居民个人工资、薪金所得预扣预缴适用), the slices of the year:
# (width of the slice, its rate); the last slice has no upper bound.
SLICES = (
    (Decimal(36_000), Decimal("0.03")),
    (Decimal(144_000 - 36_000), Decimal("0.10")),
    (Decimal(300_000 - 144_000), Decimal("0.20")),
    (Decimal(420_000 - 300_000), Decimal("0.25")),
    (Decimal(660_000 - 420_000), Decimal("0.30")),
    (Decimal(960_000 - 660_000), Decimal("0.35")),
    (None, Decimal("0.45")),
)
MONTHLY_BASIC = Decimal(5_000)


@dataclass(frozen=True)
class Month:
    """One month's pay as the declaration lists it."""

    income: Decimal
    pension: Decimal = Decimal(0)
    medical: Decimal = Decimal(0)
    unemployment: Decimal = Decimal(0)
    housing_fund: Decimal = Decimal(0)
    special_additional: Decimal = Decimal(0)
    tax_free: Decimal = Decimal(0)
    other: Decimal = Decimal(0)


@dataclass(frozen=True)
class Before:
    """The year in this employer before the first month given (another payroll system's)."""

    months: int
    income: Decimal
    special: Decimal  # 专项扣除
    special_additional: Decimal
    withheld: Decimal


@dataclass(frozen=True)
class Line:
    month: int
    cumulative_income: Decimal
    cumulative_basic: Decimal
    cumulative_special: Decimal
    cumulative_special_additional: Decimal
    cumulative_taxable: Decimal
    rate: Decimal
    quick_deduction: Decimal
    cumulative_tax: Decimal
    withheld_before: Decimal
    this_month: Decimal


def to_cent(value: Decimal) -> Decimal:
    return value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def banded_tax(taxable: Decimal) -> tuple[Decimal, Decimal, Decimal]:
    """(exact tax, top rate, implied quick deduction) of a cumulative taxable income."""
    tax, floor, rate = Decimal(0), Decimal(0), SLICES[0][1]
    for width, rate in SLICES:
        portion = taxable - floor if width is None else min(max(taxable - floor, Decimal(0)), width)
        tax += portion * rate
        if width is None or taxable <= floor + width:
            break
        floor += width
    return tax, rate, taxable * rate - tax


def withhold(months: list[Month], before: Before | None = None) -> list[Line]:
    before = before or Before(0, Decimal(0), Decimal(0), Decimal(0), Decimal(0))
    lines = []
    income = before.income
    special = before.special
    additional = before.special_additional
    withheld = before.withheld
    tax_free = other = Decimal(0)
    for n, m in enumerate(months, start=before.months + 1):
        income += m.income
        tax_free += m.tax_free
        special += m.pension + m.medical + m.unemployment + m.housing_fund
        additional += m.special_additional
        other += m.other
        basic = MONTHLY_BASIC * n
        taxable = income - tax_free - basic - special - additional - other
        if taxable < 0:
            taxable = Decimal(0)
        exact, rate, quick = banded_tax(taxable)
        cumulative_tax = to_cent(exact)
        due = cumulative_tax - withheld
        this_month = due if due > 0 else Decimal(0)
        lines.append(Line(n, income, basic, special, additional, taxable, rate, quick, cumulative_tax,
                          withheld, this_month))
        withheld += this_month
    return lines
