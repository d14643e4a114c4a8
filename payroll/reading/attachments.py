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
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from decimal import Decimal, InvalidOperation

from django.utils.translation import gettext
from openpyxl import load_workbook

from config.api import DomainError
from config.names import name_normalised

from payroll.models import Employee

# Limits, each checked before or while reading, never after: a 339 KB workbook
# can inflate to ~100 MB of sheet XML, and a one-line dimension tag can ask for a
# million empty rows or 16,384 columns.
MAX_BYTES = 1024 * 1024                      # the upload itself (compressed, for XLSX)
MAX_UNCOMPRESSED_BYTES = 8 * 1024 * 1024     # all members of an XLSX together, inflated
MAX_COMPRESSION_RATIO = 100                  # per XLSX member; text XML rarely passes 20
RATIO_CHECKED_ABOVE = 256 * 1024             # tiny members have odd ratios and cost nothing
MAX_ZIP_MEMBERS = 200
MAX_ROWS = 5000                              # employees
MAX_SHEET_ROWS = MAX_ROWS + 1000             # rows read at all, blank ones included
MAX_COLUMNS = 50
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
    # Rows with a number the tenant does not have yet and a name: proposed as new employees
    # on the approval card, created on approval (payroll.agent.previews, assign_employees).
    new_employees: list[dict[str, Any]] = field(default_factory=list)
    # The pay the export gives for employees the tenant has (base salary, allowances, special
    # additional deductions): {"employee_id", "pay": {...}} each; written, where it differs from
    # the pay in force, by the approved step that assigns them. A new employee's pay travels
    # in its own row (new_employees[i]["pay"]).
    employee_pay: list[dict[str, Any]] = field(default_factory=list)
    # ID and bank columns the list carries (as its header names them): not taken here, said.
    identity_columns: list[str] = field(default_factory=list)


def _too_many_rows(line: int, max_rows: int = MAX_SHEET_ROWS) -> AttachmentError:
    return AttachmentError(gettext("the sheet goes on past %(rows)s rows (blank ones included); at most %(max)s "
                                   "employees per file.") % {"rows": max_rows, "max": max_rows - (MAX_SHEET_ROWS - MAX_ROWS)},
                           line=line, code="attachment_too_many_rows")


def _too_many_columns(line: int) -> AttachmentError:
    return AttachmentError(gettext("more than %(max)s columns; an employee list needs an employee_no or a name "
                                   "column and a few more.") % {"max": MAX_COLUMNS},
                           line=line, code="attachment_too_many_columns")


