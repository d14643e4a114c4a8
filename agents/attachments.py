"""Employee-list attachments (CSV or XLSX): checked by extension *and* content,
size-limited, and read as data only — a cell that reads like an instruction is a
cell. A malformed file is refused with the line and the reason, before anything
is written; a good one yields the tenant's employee ids, which travel as run
parameters (program state), never through the model."""
from __future__ import annotations

import csv
import io
import re
import zipfile
from dataclasses import dataclass, field

from config.api import DomainError

MAX_BYTES = 1024 * 1024
MAX_ROWS = 5000
EXTENSIONS = (".csv", ".xlsx")
KEY_COLUMNS = ("employee_no", "name")


class AttachmentError(DomainError):
    code = "attachment_invalid"

    def __init__(self, message: str, *, line: int | None = None, code: str | None = None):
        super().__init__(message if line is None else f"Line {line}: {message}", code=code,
                         extra={"line": line} if line is not None else {})


@dataclass
class EmployeeList:
    filename: str
    employee_ids: list[str] = field(default_factory=list)
    rows: int = 0


def _rows_csv(raw: bytes) -> list[list[str]]:
    if b"\x00" in raw:
        raise AttachmentError("This is not a text CSV file (it contains binary data).", code="attachment_type")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[:err.start].count(b"\n") + 1
        raise AttachmentError("the file is not UTF-8 text.", line=line, code="attachment_encoding")
    try:
        dialect = csv.Sniffer().sniff(text.split("\n", 1)[0], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    reader = csv.reader(io.StringIO(text), dialect, strict=True)
    rows: list[list[str]] = []
    try:
        for row in reader:
            rows.append(row)
    except csv.Error as err:
        raise AttachmentError(f"the CSV cannot be read ({err}).", line=reader.line_num or 1,
                              code="attachment_malformed")
    return rows


def _rows_xlsx(raw: bytes) -> list[list[str]]:
    if not raw.startswith(b"PK\x03\x04") or not zipfile.is_zipfile(io.BytesIO(raw)):
        raise AttachmentError("This is not an XLSX workbook (its content is not a spreadsheet).",
                              code="attachment_type")
    from openpyxl import load_workbook

    try:
        sheet = load_workbook(io.BytesIO(raw), read_only=True, data_only=True).worksheets[0]
    except Exception as err:  # openpyxl raises many kinds for a broken workbook
        raise AttachmentError(f"The workbook cannot be read ({type(err).__name__}).", code="attachment_malformed")
    return [["" if cell is None else str(cell) for cell in row] for row in sheet.iter_rows(values_only=True)]


# HR exports name their columns many ways, in English and Chinese: each maps to ours.
HEADER_ALIASES = {
    "employee_no": ("employee_no", "employee_number", "employee_id", "emp_no", "emp_id", "staff_id", "staff_no",
                    "employee_#", "工号", "员工编号", "员工号", "职工号", "编号", "人员编号"),
    "name": ("name", "full_name", "employee_name", "employee", "staff_name", "姓名", "员工姓名", "名字"),
    "department": ("department", "dept", "部门", "所属部门"),
    "location": ("location", "city", "office", "城市", "工作地点", "地点"),
}


def _header_columns(header: list[str]) -> list[str]:
    """The header's columns as our keys (工号 → employee_no, Employee ID → employee_no)."""
    columns = []
    for cell in header:
        key = (cell or "").strip().lower().replace(" ", "_").replace("-", "_").strip("*：:")
        columns.append(next((ours for ours, names in HEADER_ALIASES.items() if key in names), key))
    return columns


def _name_keys(person: str) -> list[str]:
    """A stored name ("Zhang Wei 张伟") is found by its whole, its Latin or its Chinese part."""
    whole = person.strip().lower()
    keys = [whole]
    latin = " ".join(re.findall(r"[a-z][a-z'-]*", whole))
    chinese = "".join(re.findall(r"[\u4e00-\u9fff]+", whole))
    keys += [k for k in (latin, chinese) if k and k != whole]
    return keys


ERRORS_ZH = {
    "attachment_type": "请附上 CSV 或 XLSX 格式的员工名单。",
    "attachment_too_large": "文件太大了。",
    "attachment_empty": "文件是空的，或只有表头没有员工。",
    "attachment_encoding": "文件不是 UTF-8 编码的文本。",
    "attachment_header": "表头需要有“工号”或“姓名”列（也可以是 Employee ID / Name）。",
    "attachment_unknown_employee": "找不到这名员工（或同名的有好几位，请填写工号）：{detail}",
    "attachment_duplicate": "这名员工在名单里出现了两次。",
    "attachment_malformed": "这一行的格式不对。",
    "attachment_too_many_rows": "名单里的员工太多了。",
}


def attachment_error_localised(err: AttachmentError, lang: str) -> AttachmentError:
    """The same error in the user's language (Chinese for a message written in Chinese)."""
    if lang != "zh" or err.code not in ERRORS_ZH:
        return err
    detail = "".join(re.findall(r"“[^”]*”", err.message))
    message = ERRORS_ZH[err.code].format(detail=detail)
    line = (err.extra or {}).get("line")
    localised = AttachmentError(f"第 {line} 行：{message}" if line else message, code=err.code)
    localised.extra = err.extra
    return localised


def employee_list_parse(*, tenant_id: int, filename: str, raw: bytes, lang: str = "en") -> EmployeeList:
    """The list parsed and checked; errors in the user's language."""
    try:
        return _employee_list_parse(tenant_id=tenant_id, filename=filename, raw=raw)
    except AttachmentError as err:
        raise attachment_error_localised(err, lang) from err


def _employee_list_parse(*, tenant_id: int, filename: str, raw: bytes) -> EmployeeList:
    """Validate the upload and resolve each row to one of the tenant's employees."""
    from payroll.models import Employee

    name = (filename or "").strip()
    lowered = name.lower()
    if not lowered.endswith(EXTENSIONS):
        raise AttachmentError("Attach a CSV or XLSX employee list (.csv or .xlsx).", code="attachment_type")
    if len(raw) > MAX_BYTES:
        raise AttachmentError(f"The file is larger than {MAX_BYTES // 1024} KB.", code="attachment_too_large")
    if not raw.strip():
        raise AttachmentError("The file is empty.", code="attachment_empty")
    if lowered.endswith(".xlsx"):
        rows = _rows_xlsx(raw)
    else:
        if raw.startswith(b"PK\x03\x04"):
            raise AttachmentError("This .csv file is really a workbook or an archive.", code="attachment_type")
        rows = _rows_csv(raw)
    numbered = [(i, r) for i, r in enumerate(rows, start=1) if any((c or "").strip() for c in r)]
    if not numbered:
        raise AttachmentError("The file is empty.", code="attachment_empty")
    header_line, header = numbered[0]
    columns = _header_columns(header)
    keys = [c for c in KEY_COLUMNS if c in columns]
    if not keys:
        raise AttachmentError("the header needs an employee_no or a name column.", line=header_line,
                              code="attachment_header")
    body = numbered[1:]
    if not body:
        raise AttachmentError("the file has a header but no employees.", line=header_line, code="attachment_empty")
    if len(body) > MAX_ROWS:
        raise AttachmentError(f"at most {MAX_ROWS} employees per file.", line=body[MAX_ROWS][0],
                              code="attachment_too_many_rows")
    employees = list(Employee.objects.filter(tenant_id=tenant_id).values_list("id", "employee_no", "name"))
    by_no = {no.strip().lower(): pk for pk, no, _ in employees}
    by_name: dict[str, list[int]] = {}
    for pk, _, person in employees:
        for key in _name_keys(person):
            by_name.setdefault(key, []).append(pk)
    ids: list[str] = []
    for line, row in body:
        if len(row) > len(columns):
            raise AttachmentError(f"{len(row)} values but the header has {len(columns)} columns.", line=line,
                                  code="attachment_malformed")
        values = dict(zip(columns, [(c or "").strip() for c in row]))
        number, person = values.get("employee_no", ""), values.get("name", "")
        if number:
            pk = by_no.get(number.lower())
            if pk is None:
                raise AttachmentError(f"no employee with number “{number[:40]}”.", line=line,
                                      code="attachment_unknown_employee")
        elif person:
            found = by_name.get(person.lower(), [])
            if len(found) != 1:
                what = "no employee" if not found else "several employees"
                raise AttachmentError(f"{what} named “{person[:40]}”; give the employee_no.", line=line,
                                      code="attachment_unknown_employee")
            pk = found[0]
        else:
            raise AttachmentError("the row has neither an employee_no nor a name.", line=line,
                                  code="attachment_malformed")
        if str(pk) in ids:
            raise AttachmentError("this employee is listed twice.", line=line, code="attachment_duplicate")
        ids.append(str(pk))
    return EmployeeList(filename=name[:200], employee_ids=ids, rows=len(ids))
