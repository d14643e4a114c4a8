"""What a closed month sends out of Keel: the bank payment file and the income tax
withholding declaration. Pure functions from rows to bytes; nothing here reads the database.

The same rows always give the same bytes (a closed month's files are regenerated, and their
checksum compared, long after the close): an XLSX's document properties and zip entries are
dated the first day of the month the file is for, never the clock (payroll.records.workbook).

The layouts are documented in README.md, "Files a closed month produces".
"""
from __future__ import annotations

import csv
import hashlib
import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any, Literal
from zipfile import BadZipFile

from openpyxl import load_workbook
from openpyxl.utils.exceptions import InvalidFileException

from .calculation import CENT, Withholding, bracket, tax_on
from .workbook import Cell, Sheet, workbook

CURRENCY = "CNY"
AUTHOR = "Keel"  # an XLSX's document properties name its maker


def file_checksum(data: bytes) -> str:
    """sha256, hex: what a closed month records beside each file and verifies on regeneration."""
    return hashlib.sha256(data).hexdigest()


def purpose(year: int, month: int) -> str:
    """The payment's purpose as the bank statement shows it: "工资 2026-11"."""
    return f"工资 {year:04d}-{month:02d}"


def _check_period(year: int, month: int) -> None:
    # A zip entry's timestamp cannot be before 1980; no payroll month is outside this range.
    if not (isinstance(year, int) and 2000 <= year <= 2099):
        raise ValueError(f"year must be 2000–2099, not {year!r}")
    if not (isinstance(month, int) and 1 <= month <= 12):
        raise ValueError(f"month must be 1–12, not {month!r}")


def _stamp(year: int, month: int) -> datetime:
    return datetime(year, month, 1)


def _sheet_values(data: bytes, *names: str) -> list[list[tuple[Any, ...]]]:
    """The named sheets' cells, row by row (text as str, numbers as int or float, None where a
    row has no cell), read as a spreadsheet program would (openpyxl, read-only). ValueError when
    the data is not a workbook or lacks one of the sheets."""
    try:
        book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (BadZipFile, InvalidFileException, KeyError, OSError) as error:
        raise ValueError(f"not an XLSX workbook ({error})") from None
    try:
        missing = [name for name in names if name not in book.sheetnames]
        if missing:
            raise ValueError(f"the workbook has no sheet {missing[0]!r} (it has {', '.join(book.sheetnames)})")
        return [list(book[name].iter_rows(values_only=True)) for name in names]
    finally:
        book.close()


def _money(value: Any, what: str, who: str) -> Decimal:
    """A Decimal in cents, or a ValueError naming the employee and the column."""
    if not isinstance(value, Decimal):
        raise ValueError(f"employee {who}: {what} must be a Decimal, not {type(value).__name__}")
    if not value.is_finite():
        raise ValueError(f"employee {who}: {what} is not a number")
    cents = value.quantize(CENT)
    if cents != value:
        raise ValueError(f"employee {who}: {what} {value} has more than 2 decimals")
    return cents


# A cell a spreadsheet would read as a formula (=, +, -, @) or a line break inside a field
# would change what the bank or the tax client imports; such text is refused, not altered.
_UNSAFE_START = ("=", "+", "-", "@")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _text(value: Any, what: str, who: str, *, required: bool = True) -> str:
    text = "" if value is None else str(value).strip()
    if required and not text:
        raise ValueError(f"employee {who}: {what} is missing")
    if text.startswith(_UNSAFE_START) or _CONTROL.search(text):
        raise ValueError(f"employee {who}: {what} {text!r} starts with a formula sign or holds a control character")
    return text


def _check_unique(numbers: Iterable[str]) -> None:
    seen: set[str] = set()
    for number in numbers:
        if number in seen:
            raise ValueError(f"employee {number} appears twice: each employee is paid and declared once")
        seen.add(number)


# --- The bank payment file ----------------------------------------------------------------

@dataclass(frozen=True)
class BankRow:
    """One payment: an employee's net pay to their account."""

    employee_no: str
    name: str
    bank_account: str
    bank_name: str
    amount: Decimal  # net pay


