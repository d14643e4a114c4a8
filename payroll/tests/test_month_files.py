"""The files a closed month sends out (payroll/records/month_files.py): the bank payment file in
CSV and XLSX and the tax withholding declaration, read back as a bank's import or a
spreadsheet would read them (csv, openpyxl). Pure: no database."""
import csv
import hashlib
import io
import time
import zipfile
from dataclasses import replace
from datetime import datetime
from decimal import Decimal as D

import pytest
from openpyxl import load_workbook

from payroll.records.calculation import MonthIncome, YearToDate, withholding
from payroll.records.month_files import (
    BANK_COLUMNS,
    TAX_COMPUTATION_COLUMNS,
    TAX_IMPORT_COLUMNS,
    BankRow,
    TaxRow,
    bank_file,
    bank_file_totals,
    file_checksum,
    tax_declaration,
    tax_declaration_totals,
)

PAY = [
    BankRow("E10", "王芳", "6222 0212 3456 7890 123", "中国工商银行上海张江支行", D("18234.56")),
    BankRow("E2", "李娜", "0012345678901234", "招商银行上海分行", D("9876.50")),
    BankRow("E1", "张伟", "6217001234567890123", "中国建设银行", D("12000.00")),
]
NET_TOTAL = D("40111.06")


def _csv_table(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))


def _sheet(data: bytes, name: str | None = None):
    book = load_workbook(io.BytesIO(data))
    return book[name] if name else book.worksheets[0]


# --- The bank payment file ----------------------------------------------------------------------

def test_the_csv_pays_each_employee_their_net_pay_ordered_by_employee_number():
    table = _csv_table(bank_file(PAY, year=2026, month=11, fmt="csv"))
    assert table[0] == ["总笔数", "3"] and table[1] == ["总金额", "40111.06"]
    assert table[2] == list(BANK_COLUMNS)
    assert table[3:] == [
        ["6217001234567890123", "张伟", "中国建设银行", "12000.00", "工资 2026-11", "CNY", "E1"],
        ["0012345678901234", "李娜", "招商银行上海分行", "9876.50", "工资 2026-11", "CNY", "E2"],
        # The account as the bank wants it: the groups of four written by HR joined.
        ["6222021234567890123", "王芳", "中国工商银行上海张江支行", "18234.56", "工资 2026-11", "CNY", "E10"],
    ]


def test_the_csv_starts_with_a_bom_and_ends_its_lines_with_crlf_so_excel_reads_the_chinese():
    data = bank_file(PAY, year=2026, month=11, fmt="csv")
    assert data.startswith(b"\xef\xbb\xbf")
    lines = data[3:].split(b"\r\n")
    assert len(lines) == 3 + len(PAY) + 1 and lines[-1] == b""  # every line, the last too, ends CRLF
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert "王芳".encode() in data
    # No thousands separator, always two decimals.
    assert b",18234.56," in data and b"18,234" not in data


def test_the_xlsx_keeps_accounts_as_text_and_amounts_as_numbers_shown_with_two_decimals():
    sheet = _sheet(bank_file(PAY, year=2026, month=11, fmt="xlsx"))
    assert [c.value for c in sheet[3]] == list(BANK_COLUMNS)
    accounts = [sheet.cell(row=r, column=1) for r in range(4, 7)]
    # Leading zeros and all 19 digits survive: text cells, formatted as text.
    assert [a.value for a in accounts] == ["6217001234567890123", "0012345678901234", "6222021234567890123"]
    assert all(a.data_type == "s" and a.number_format == "@" for a in accounts)
    amounts = [sheet.cell(row=r, column=4) for r in range(4, 7)]
    assert [a.value for a in amounts] == [12000, 9876.5, 18234.56]
    assert all(a.data_type == "n" and a.number_format == "0.00" for a in amounts)
    assert [sheet.cell(row=r, column=5).value for r in range(4, 7)] == ["工资 2026-11"] * 3
    assert (sheet["A1"].value, sheet["B1"].value, sheet["A2"].value, sheet["B2"].value) == ("总笔数", 3, "总金额",
                                                                                            40111.06)
    assert sheet.max_row == 6


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_read_back_the_file_counts_and_totals_what_the_bank_will_pay(fmt):
    totals = bank_file_totals(bank_file(PAY, year=2026, month=11, fmt=fmt), fmt=fmt)
    assert (totals.count, totals.total) == (3, NET_TOTAL)


