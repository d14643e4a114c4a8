"""The XLSX a month's files are written as (payroll/records/workbook.py), read back by openpyxl
as a spreadsheet program reads it: what each kind of cell becomes, the columns' widths, and
what a cell cannot hold refused by row rather than written wrong. Pure: no database."""
import io
import zipfile
from datetime import datetime
from decimal import Decimal as D

import pytest
from openpyxl import load_workbook

from payroll.records.workbook import Sheet, workbook

STAMP = datetime(2026, 11, 1)


def _book(*sheets: Sheet):
    return load_workbook(io.BytesIO(workbook(sheets, stamp=STAMP, author="Keel")))


def test_each_kind_of_cell_reads_back_as_what_it_is_with_its_format():
    book = _book(Sheet("付款", (24, 14, 8, 8, 8), [
        [("text", "收款账号"), ("text", "金额"), ("text", "税率"), ("text", "笔数"), ("text", "x")],
        [("text@", "0012345678901234567"), ("money", D("18234.50")), ("percent", D("0.03")), ("number", 3),
         ("money", D("1E+3"))],
    ]))
    sheet = book["付款"]
    account, amount, rate, count, thousand = (sheet.cell(row=2, column=c) for c in range(1, 6))
    assert (account.value, account.data_type, account.number_format) == ("0012345678901234567", "s", "@")
    assert (amount.value, amount.number_format) == (18234.5, "0.00")
    assert (rate.value, rate.number_format) == (0.03, "0%")
    assert (count.value, count.number_format) == (3, "General")
    assert thousand.value == 1000  # a Decimal's exponent form written out as digits
    assert [c.value for c in sheet[1]] == ["收款账号", "金额", "税率", "笔数", "x"]
    # The widths as Excel stores a width of so many characters.
    assert round(sheet.column_dimensions["A"].width, 2) == 24.71 and round(sheet.column_dimensions["B"].width, 2) == 14.71


def test_the_decimal_is_written_as_its_own_digits_never_through_a_float():
    data = workbook([Sheet("s", (), [[("money", D("0.10")), ("money", D("12345678901234.37"))]])], stamp=STAMP,
                    author="Keel")
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        xml = archive.read("xl/worksheets/sheet1.xml").decode()
    assert "<v>0.10</v>" in xml and "<v>12345678901234.37</v>" in xml


def test_text_keeps_its_markup_characters_and_its_edge_spaces():
    sheet = _book(Sheet("s", (), [[("text", "A&B <Co> \"x\""), ("text", "  两个空格 ")]])).worksheets[0]
    assert [c.value for c in sheet[1]] == ['A&B <Co> "x"', "  两个空格 "]


def test_several_sheets_keep_their_order_and_names():
    book = _book(Sheet("正常工资薪金收入", (), [[("text", "a")]]), Sheet("预扣预缴计算", (), [[("text", "b")]]))
    assert book.sheetnames == ["正常工资薪金收入", "预扣预缴计算"]
    assert book["预扣预缴计算"]["A1"].value == "b"
    assert book.properties.created == book.properties.modified == STAMP and book.properties.creator == "Keel"


@pytest.mark.parametrize("cell, message", [
    (("text", "x" * 32_768), "row 2: 'xxx.*' does not fit a cell"),
    (("text", "bell\x07"), "row 2: 'bell\\\\x07' holds a character a spreadsheet cannot"),
    (("money", D("NaN")), "row 2: NaN is not a finite number"),
    (("money", 1.5), "row 2: 1.5 is not a number"),
    (("number", True), "row 2: True is not a number"),
])
def test_what_a_cell_cannot_hold_is_refused_naming_the_sheet_and_row(cell, message):
    with pytest.raises(ValueError, match=f"sheet s, {message}"):
        workbook([Sheet("s", (), [[("text", "header")], [cell]])], stamp=STAMP, author="Keel")


@pytest.mark.parametrize("name", ["", "a/b", "x" * 32, "what?"])
def test_a_name_no_sheet_can_have_is_refused(name):
    with pytest.raises(ValueError, match="cannot name a sheet"):
        workbook([Sheet(name, (), [])], stamp=STAMP, author="Keel")


def test_an_empty_sheet_is_a_valid_sheet():
    sheet = _book(Sheet("空", (10,), [])).worksheets[0]
    assert sheet.max_row == 1 and sheet["A1"].value is None