BANK_SUMMARY_LABELS = ("总笔数", "总金额")  # count, total
BANK_COLUMNS = ("收款账号", "收款户名", "收款银行", "金额", "用途", "币种", "工号")
BANK_SHEET = "代发工资"
BANK_HEADER_ROW = 3  # rows 1–2 are the summary; payments start on row 4
_ACCOUNT = re.compile(r"[0-9A-Za-z]{1,34}")


@dataclass(frozen=True)
class _Payment:
    account: str
    name: str
    bank: str
    amount: Decimal
    employee_no: str


def _payments(rows: Iterable[BankRow]) -> list[_Payment]:
    payments = []
    for row in rows:
        who = _text(row.employee_no, "employee number", "(no number)")
        # Accounts are often written in groups of four; the bank wants the digits alone.
        account = re.sub(r"[\s-]", "", str(row.bank_account or ""))
        if not account:
            raise ValueError(f"employee {who}: no bank account, so the bank cannot pay them")
        if not _ACCOUNT.fullmatch(account):
            raise ValueError(f"employee {who}: bank account {account!r} is not 1–34 letters and digits")
        amount = _money(row.amount, "amount", who)
        if amount < 0:
            raise ValueError(f"employee {who}: amount {amount} is negative; a bank payment cannot take money back")
        payments.append(_Payment(account, _text(row.name, "name", who), _text(row.bank_name, "bank", who,
                                                                             required=False), amount, who))
    _check_unique(p.employee_no for p in payments)
    # Employee numbers sort as people read them: E2 before E10.
    return sorted(payments, key=lambda p: _natural_key(p.employee_no))


def _natural_key(text: str) -> tuple[Any, ...]:
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part)
                 for part in re.split(r"(\d+)", text) if part)


def bank_file(rows: Iterable[BankRow], *, year: int, month: int, fmt: Literal["csv", "xlsx"]) -> bytes:
    """The month's batch payment file: a two-row summary (count, total), a header row, then one
    row per employee ordered by employee number. CSV: UTF-8 with a BOM (Excel reads the
    Chinese), CRLF. XLSX: amounts are numbers shown 0.00, accounts are text (leading zeros and
    19 digits survive). A row with no account or a negative amount raises ValueError."""
    if fmt not in ("csv", "xlsx"):
        raise ValueError(f"format must be csv or xlsx, not {fmt!r}")
    return bank_files(rows, year=year, month=month, formats=(fmt,))[fmt]


def bank_files(rows: Iterable[BankRow], *, year: int, month: int,
               formats: Sequence[Literal["csv", "xlsx"]] = ("csv", "xlsx")) -> dict[str, bytes]:
    """The bank file in each of `formats` (see bank_file), its rows checked once for all."""
    _check_period(year, month)
    payments = _payments(rows)
    total = sum((p.amount for p in payments), Decimal("0.00"))
    text = purpose(year, month)
    files = {}
    if "csv" in formats:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerow([BANK_SUMMARY_LABELS[0], len(payments)])
        writer.writerow([BANK_SUMMARY_LABELS[1], f"{total:.2f}"])
        writer.writerow(BANK_COLUMNS)
        writer.writerows([p.account, p.name, p.bank, f"{p.amount:.2f}", text, CURRENCY, p.employee_no]
                         for p in payments)
        files["csv"] = out.getvalue().encode("utf-8-sig")
    if "xlsx" in formats:
        header: list[Cell] = [("text", label) for label in BANK_COLUMNS]
        table: list[Sequence[Cell]] = [[("text", BANK_SUMMARY_LABELS[0]), ("number", len(payments))],
                                       [("text", BANK_SUMMARY_LABELS[1]), ("money", total)], header]
        table += [[("text@", p.account), ("text", p.name), ("text", p.bank), ("money", p.amount), ("text", text),
                   ("text", CURRENCY), ("text@", p.employee_no)] for p in payments]
        files["xlsx"] = workbook([Sheet(BANK_SHEET, (24, 14, 24, 14, 14, 8, 12), table)], stamp=_stamp(year, month),
                                 author=AUTHOR)
    return files