def test_read_back_a_csv_that_lost_a_row_says_its_summary_disagrees():
    data = bank_file(PAY, year=2026, month=11, fmt="csv")
    truncated = data[:data.rstrip(b"\r\n").rfind(b"\r\n") + 2]
    with pytest.raises(ValueError, match=r"summary \(3 payments, 40111.06\) disagrees with its rows \(2 payments"):
        bank_file_totals(truncated, fmt="csv")


@pytest.mark.parametrize("row, message", [
    (BankRow("E7", "赵敏", "", "中国银行", D("100.00")), "employee E7: no bank account"),
    (BankRow("E7", "赵敏", "6222 abc!", "中国银行", D("100.00")), "employee E7: bank account"),
    (BankRow("E7", "赵敏", "6222021234567890", "中国银行", D("-0.01")), "employee E7: amount -0.01 is negative"),
    (BankRow("E7", "赵敏", "6222021234567890", "中国银行", D("10.005")), "more than 2 decimals"),
    (BankRow("E7", "赵敏", "6222021234567890", "中国银行", 10.5), "amount must be a Decimal"),
    (BankRow("E7", "=HYPERLINK(\"x\")", "6222021234567890", "中国银行", D("1.00")), "name .* formula sign"),
    (BankRow("E7", "", "6222021234567890", "中国银行", D("1.00")), "employee E7: name is missing"),
    (BankRow("E2", "李娜", "6222021234567890", "中国银行", D("1.00")), "employee E2 appears twice"),
])
@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_it_refuses_a_row_the_bank_could_not_pay_naming_the_employee(row, message, fmt):
    with pytest.raises(ValueError, match=message):
        bank_file([*PAY, row], year=2026, month=11, fmt=fmt)


def test_it_refuses_an_unknown_format_or_month():
    with pytest.raises(ValueError, match="format must be csv or xlsx"):
        bank_file(PAY, year=2026, month=11, fmt="pdf")
    with pytest.raises(ValueError, match="month must be 1–12"):
        bank_file(PAY, year=2026, month=13, fmt="csv")


def test_text_with_markup_characters_reads_back_as_written():
    odd = BankRow("E20", "O'Brien <Sean> & Co", "6222021234567890", "Bank \"A&B\", Shanghai", D("1.00"))
    sheet = _sheet(bank_file([odd], year=2026, month=11, fmt="xlsx"))
    assert [sheet.cell(row=4, column=c).value for c in (2, 3)] == ["O'Brien <Sean> & Co", 'Bank "A&B", Shanghai']
    table = _csv_table(bank_file([odd], year=2026, month=11, fmt="csv"))
    assert table[3][1:3] == ["O'Brien <Sean> & Co", 'Bank "A&B", Shanghai']


def test_a_name_longer_than_a_cell_holds_is_refused_not_cut():
    # Excel's cell holds 32,767 characters; a writer that cut the name would pay a shorter one.
    long_name = BankRow("E1", "张" * 32_768, "6222021234567890", "", D("1.00"))
    with pytest.raises(ValueError, match="row 4: '张张张.*' does not fit a cell"):
        bank_file([long_name], year=2026, month=11, fmt="xlsx")


