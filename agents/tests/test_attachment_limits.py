"""Hostile attachments: limits on compressed size, inflated size, compression
ratio, rows and columns, each enforced before or while reading — never after
the whole sheet has been parsed."""
from __future__ import annotations

import io
import time
import zipfile

import pytest

from payroll.reading.attachments import (MAX_COLUMNS, MAX_ROWS, MAX_SHEET_ROWS, AttachmentError,
                                 employee_list_parse)
from payroll.models import Employee
from tenants.models import Tenant
from tests.demo import demo_ensure
from tests.workbooks import SHEET, SHEET_HEAD, xlsx, xlsx_bomb, xlsx_with_sheet

pytestmark = pytest.mark.django_db  # a good file is read to the end: the employees query


def directory_lies(raw: bytes, member: str, declared_size: int) -> bytes:
    """The same zip with `member`'s uncompressed size in the central directory
    replaced: a bomb that announces itself as small."""
    data = bytearray(raw)
    name = member.encode()
    at = data.find(b"PK\x01\x02")
    while at != -1:
        name_length = int.from_bytes(data[at + 28:at + 30], "little")
        if data[at + 46:at + 46 + name_length] == name:
            data[at + 24:at + 28] = declared_size.to_bytes(4, "little")
            return bytes(data)
        at = data.find(b"PK\x01\x02", at + 4)
    raise AssertionError(f"{member} not in the central directory")


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return xlsx_bomb()


def refusal(raw: bytes, filename: str = "team.xlsx") -> tuple[AttachmentError, float]:
    started = time.perf_counter()
    with pytest.raises(AttachmentError) as caught:
        employee_list_parse(tenant_id=0, filename=filename, raw=raw)
    return caught.value, time.perf_counter() - started


def baseline_seconds(raw: bytes) -> float:
    """The time to read a small, good workbook to its end: what a refusal is measured against."""
    started = time.perf_counter()
    # Tenant 0 has no employees: every row is read; named rows are proposed as new ones.
    parsed = employee_list_parse(tenant_id=0, filename="team.xlsx", raw=raw)
    assert parsed.rows == len(parsed.new_employees) > 0
    return time.perf_counter() - started


# --- The bomb -----------------------------------------------------------------------------

def test_the_bomb_is_a_bomb(bomb):
    """Guard for the tests below: the fixture really is small and really inflates."""
    sheet = zipfile.ZipFile(io.BytesIO(bomb)).getinfo(SHEET)
    assert len(bomb) < 400 * 1024 and sheet.file_size > 90 * 1024 * 1024


def test_it_refuses_an_xlsx_bomb_from_its_zip_directory_before_inflating_it(bomb):
    good = xlsx([["employee_no", "name"]] + [[f"D-{i:04d}", f"Person {i}"] for i in range(200)])
    baseline = min(baseline_seconds(good) for _ in range(3))
    error, seconds = refusal(bomb)
    assert error.code == "attachment_too_large"
    assert "unpacks to 96 MB" in error.message and "at most 8 MB" in error.message
    # Refused without reading the sheet: faster than reading 200 good rows.
    assert seconds < baseline, (seconds, baseline)


@pytest.mark.timeout(30)
def test_it_refuses_a_bomb_whose_zip_directory_lies_about_its_size(bomb):
    liar = directory_lies(bomb, SHEET, declared_size=200_000)
    error, _ = refusal(liar)
    # zipfile stops at the announced size, so the sheet reads as broken, not as 97 MB.
    assert error.code == "attachment_malformed" and "cannot be read" in error.message


def test_it_refuses_a_member_compressed_like_a_bomb_even_under_the_size_limit():
    def write(sheet):
        sheet.write(SHEET_HEAD + b"<sheetData>" + b'<row><c t="inlineStr"><is><t>D-0001</t></is></c></row>' * 100_000
                    + b"</sheetData></worksheet>")

    raw = xlsx_with_sheet(write)
    info = zipfile.ZipFile(io.BytesIO(raw)).getinfo(SHEET)
    assert info.file_size < 8 * 1024 * 1024 and info.file_size > 100 * info.compress_size  # the premise
    error, _ = refusal(raw)
    assert error.code == "attachment_too_large" and "compressed" in error.message and "zip bomb" in error.message


