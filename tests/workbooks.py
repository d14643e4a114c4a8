"""Workbooks built in memory: a good one from rows, one whose sheet XML a test writes itself,
and the zip bomb the attachment limits and the hostile-input suite refuse."""
from __future__ import annotations

import io
import zipfile

SHEET = "xl/worksheets/sheet1.xml"
SHEET_HEAD = (b'<?xml version="1.0" encoding="UTF-8"?>'
              b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">')


def xlsx(rows: list[list[object]]) -> bytes:
    from openpyxl import Workbook

    workbook = Workbook()
    for row in rows:
        workbook.active.append(row)
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def xlsx_with_sheet(write_sheet, *, level: int = 9) -> bytes:
    """A real workbook whose first sheet's XML is written by `write_sheet(file)`."""
    source = zipfile.ZipFile(io.BytesIO(xlsx([["employee_no"], ["D-0001"]])))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as archive:
        for info in source.infolist():
            if info.filename == SHEET:
                with archive.open(SHEET, "w") as sheet:
                    write_sheet(sheet)
            else:
                archive.writestr(info, source.read(info.filename))
    return out.getvalue()


def xlsx_bomb(inflated_bytes: int = 97 * 1024 * 1024) -> bytes:
    """~300 KB that inflate to ~97 MB of sheet XML (one employee number per row),
    the shape of the workbook that held a server thread for 38 s."""
    row = b'<row><c t="inlineStr"><is><t>D-0001</t></is></c></row>'
    chunk = row * 20_000

    def write(sheet):
        sheet.write(SHEET_HEAD + b"<sheetData>")
        for _ in range(inflated_bytes // len(chunk)):
            sheet.write(chunk)
        sheet.write(b"</sheetData></worksheet>")

    return xlsx_with_sheet(write)