@dataclass(frozen=True)
class FileTotals:
    """What a file says when read back: its rows counted and summed (the month's verify step
    compares these with the payslips')."""

    count: int
    total: Decimal


def _decimal_cell(value: Any, where: str) -> Decimal:
    try:
        return Decimal(str(value)).quantize(CENT)
    except (InvalidOperation, ValueError):
        raise ValueError(f"{where}: {value!r} is not an amount") from None


def bank_file_totals(data: bytes, *, fmt: Literal["csv", "xlsx"]) -> FileTotals:
    """Reads a bank file back: the payment rows counted and their amounts summed. Raises
    ValueError when the file's own summary disagrees with its rows (a truncated or edited file)."""
    if fmt == "csv":
        table = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    else:
        [table] = _sheet_values(data, BANK_SHEET)
    if len(table) < BANK_HEADER_ROW or tuple(table[BANK_HEADER_ROW - 1]) != BANK_COLUMNS:
        raise ValueError("not a bank file of this layout: row 3 is not its header")
    amount_at = BANK_COLUMNS.index("金额")
    rows = table[BANK_HEADER_ROW:]
    total = sum((_decimal_cell(r[amount_at], f"row {i}") for i, r in enumerate(rows, BANK_HEADER_ROW + 1)),
                Decimal("0.00"))
    declared = FileTotals(int(table[0][1]), _decimal_cell(table[1][1], "row 2"))
    if declared != FileTotals(len(rows), total):
        raise ValueError(f"the file's summary ({declared.count} payments, {declared.total}) disagrees with its "
                         f"rows ({len(rows)} payments, {total})")
    return declared


# --- The income tax withholding declaration -------------------------------------------------

@dataclass(frozen=True)
class TaxRow:
    """One employee's line of the month's declaration (综合所得 — 正常工资薪金所得)."""

    employee_no: str
    name: str
    id_type: str  # an Employee.id_type code (resident_id, passport, …) or the tax client's own label
    id_number: str
    income: Decimal  # 本期收入
    pension: Decimal  # 基本养老保险费, the employee's
    medical: Decimal  # 基本医疗保险费
    unemployment: Decimal  # 失业保险费
    housing_fund: Decimal  # 住房公积金
    cumulative_income: Decimal
    cumulative_basic_deduction: Decimal
    cumulative_contributions: Decimal  # 累计专项扣除
    cumulative_special_additional_deductions: Decimal
    cumulative_taxable_income: Decimal
    rate: Decimal  # a fraction: 0.03
    quick_deduction: Decimal
    cumulative_tax: Decimal
    tax_withheld_before: Decimal
    tax_this_month: Decimal

    @classmethod
    def of(cls, *, employee_no: str, name: str, id_type: str, id_number: str, income: Decimal,
           pension: Decimal, medical: Decimal, unemployment: Decimal, housing_fund: Decimal,
           withholding: Withholding) -> TaxRow:
        """The row of a month whose tax `withholding` (payroll.records.calculation) computed."""
        return cls(employee_no=employee_no, name=name, id_type=id_type, id_number=id_number, income=income,
                   pension=pension, medical=medical, unemployment=unemployment, housing_fund=housing_fund,
                   cumulative_income=withholding.income_cumulative,
                   cumulative_basic_deduction=withholding.basic_deduction_cumulative,
                   cumulative_contributions=withholding.contributions_cumulative,
                   cumulative_special_additional_deductions=withholding.special_additional_deductions_cumulative,
                   cumulative_taxable_income=withholding.taxable_cumulative, rate=withholding.rate,
                   quick_deduction=withholding.quick_deduction, cumulative_tax=withholding.tax_cumulative,
                   tax_withheld_before=withholding.withheld_before, tax_this_month=withholding.tax)