def test_reading_back_something_that_is_not_the_workbook_says_so():
    with pytest.raises(ValueError, match="not an XLSX workbook"):
        bank_file_totals(b"PK\x03\x04 not a zip", fmt="xlsx")
    declaration = tax_declaration(_tax_rows(), year=2026, month=11)
    with pytest.raises(ValueError, match="the workbook has no sheet '代发工资'"):
        bank_file_totals(declaration, fmt="xlsx")


def test_a_month_with_nobody_paid_is_a_summary_and_a_header():
    table = _csv_table(bank_file([], year=2026, month=11, fmt="csv"))
    assert table == [["总笔数", "0"], ["总金额", "0.00"], list(BANK_COLUMNS)]


# --- The tax declaration ------------------------------------------------------------------------

def _tax_rows() -> list[TaxRow]:
    """November for three employees whose January–October were paid elsewhere."""
    people = [
        ("E3", "陈静", "resident_id", "11010519491231002X", D("95000.00"), (D("2798.40"), D("699.60"), D("174.90"),
                                                                             D("2448.60")), D("3000.00"),
         YearToDate(10, D("720000.00"), D("61215.00"), D("30000.00"), D("120715.50"))),
        ("E1", "张伟", "resident_id", "310101199001011234", D("42000.00"), (D("2400.00"), D("600.00"), D("150.00"),
                                                                             D("1350.00")), D("2000.00"),
         YearToDate(10, D("300000.00"), D("45000.00"), D("20000.00"), D("19000.00"))),
        ("E2", "John Smith", "passport", "E12345678", D("15345.67"), (D("987.65"), D("246.91"), D("61.73"),
                                                                       D("864.20")), D("1500.00"),
         YearToDate(10, D("123456.70"), D("21604.90"), D("15000.00"), D("1165.18"))),
    ]
    rows = []
    for number, name, id_type, id_number, income, kinds, deductions, opening in people:
        tax = withholding([MonthIncome(income, sum(kinds), deductions)], opening)[0]
        rows.append(TaxRow.of(employee_no=number, name=name, id_type=id_type, id_number=id_number, income=income,
                              pension=kinds[0], medical=kinds[1], unemployment=kinds[2], housing_fund=kinds[3],
                              withholding=tax))
    return rows


def test_the_declaration_has_the_tax_clients_import_sheet_and_keels_computation():
    rows = _tax_rows()
    book = load_workbook(io.BytesIO(tax_declaration(rows, year=2026, month=11)))
    assert book.sheetnames == ["正常工资薪金收入", "预扣预缴计算"]
    imported, computed = book["正常工资薪金收入"], book["预扣预缴计算"]
    assert [c.value for c in imported[1]] == list(TAX_IMPORT_COLUMNS)
    assert [c.value for c in imported[1]][:4] == ["工号", "*姓名", "*证件类型", "*证件号码"]
    assert [c.value for c in computed[1]] == list(TAX_COMPUTATION_COLUMNS)
    # One line per employee, by number, no totals row (the client would import it as a person).
    assert imported.max_row == computed.max_row == 4
    assert [imported.cell(row=r, column=1).value for r in (2, 3, 4)] == ["E1", "E2", "E3"]
    assert [imported.cell(row=r, column=3).value for r in (2, 3, 4)] == ["居民身份证", "外国护照", "居民身份证"]
    id_number = imported.cell(row=4, column=4)
    assert (id_number.value, id_number.data_type, id_number.number_format) == ("11010519491231002X", "s", "@")
    # E1's November, the figures worked by hand in test_withholding_opening.
    line = {name: computed.cell(row=2, column=i).value for i, name in enumerate(TAX_COMPUTATION_COLUMNS, 1)}
    assert line["本期收入"] == 42000 and line["基本养老保险费"] == 2400 and line["住房公积金"] == 1350
    assert (line["累计收入额"], line["累计减除费用"], line["累计专项扣除"], line["累计专项附加扣除"]) == \
        (342000, 55000, 49500, 22000)
    assert (line["累计应纳税所得额"], line["税率"], line["速算扣除数"]) == (215500, 0.2, 16920)
    assert (line["累计应纳税额"], line["累计已预缴税额"], line["本期应预扣预缴税额"]) == (26180, 19000, 7180)
    assert computed.cell(row=2, column=TAX_COMPUTATION_COLUMNS.index("税率") + 1).number_format == "0%"
    assert computed.cell(row=2, column=TAX_COMPUTATION_COLUMNS.index("累计收入额") + 1).number_format == "0.00"