def _rows_csv(raw: bytes, max_rows: int = MAX_SHEET_ROWS) -> Iterator[list[str]]:
    """The CSV's rows, one at a time; stops with a refusal at the row or column limit."""
    if b"\x00" in raw:
        raise AttachmentError(gettext("This is not a text CSV file (it contains binary data)."), code="attachment_type")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[:err.start].count(b"\n") + 1
        raise AttachmentError(gettext("the file is not UTF-8 text."), line=line, code="attachment_encoding")
    try:
        # The header line only, and only its start: the sniffer's patterns are
        # slow on a megabyte-long line.
        dialect = csv.Sniffer().sniff(text.split("\n", 1)[0][:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    reader = csv.reader(io.StringIO(text), dialect, strict=True)
    try:
        for number, row in enumerate(reader, start=1):
            if number > max_rows:
                raise _too_many_rows(reader.line_num, max_rows)
            if len(row) > MAX_COLUMNS:
                raise _too_many_columns(reader.line_num)
            yield row
    except csv.Error as err:
        raise AttachmentError(gettext("the CSV cannot be read (%(err)s).") % {"err": err}, line=reader.line_num or 1,
                              code="attachment_malformed")


def _xlsx_archive_check(raw: bytes) -> None:
    """Refuse a workbook whose zip directory announces too much, before any
    member is inflated. The announced sizes are binding: zipfile never returns
    more than a member's declared size (a member that inflates further fails
    its CRC check), so this bounds all that openpyxl can read."""
    try:
        members = zipfile.ZipFile(io.BytesIO(raw)).infolist()
    except (zipfile.BadZipFile, ValueError, OSError):
        raise AttachmentError(gettext("The workbook cannot be read (its zip directory is damaged)."),
                              code="attachment_malformed")
    if len(members) > MAX_ZIP_MEMBERS:
        raise AttachmentError(gettext("The workbook holds %(len)s parts; a spreadsheet has a few dozen.")
                              % {"len": len(members)},
                              code="attachment_too_large")
    total = sum(m.file_size for m in members)
    if total > MAX_UNCOMPRESSED_BYTES:
        raise AttachmentError(gettext("The workbook unpacks to %(value)s MB; at most %(limit)s MB are read.")
                              % {"value": total // (1024 * 1024), "limit": MAX_UNCOMPRESSED_BYTES // (1024 * 1024)},
                              code="attachment_too_large")
    for member in members:
        if member.file_size > RATIO_CHECKED_ABOVE and \
                member.file_size > MAX_COMPRESSION_RATIO * max(member.compress_size, 1):
            raise AttachmentError(gettext("The workbook part %(value)s is compressed %(limit)s:1, which only a zip bomb does; save the sheet again or send a CSV.")
                                  % {"value": member.filename[:60], "limit": member.file_size // max(member.compress_size, 1)},
                                  code="attachment_too_large")


def _rows_xlsx(raw: bytes, max_rows: int = MAX_SHEET_ROWS) -> Iterator[list[str]]:
    """The first sheet's rows, streamed (openpyxl read-only), at most MAX_COLUMNS
    + 1 cells wide, stopping with a refusal at the row or column limit."""
    if not raw.startswith(b"PK\x03\x04") or not zipfile.is_zipfile(io.BytesIO(raw)):
        raise AttachmentError(gettext("This is not an XLSX workbook (its content is not a spreadsheet)."),
                              code="attachment_type")
    _xlsx_archive_check(raw)
    try:
        workbook = load_workbook(io.BytesIO(raw), read_only=True, data_only=True)
    except Exception as err:  # openpyxl raises many kinds for a broken workbook
        raise AttachmentError(gettext("The workbook cannot be read (%(name__)s).") % {"name__": type(err).__name__},
                              code="attachment_malformed")
    try:
        if not workbook.worksheets:
            raise AttachmentError(gettext("The workbook has no sheet."), code="attachment_empty")
        sheet = workbook.worksheets[0]
        if (sheet.max_column or 0) > MAX_COLUMNS:  # the dimension tag, when the file has one
            raise _too_many_columns(1)
        # max_col bounds each row's width whatever the dimension tag says; the
        # extra column tells a row that goes on past the limit.
        rows = sheet.iter_rows(max_col=MAX_COLUMNS + 1, values_only=True)
        number = 0
        while True:
            try:
                row = next(rows, None)
            except Exception as err:  # damaged XML, a member failing its CRC, …
                raise AttachmentError(gettext("The workbook cannot be read (%(name__)s).")
                                      % {"name__": type(err).__name__}, line=number + 1,
                                      code="attachment_malformed")
            if row is None:
                return
            number += 1
            if number > max_rows:
                raise _too_many_rows(number, max_rows)
            if len(row) > MAX_COLUMNS and row[MAX_COLUMNS] is not None:
                raise _too_many_columns(number)
            yield ["" if cell is None else str(cell) for cell in row[:MAX_COLUMNS]]
    finally:
        workbook.close()  # read-only mode keeps the archive open until closed


def table_rows(*, filename: str, raw: bytes, max_bytes: int = MAX_BYTES,
               max_rows: int = MAX_SHEET_ROWS) -> Iterator[list[str]]:
    """An uploaded table's rows (CSV or XLSX, told by the name's extension and checked against
    the content), streamed within the limits; refused before any row when the file is not one."""
    lowered = (filename or "").strip().lower()
    if not lowered.endswith(EXTENSIONS):
        raise AttachmentError(gettext("Attach a CSV or XLSX file (.csv or .xlsx)."), code="attachment_type")
    if len(raw) > max_bytes:
        raise AttachmentError(gettext("The file is larger than %(value)s KB.") % {"value": max_bytes // 1024},
                              code="attachment_too_large")
    if not raw.strip():
        raise AttachmentError(gettext("The file is empty."), code="attachment_empty")
    if lowered.endswith(".xlsx"):
        return _rows_xlsx(raw, max_rows)
    if raw.startswith(b"PK\x03\x04"):
        raise AttachmentError(gettext("This .csv file is really a workbook or an archive."), code="attachment_type")
    return _rows_csv(raw, max_rows)


def header_key(cell: str) -> str:
    """A header cell as the alias tables spell it: lower case, spaces and hyphens as "_"."""
    return (cell or "").strip().lower().replace(" ", "_").replace("-", "_").strip("*：:")


def _header_and_body(rows: Iterator[list[str]]) -> tuple[int, list[str], list[tuple[int, list[str]]]]:
    """The header's line and column names, and the non-blank rows after it,
    consumed one at a time: reading stops at the first refusal or past MAX_ROWS."""
    numbered = ((i, r) for i, r in enumerate(rows, start=1) if any((c or "").strip() for c in r))
    first = next(numbered, None)
    if first is None:
        raise AttachmentError(gettext("The file is empty."), code="attachment_empty")
    header_line, header = first
    columns = _header_columns(header)
    if not any(c in columns for c in KEY_COLUMNS):
        raise AttachmentError(gettext("the header needs an employee_no or a name column."), line=header_line,
                              code="attachment_header")
    body = []
    for line, row in numbered:
        if len(body) == MAX_ROWS:
            raise AttachmentError(gettext("at most %(MAX_ROWS)s employees per file.")
                                  % {"MAX_ROWS": MAX_ROWS}, line=line,
                                  code="attachment_too_many_rows")
        body.append((line, row))
    if not body:
        raise AttachmentError(gettext("the file has a header but no employees."), line=header_line,
                              code="attachment_empty")
    return header_line, columns, body


# HR exports name their columns many ways, in English and Chinese: each maps to ours.
HEADER_ALIASES = {
    "employee_no": ("employee_no", "employee_number", "employee_id", "emp_no", "emp_id", "staff_id", "staff_no",
                    "employee_#", "工号", "员工编号", "员工号", "职工号", "编号", "人员编号"),
    "name": ("name", "full_name", "employee_name", "employee", "staff_name", "姓名", "员工姓名", "名字"),
    "department": ("department", "dept", "部门", "所属部门"),
    "location": ("location", "city", "office", "城市", "工作地点", "地点"),
}


# What a bank and the tax bureau need (payroll.reading.identities reads them, for an admin): the
# chat's employee list does not take them, and says so.
IDENTITY_ALIASES = {
    "id_type": ("id_type", "id_document_type", "document_type", "证件类型"),
    "id_number": ("id_number", "id_no", "id_card_number", "document_number", "证件号码", "身份证号", "身份证号码"),
    "bank_account": ("bank_account", "bank_account_number", "account_number", "银行账号", "银行卡号", "工资卡号"),
    "bank_name": ("bank_name", "bank", "开户银行", "开户行", "银行名称"),
}
# Optional pay columns. An allowance column keeps the export's own name for the item.
PAY_ALIASES = {
    "base_salary": ("base_salary", "base_pay", "basic_salary", "salary", "monthly_salary", "monthly_base_salary",
                    "基本工资", "月薪", "基本月薪", "基础工资", "底薪"),
    "special_additional_deductions": ("special_additional_deductions", "special_additional_deduction",
                                      "special_deductions", "专项附加扣除", "专项附加扣除合计", "专项附加扣除（月）"),
    "effective_from": ("effective_from", "effective_date", "生效日期", "起薪日期"),
}
DEDUCTION_ALIASES = {
    "children_education": ("children_education", "childrens_education", "children's_education", "子女教育"),
    "elderly_support": ("elderly_support", "supporting_elderly", "赡养老人"),
    "housing_loan_interest": ("housing_loan_interest", "mortgage_interest", "住房贷款利息"),
    "housing_rent": ("housing_rent", "rent", "住房租金"),
    "continuing_education": ("continuing_education", "继续教育"),
    "infant_care": ("infant_care", "婴幼儿照护", "3岁以下婴幼儿照护", "三岁以下婴幼儿照护"),
}
ALLOWANCE_PREFIX = re.compile(r"^\s*(?:allowance|津贴|补贴)\s*[:：]\s*(?P<name>.+?)\s*$", re.IGNORECASE)
ALLOWANCE_WORDS = re.compile(r"(津贴|补贴|补助|餐补|房补|车补|话补|\ballowance\b)", re.IGNORECASE)


def _pay_column(cell: str, key: str) -> str | None:
    """A pay column's key ("base_salary", "deduction:elderly_support", "allowance:岗位津贴"), or None."""
    for ours, names in PAY_ALIASES.items():
        if key in names:
            return ours
    for kind, names in DEDUCTION_ALIASES.items():
        if key in names:
            return f"deduction:{kind}"
    prefixed = ALLOWANCE_PREFIX.match(cell)
    if prefixed:
        return f"allowance:{prefixed.group('name')[:60]}"
    if ALLOWANCE_WORDS.search(cell):
        return f"allowance:{cell.strip().strip('*：:')[:60]}"
    return None


def _header_columns(header: list[str]) -> list[str]:
    """The header's columns as our keys (工号 → employee_no, Employee ID → employee_no; 基本工资 →
    base_salary, 岗位津贴 → allowance:岗位津贴, 赡养老人 → deduction:elderly_support)."""
    columns = []
    for cell in header:
        key = header_key(cell)
        ours = next((ours for ours, names in HEADER_ALIASES.items() if key in names), None)
        columns.append(ours or _pay_column((cell or "").strip(), key) or key)
    return columns


def _amount(value: str, *, line: int, column: str) -> Decimal | None:
    """A money cell ("12,000", "¥12000.00", "12000元"), or None when blank; refused when not a
    non-negative amount."""
    cleaned = re.sub(r"[\s,，¥￥]|元$|CNY$|RMB$", "", value or "", flags=re.IGNORECASE)
    if not cleaned:
        return None
    try:
        amount = Decimal(cleaned)
    except InvalidOperation:
        amount = None
    if amount is None or not amount.is_finite() or amount < 0 or amount >= Decimal("1e10"):
        raise AttachmentError(gettext("“%(value)s” in column %(column)s is not an amount.")
                              % {"value": value[:40], "column": column[:60]}, line=line, code="attachment_malformed")
    return amount.quantize(Decimal("0.01"))


def _pay_of(values: dict[str, str], *, line: int) -> dict[str, Any] | None:
    """The pay a row gives (amounts as strings), or None when it gives none."""
    base = _amount(values.get("base_salary", ""), line=line, column="base_salary")
    allowances = {}
    for column, value in values.items():
        if column.startswith("allowance:"):
            amount = _amount(value, line=line, column=column.split(":", 1)[1])
            if amount is not None:
                allowances[column.split(":", 1)[1]] = str(amount)
    kinds = {}
    for column, value in values.items():
        if column.startswith("deduction:"):
            amount = _amount(value, line=line, column=column.split(":", 1)[1])
            if amount is not None:
                kinds[column.split(":", 1)[1]] = str(amount)
    total = _amount(values.get("special_additional_deductions", ""), line=line,
                    column="special_additional_deductions")
    by_kind = sum((Decimal(v) for v in kinds.values()), Decimal("0.00"))
    if total is not None and kinds and total != by_kind:
        raise AttachmentError(gettext("the special additional deductions total %(total)s, but the deductions by "
                                      "kind add up to %(sum)s.") % {"total": total, "sum": by_kind},
                              line=line, code="attachment_malformed")
    if base is None and not allowances and total is None and not kinds:
        return None
    if base is None:
        raise AttachmentError(gettext("the row gives allowances or deductions but no base salary."), line=line,
                              code="attachment_malformed")
    pay: dict[str, Any] = {"base_salary": str(base), "allowances": allowances,
                           "special_additional_deductions": str(total if total is not None else by_kind),
                           "deductions_breakdown": kinds}
    effective = (values.get("effective_from") or "").strip()
    if effective:
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", effective[:10]):
            raise AttachmentError(gettext("“%(value)s” is not a date (YYYY-MM-DD).") % {"value": effective[:40]},
                                  line=line, code="attachment_malformed")
        pay["effective_from"] = effective[:10]
    return pay


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
    name = (filename or "").strip()
    if not name.lower().endswith(EXTENSIONS):
        raise AttachmentError(gettext("Attach a CSV or XLSX employee list (.csv or .xlsx)."), code="attachment_type")
    rows = table_rows(filename=name, raw=raw)
    try:
        header_line, columns, body = _header_and_body(rows)
    finally:
        rows.close()  # stop reading (and close the workbook) whatever happened
    employees = list(Employee.objects.filter(tenant_id=tenant_id).values_list("id", "employee_no", "name"))
    by_no = {no.strip().lower(): pk for pk, no, _ in employees}
    by_name: dict[str, list[int]] = {}
    for pk, _, person in employees:
        for key in _name_keys(person):
            by_name.setdefault(key, []).append(pk)
    ids: list[str] = []
    new: list[dict[str, Any]] = []
    paid: list[dict[str, Any]] = []
    seen: set[str] = set()  # a list's `in` would make 5,000 rows cost 12 million comparisons
    for line, row in body:
        if len(row) > len(columns):
            raise AttachmentError(gettext("%(len)s values but the header has %(len2)s columns.")
                                  % {"len": len(row), "len2": len(columns)}, line=line,
                                  code="attachment_malformed")
        values = dict(zip(columns, [(c or "").strip() for c in row]))
        number, person = values.get("employee_no", ""), values.get("name", "")
        if number:
            pk = by_no.get(number.lower())
            if pk is None and person:
                # Not in the system of record yet: a new employee, proposed to the approver.
                if number.lower() in seen:
                    raise AttachmentError(gettext("this employee is listed twice."), line=line,
                                          code="attachment_duplicate")
                seen.add(number.lower())
                try:  # a new employee's name reaches the approval card: stored as people read it
                    person = name_normalised(person, field=gettext("employee name"), max_length=200)
                except DomainError as err:
                    raise AttachmentError(err.message, line=line, code="attachment_malformed") from None
                row_new: dict[str, Any] = {"employee_no": number[:40], "name": person,
                                           "department": values.get("department", "")[:100],
                                           "location": values.get("location", "")[:100]}
                pay = _pay_of(values, line=line)
                if pay is not None:
                    row_new["pay"] = pay
                new.append(row_new)
                continue
            if pk is None:
                raise AttachmentError(gettext("no employee with number “%(value)s”.")
                                      % {"value": number[:40]}, line=line,
                                      code="attachment_unknown_employee")
        elif person:
            found = by_name.get(person.lower(), [])
            if len(found) != 1:
                message = (gettext("no employee named “%(name)s”; give the employee_no.") if not found
                           else gettext("several employees named “%(name)s”; give the employee_no."))
                raise AttachmentError(message % {"name": person[:40]}, line=line,
                                      code="attachment_unknown_employee")
            pk = found[0]
        else:
            raise AttachmentError(gettext("the row has neither an employee_no nor a name."), line=line,
                                  code="attachment_malformed")
        if str(pk) in seen:
            raise AttachmentError(gettext("this employee is listed twice."), line=line, code="attachment_duplicate")
        seen.add(str(pk))
        ids.append(str(pk))
        pay = _pay_of(values, line=line)
        if pay is not None:
            paid.append({"employee_id": str(pk), "pay": pay})
    identity = {alias for aliases in IDENTITY_ALIASES.values() for alias in aliases}
    return EmployeeList(filename=name[:200], employee_ids=ids, rows=len(ids) + len(new), new_employees=new,
                        employee_pay=paid, identity_columns=[c for c in columns if c in identity])