# The ID types as the tax client names them (证件类型). A passport is read as a foreign one:
# a Chinese citizen employed in China is registered by their resident ID.
ID_TYPE_LABELS = {
    "resident_id": "居民身份证",
    "passport": "外国护照",
    "hk_macau_pass": "港澳居民来往内地通行证",
    "taiwan_pass": "台湾居民来往大陆通行证",
    "foreigner_permit": "外国人永久居留身份证",
}
_RESIDENT_ID = re.compile(r"\d{17}[\dX]")

# The tax client's import template for 综合所得申报 → 正常工资薪金所得: its sheet and its
# columns in its order (an asterisk marks what the client requires). The six special
# additional deductions are per kind there; Keel holds their total, so they stay empty and
# the client uses the deductions it downloads for each person (its computation sheet shows
# Keel's total beside, to compare).
TAX_IMPORT_SHEET = "正常工资薪金收入"
_PAY_COLUMNS = ("本期收入", "本期免税收入", "基本养老保险费", "基本医疗保险费", "失业保险费", "住房公积金")
TAX_IMPORT_COLUMNS = (
    "工号", "*姓名", "*证件类型", "*证件号码", *_PAY_COLUMNS,
    "累计子女教育", "累计继续教育", "累计住房贷款利息", "累计住房租金", "累计赡养老人",
    "累计3岁以下婴幼儿照护", "累计个人养老金", "企业(职业)年金", "商业健康保险", "税延养老保险",
    "其他", "准予扣除的捐赠额", "减免税额", "备注",
)
# Keel's cumulative computation of each line, as the declaration (扣缴申报表) reports it.
TAX_COMPUTATION_SHEET = "预扣预缴计算"
TAX_COMPUTATION_COLUMNS = (
    "工号", "姓名", "证件类型", "证件号码", *_PAY_COLUMNS,
    "累计收入额", "累计减除费用", "累计专项扣除", "累计专项附加扣除", "累计应纳税所得额",
    "税率", "速算扣除数", "累计应纳税额", "累计已预缴税额", "本期应预扣预缴税额",
)
_TAX_MONEY = ("income", "pension", "medical", "unemployment", "housing_fund", "cumulative_income",
              "cumulative_basic_deduction", "cumulative_contributions", "cumulative_special_additional_deductions",
              "cumulative_taxable_income", "quick_deduction", "cumulative_tax", "tax_withheld_before",
              "tax_this_month")


@dataclass(frozen=True)
class _Declared:
    row: TaxRow
    id_label: str
    money: dict[str, Decimal]


def _declared(row: TaxRow) -> _Declared:
    who = _text(row.employee_no, "employee number", "(no number)")
    _text(row.name, "name", who)
    id_label = ID_TYPE_LABELS.get(row.id_type, row.id_type if row.id_type in ID_TYPE_LABELS.values() else "")
    if not id_label:
        raise ValueError(f"employee {who}: ID type {row.id_type!r} is none the tax client accepts "
                         f"({', '.join(ID_TYPE_LABELS)})")
    id_number = _text(row.id_number, "ID number", who)
    if id_label == "居民身份证" and not _RESIDENT_ID.fullmatch(id_number):
        raise ValueError(f"employee {who}: a resident ID number has 18 characters, digits and a final digit or X")
    money = {name: _money(getattr(row, name), name, who) for name in _TAX_MONEY}
    for name, value in money.items():
        if value < 0:
            raise ValueError(f"employee {who}: {name} {value} is negative")
    # The tax client recomputes every line; a row that does not follow the cumulative method
    # would be declared with figures Keel did not withhold by, so it is refused here.
    taxable = max(money["cumulative_income"] - money["cumulative_basic_deduction"]
                  - money["cumulative_contributions"] - money["cumulative_special_additional_deductions"],
                  Decimal("0.00"))
    expected = {"cumulative_taxable_income": taxable}
    if money["cumulative_taxable_income"] == taxable:
        rate, quick = bracket(taxable)
        if (row.rate, money["quick_deduction"]) != (rate, quick):
            raise ValueError(f"employee {who}: rate {row.rate} and quick deduction {money['quick_deduction']} are "
                             f"not the table's for {taxable} ({rate}, {quick})")
        expected["cumulative_tax"] = tax_on(taxable)
        expected["tax_this_month"] = max(expected["cumulative_tax"] - money["tax_withheld_before"], Decimal("0.00"))
    for name, value in expected.items():
        if money[name] != value:
            raise ValueError(f"employee {who}: {name} is {money[name]}, the cumulative method gives {value}")
    return _Declared(row, id_label, money)