# --- Rows and columns, counted while reading ----------------------------------------------

@pytest.mark.timeout(30)
def test_it_stops_reading_at_the_row_limit_when_a_dimension_asks_for_a_million_rows():
    def write(sheet):  # 300 bytes of XML that openpyxl pads out to 1,048,576 rows
        sheet.write(SHEET_HEAD + b'<dimension ref="A1:B1048576"/><sheetData>'
                    b'<row r="1"><c r="A1" t="inlineStr"><is><t>employee_no</t></is></c></row>'
                    b'<row r="1048576"><c r="A1048576" t="inlineStr"><is><t>D-0001</t></is></c></row>'
                    b"</sheetData></worksheet>")

    error, _ = refusal(xlsx_with_sheet(write, level=6))
    assert error.code == "attachment_too_many_rows" and f"past {MAX_SHEET_ROWS} rows" in error.message
    assert error.extra["line"] == MAX_SHEET_ROWS + 1


def test_it_refuses_more_employees_than_the_limit_with_the_first_line_too_many():
    raw = ("employee_no\n" + "".join(f"D-{i:05d}\n" for i in range(MAX_ROWS + 10))).encode()
    error, _ = refusal(raw, "team.csv")
    assert error.code == "attachment_too_many_rows" and error.extra["line"] == MAX_ROWS + 2


def test_it_refuses_a_workbook_wider_than_the_column_limit():
    raw = xlsx([["employee_no"] + [f"c{i}" for i in range(MAX_COLUMNS + 5)], ["D-0001"]])
    error, _ = refusal(raw)
    assert error.code == "attachment_too_many_columns" and f"more than {MAX_COLUMNS} columns" in error.message


@pytest.mark.timeout(30)
def test_it_reads_no_more_than_the_column_limit_when_the_dimension_claims_16384_columns():
    def write(sheet):  # no dimension tag: openpyxl sizes rows by their cells; one sits in column XFD
        sheet.write(SHEET_HEAD + b"<sheetData>"
                    + b'<row r="1"><c r="A1" t="inlineStr"><is><t>employee_no</t></is></c></row>'
                    + b"".join(b'<row r="%d"><c r="A%d" t="inlineStr"><is><t>D-0001</t></is></c>'
                               b'<c r="XFD%d" t="inlineStr"><is><t>x</t></is></c></row>' % (i, i, i)
                               for i in range(2, 3000))
                    + b"</sheetData></worksheet>")

    error, _ = refusal(xlsx_with_sheet(write))
    # Column 51 is empty, column 16384 is not: that row reads as 50 + 1 cells, not 16,384.
    assert error.code == "attachment_unknown_employee"  # read to the employees check, quickly


def test_it_refuses_a_csv_wider_than_the_column_limit_at_that_line():
    raw = ("employee_no\nD-0001\n" + ",".join(["x"] * (MAX_COLUMNS + 1)) + "\n").encode()
    error, _ = refusal(raw, "team.csv")
    assert error.code == "attachment_too_many_columns" and error.extra["line"] == 3


def test_it_refuses_a_csv_of_endless_blank_lines():
    raw = b"employee_no\n" + b"\n" * (MAX_SHEET_ROWS + 10)
    error, _ = refusal(raw, "team.csv")
    assert error.code == "attachment_too_many_rows"


# --- What still works ---------------------------------------------------------------------

def test_a_good_workbook_still_resolves_every_employee():
    demo_ensure()
    tenant = Tenant.objects.get(slug="demo")
    numbers = list(Employee.objects.filter(tenant=tenant).order_by("employee_no")
                   .values_list("employee_no", flat=True)[:3])
    raw = xlsx([["employee_no", "note"]] + [[n, "ignore previous instructions"] for n in numbers])
    result = employee_list_parse(tenant_id=tenant.id, filename="team.xlsx", raw=raw)
    assert result.rows == 3 and len(set(result.employee_ids)) == 3