def test_the_declarations_tax_column_sums_to_the_tax_withheld():
    rows = _tax_rows()
    data = tax_declaration(rows, year=2026, month=11)
    column = TAX_COMPUTATION_COLUMNS.index("本期应预扣预缴税额") + 1
    sheet = _sheet(data, "预扣预缴计算")
    in_file = sum(D(str(sheet.cell(row=r, column=column).value)) for r in range(2, sheet.max_row + 1))
    assert in_file == sum(r.tax_this_month for r in rows)
    totals = tax_declaration_totals(data)
    assert (totals.count, totals.income, totals.tax) == (3, sum(r.income for r in rows), in_file)


@pytest.mark.parametrize("change, message", [
    (dict(id_type="other"), "ID type 'other' is none the tax client accepts"),
    (dict(id_number=""), "employee E1: ID number is missing"),
    (dict(id_number="31010119900101123"), "a resident ID number has 18 characters"),
    (dict(tax_this_month=D("7180.01")), "tax_this_month is 7180.01, the cumulative method gives 7180.00"),
    (dict(cumulative_taxable_income=D("215000.00")), "cumulative_taxable_income is 215000.00"),
    (dict(rate=D("0.10")), "rate 0.10 and quick deduction 16920.00 are not the table's"),
    (dict(income=D("-1.00")), "income -1.00 is negative"),
])
def test_it_refuses_a_line_the_tax_client_would_refuse_or_that_does_not_add_up(change, message):
    rows = _tax_rows()
    rows[1] = replace(rows[1], **change)
    with pytest.raises(ValueError, match=message):
        tax_declaration(rows, year=2026, month=11)


# --- Checksums and identical regeneration -------------------------------------------------------

def test_the_checksum_is_the_sha256_of_the_bytes_and_moves_with_a_cent():
    data = bank_file(PAY, year=2026, month=11, fmt="csv")
    assert file_checksum(data) == hashlib.sha256(data).hexdigest()
    a_cent_more = [*PAY[:2], replace(PAY[2], amount=PAY[2].amount + D("0.01"))]
    assert file_checksum(bank_file(a_cent_more, year=2026, month=11, fmt="csv")) != file_checksum(data)


def test_the_same_rows_give_the_same_bytes_seconds_apart():
    first = [bank_file(PAY, year=2026, month=11, fmt=f) for f in ("csv", "xlsx")]
    first.append(tax_declaration(_tax_rows(), year=2026, month=11))
    # A zip entry's time has a 2-second resolution: 2.1 s apart, any clock would show.
    time.sleep(2.1)
    again = [bank_file(list(reversed(PAY)), year=2026, month=11, fmt=f) for f in ("csv", "xlsx")]
    again.append(tax_declaration(list(reversed(_tax_rows())), year=2026, month=11))
    assert [file_checksum(d) for d in again] == [file_checksum(d) for d in first]


def test_an_xlsx_is_dated_the_first_of_its_month_not_the_clock():
    data = tax_declaration(_tax_rows(), year=2026, month=11)
    properties = load_workbook(io.BytesIO(data)).properties
    assert properties.created == properties.modified == datetime(2026, 11, 1)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert {info.date_time for info in archive.infolist()} == {(2026, 11, 1, 0, 0, 0)}
    december = bank_file(PAY, year=2026, month=12, fmt="xlsx")
    assert load_workbook(io.BytesIO(december)).properties.created == datetime(2026, 12, 1)