def tax_declaration(rows: Iterable[TaxRow], *, year: int, month: int) -> bytes:
    """The month's withholding declaration as an XLSX: sheet 正常工资薪金收入 in the tax client's
    import layout, sheet 预扣预缴计算 with Keel's cumulative computation of every line; one row
    per employee ordered by employee number, no totals row (the import would read it as a
    person). Raises ValueError naming the employee for a row the client would refuse."""
    _check_period(year, month)
    declared = sorted((_declared(r) for r in rows), key=lambda d: _natural_key(d.row.employee_no))
    _check_unique(d.row.employee_no for d in declared)
    def person(d: _Declared) -> list[Cell]:
        m = d.money
        return [("text@", d.row.employee_no.strip()), ("text", d.row.name.strip()), ("text", d.id_label),
                ("text@", d.row.id_number.strip()), ("money", m["income"]), ("money", Decimal("0.00")),
                ("money", m["pension"]), ("money", m["medical"]), ("money", m["unemployment"]),
                ("money", m["housing_fund"])]

    imported: list[Sequence[Cell]] = [[("text", c) for c in TAX_IMPORT_COLUMNS]]
    computed: list[Sequence[Cell]] = [[("text", c) for c in TAX_COMPUTATION_COLUMNS]]
    for d in declared:
        m, line = d.money, person(d)
        imported.append(line)  # the kinds of deductions and the rest: empty (see TAX_IMPORT_COLUMNS)
        computed.append(line + [
            ("money", m["cumulative_income"]), ("money", m["cumulative_basic_deduction"]),
            ("money", m["cumulative_contributions"]), ("money", m["cumulative_special_additional_deductions"]),
            ("money", m["cumulative_taxable_income"]), ("percent", d.row.rate), ("money", m["quick_deduction"]),
            ("money", m["cumulative_tax"]), ("money", m["tax_withheld_before"]), ("money", m["tax_this_month"])])
    widths = (12, 12, 22, 22)
    return workbook([Sheet(TAX_IMPORT_SHEET, widths + (14,) * (len(TAX_IMPORT_COLUMNS) - 4), imported),
                      Sheet(TAX_COMPUTATION_SHEET, widths + (14,) * (len(TAX_COMPUTATION_COLUMNS) - 4), computed)],
                     stamp=_stamp(year, month), author=AUTHOR)


@dataclass(frozen=True)
class DeclarationTotals:
    """A declaration read back: its lines counted, this month's income and tax summed."""

    count: int
    income: Decimal
    tax: Decimal


def tax_declaration_totals(data: bytes) -> DeclarationTotals:
    """Reads a declaration back (the computation sheet): ValueError when its import sheet lists
    other people or other incomes than the computation does."""
    imported, computed = _sheet_values(data, TAX_IMPORT_SHEET, TAX_COMPUTATION_SHEET)
    if tuple(computed[0]) != TAX_COMPUTATION_COLUMNS or tuple(imported[0]) != TAX_IMPORT_COLUMNS:
        raise ValueError("not a declaration of this layout: its header rows differ")
    if [r[:5] for r in imported[1:]] != [r[:5] for r in computed[1:]]:
        raise ValueError("the declaration's two sheets list different people or incomes")
    income_at, tax_at = TAX_COMPUTATION_COLUMNS.index("本期收入"), TAX_COMPUTATION_COLUMNS.index("本期应预扣预缴税额")
    rows = computed[1:]
    return DeclarationTotals(
        count=len(rows),
        income=sum((_decimal_cell(r[income_at], f"row {i}") for i, r in enumerate(rows, 2)), Decimal("0.00")),
        tax=sum((_decimal_cell(r[tax_at], f"row {i}") for i, r in enumerate(rows, 2)), Decimal("0.00")))
