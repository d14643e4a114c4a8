"""Tables of figures per employee that HR uploads (CSV or XLSX, English or Chinese headers): a
month's attendance and commission, a year's opening balances. Read, never written: every header
is said with what it was read as (or "unknown", its values kept, not dropped), and every row that
cannot be used is refused with its row number, the column as the file names it, and a code —
all of them, not the first, so one correction fixes the file."""
from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from django.utils.translation import gettext

from payroll.models import Employee

from .attachments import HEADER_ALIASES, MAX_SHEET_ROWS, MAX_ROWS, AttachmentError, header_key, table_rows

# A group's month can be large (the bench pays 10,000 people): more rows, a bigger file.
MAX_FIGURE_ROWS = 20_000
MAX_FIGURE_BYTES = 4 * 1024 * 1024
MAX_FIGURE = Decimal("1e10")

EMPLOYEE_KEYS = {"employee_no": HEADER_ALIASES["employee_no"] + ("employee_no.",),
                 "name": HEADER_ALIASES["name"]}

# The month's inputs, as HR exports name them (header_key spelling) → the evaluator's input names.
INPUT_ALIASES = {
    "personal_leave_days": ("personal_leave_days", "personal_leave", "事假天数", "事假", "事假(天)", "事假（天）"),
    "sick_leave_days": ("sick_leave_days", "sick_leave", "病假天数", "病假", "病假(天)", "病假（天）"),
    "overtime_workday_hours": ("overtime_workday_hours", "workday_overtime_hours", "weekday_overtime_hours",
                               "工作日加班小时", "工作日加班时数", "平时加班小时", "工作日加班"),
    "overtime_restday_hours": ("overtime_restday_hours", "rest_day_overtime_hours", "restday_overtime_hours",
                               "overtime_rest_day_hours", "休息日加班小时", "休息日加班时数", "周末加班小时", "休息日加班"),
    "overtime_holiday_hours": ("overtime_holiday_hours", "holiday_overtime_hours", "节假日加班小时",
                               "法定节假日加班小时", "节假日加班时数", "节假日加班"),
    "sales_amount": ("sales_amount", "sales", "sales_amount_(cny)", "销售额", "销售金额", "业绩"),
    "other_amount": ("other_amount", "other", "其他", "其他金额", "其它"),
}
INPUT_HEADERS_ZH = {"personal_leave_days": "事假天数", "sick_leave_days": "病假天数",
                    "overtime_workday_hours": "工作日加班小时", "overtime_restday_hours": "休息日加班小时",
                    "overtime_holiday_hours": "节假日加班小时", "sales_amount": "销售额", "other_amount": "其他"}
HOUR_INPUTS = ("overtime_workday_hours", "overtime_restday_hours", "overtime_holiday_hours")

# A year's opening balances from the previous payroll system (累计 figures of the withholding method).
OPENING_ALIASES = {
    "cumulative_income": ("cumulative_income", "累计收入额", "累计收入"),
    "cumulative_contributions": ("cumulative_contributions", "cumulative_special_deductions",
                                 "累计专项扣除"),
    "cumulative_special_additional_deductions": ("cumulative_special_additional_deductions",
                                                 "累计专项附加扣除"),
    "months_employed": ("months_employed", "已任职月数", "任职月数"),
    "cumulative_tax_withheld": ("cumulative_tax_withheld", "cumulative_tax_prepaid", "累计已预缴税额",
                                "累计已扣缴税额"),
}


@dataclass
class FigureRow:
    line: int
    employee_id: int
    values: dict[str, Decimal | str]
    extra: dict[str, str]


@dataclass
class FiguresRead:
    """`columns`: [{header, read_as}] in the file's order; `refusals`: [{row, column, code, message}]."""

    columns: list[dict[str, str]]
    rows: list[FigureRow] = field(default_factory=list)
    refusals: list[dict] = field(default_factory=list)

    def refuse(self, line: int, column: str, code: str, message: str) -> None:
        self.refusals.append({"row": line, "column": column, "code": code, "message": message})

    def keeping(self, rows: list[FigureRow]) -> "FiguresRead":
        """Only `rows` kept (those a later check did not refuse); the refusals in the file's order."""
        self.rows = rows
        self.refusals.sort(key=lambda r: (r["row"], r["column"]))
        return self

    @property
    def unknown_columns(self) -> list[str]:
        return [c["header"] for c in self.columns if c["read_as"] == "unknown"]


def _read_as(cell: str, aliases: dict[str, tuple[str, ...]]) -> str:
    key = header_key(cell)
    for ours, names in (*EMPLOYEE_KEYS.items(), *aliases.items()):
        if key in names:
            return ours
    return "unknown"


def _figure(value: str) -> Decimal | None:
    """A cell's number ("1,200", "¥3000", " 4.5 "), None when blank; InvalidOperation when not one."""
    cleaned = re.sub(r"[\s,，¥￥]|元$", "", value or "")
    if not cleaned:
        return None
    if not re.fullmatch(r"[+-]?\d+(\.\d{1,4})?", cleaned):
        raise InvalidOperation(cleaned)
    return Decimal(cleaned)


def figures_read(*, tenant_id: int, filename: str, raw: bytes, aliases: dict[str, tuple[str, ...]],
                 texts: frozenset[str] = frozenset()) -> FiguresRead:
    """The file's rows resolved to the tenant's employees (by number, else by a name only one
    employee has), each figure a non-negative Decimal. A file that is not a table, or whose
    header names no employee column or none of `aliases`, is refused whole (AttachmentError);
    a row's problems are listed in `refusals` and the row left out of `rows`. The kinds in `texts`
    are kept as the cell's text instead."""
    rows = table_rows(filename=filename, raw=raw, max_bytes=MAX_FIGURE_BYTES,
                      max_rows=MAX_FIGURE_ROWS + (MAX_SHEET_ROWS - MAX_ROWS))
    try:
        numbered = ((i, r) for i, r in enumerate(rows, start=1) if any((c or "").strip() for c in r))
        first = next(numbered, None)
        if first is None:
            raise AttachmentError(gettext("The file is empty."), code="attachment_empty")
        header_line, header = first
        headers = [(c or "").strip() for c in header]
        read = FiguresRead(columns=[{"header": h, "read_as": _read_as(h, aliases)} for h in headers])
        kinds = [c["read_as"] for c in read.columns]
        if "employee_no" not in kinds and "name" not in kinds:
            raise AttachmentError(gettext("the header needs an employee number (工号) or a name (姓名) column."),
                                  line=header_line, code="attachment_header")
        if not set(kinds) & set(aliases):
            raise AttachmentError(gettext("the header names none of the figures this file is for."),
                                  line=header_line, code="attachment_header")
        body = list(numbered)
    finally:
        rows.close()
    if not body:
        raise AttachmentError(gettext("the file has a header but no rows."), line=header_line, code="attachment_empty")
    _rows_resolve(read, tenant_id=tenant_id, headers=headers, kinds=kinds, body=body, aliases=aliases, texts=texts)
    return read


def _rows_resolve(read: FiguresRead, *, tenant_id: int, headers: list[str], kinds: list[str],
                  body: list[tuple[int, list[str]]], aliases: dict[str, tuple[str, ...]],
                  texts: frozenset[str]) -> None:
    employees = list(Employee.objects.filter(tenant_id=tenant_id).values_list("id", "employee_no", "name"))
    by_no = {no.strip().lower(): pk for pk, no, _ in employees}
    by_name: dict[str, list[int]] = {}
    for pk, _, person in employees:
        by_name.setdefault(person.strip().lower(), []).append(pk)
    no_header = next((h for h, k in zip(headers, kinds) if k == "employee_no"), None)
    name_header = next((h for h, k in zip(headers, kinds) if k == "name"), None)
    seen: set[int] = set()
    for line, row in body:
        if len(row) > len(headers) and any((c or "").strip() for c in row[len(headers):]):
            read.refuse(line, "", "too_many_values", gettext("%(len)s values but the header has %(len2)s columns.")
                        % {"len": len(row), "len2": len(headers)})
            continue
        cells = [(c or "").strip() for c in row] + [""] * (len(headers) - len(row))
        number = next((c for c, k in zip(cells, kinds) if k == "employee_no"), "")
        person = next((c for c, k in zip(cells, kinds) if k == "name"), "")
        if number:
            pk = by_no.get(number.lower())
            if pk is None:
                read.refuse(line, no_header, "unknown_employee", gettext("No employee with number “%(value)s”.")
                            % {"value": number[:40]})
                continue
        elif person:
            found = by_name.get(person.lower(), [])
            if len(found) != 1:
                read.refuse(line, name_header, "unknown_employee",
                            (gettext("No employee named “%(name)s”; give the employee number.") if not found else
                             gettext("Several employees are named “%(name)s”; give the employee number."))
                            % {"name": person[:40]})
                continue
            pk = found[0]
        else:
            read.refuse(line, no_header or name_header, "employee_missing",
                        gettext("The row names no employee (no number, no name)."))
            continue
        if pk in seen:
            read.refuse(line, no_header or name_header, "duplicate_employee",
                        gettext("This employee is already in an earlier row."))
            continue
        seen.add(pk)
        values, extra, good = {}, {}, True
        for header, kind, cell in zip(headers, kinds, cells):
            if kind == "unknown":
                if cell:
                    extra[header or "?"] = cell[:200]
                continue
            if kind not in aliases:
                continue
            if kind in texts:  # kept as written (an account number is text, not a figure)
                if cell:
                    values[kind] = cell[:200]
                continue
            try:
                figure = _figure(cell)
            except InvalidOperation:
                read.refuse(line, header, "not_a_number", gettext("“%(value)s” is not a number.")
                            % {"value": cell[:40]})
                good = False
                continue
            if figure is None:
                continue
            if figure < 0:
                read.refuse(line, header, "negative", gettext("%(value)s is negative; a figure here is 0 or more.")
                            % {"value": cell[:40]})
                good = False
            elif figure >= MAX_FIGURE:
                read.refuse(line, header, "too_large", gettext("%(value)s is too large.") % {"value": cell[:40]})
                good = False
            else:
                values[kind] = figure
        if good:
            read.rows.append(FigureRow(line=line, employee_id=pk, values=values, extra=extra))


def _header_of(read: FiguresRead, name: str) -> str:
    return next((c["header"] for c in read.columns if c["read_as"] == name), name)


def employee_header(read: FiguresRead) -> str:
    """The column a row's employee was read from: the number's when the file has one."""
    kinds = {c["read_as"] for c in read.columns}
    return _header_of(read, "employee_no" if "employee_no" in kinds else "name")


def monthly_inputs_read(*, tenant_id: int, group_id: int, year: int, month: int, filename: str,
                        raw: bytes) -> FiguresRead:
    """A group's month of attendance and commission: the figures read, and refused besides the
    table's own refusals: an employee not in the group; more absent days (personal and sick
    leave) than the month has; more overtime hours of a kind than the month's hours."""
    read = figures_read(tenant_id=tenant_id, filename=filename, raw=raw, aliases=INPUT_ALIASES)
    members = set(Employee.objects.filter(tenant_id=tenant_id, group_id=group_id).values_list("id", flat=True))
    days = calendar.monthrange(year, month)[1]
    kept = []
    for row in read.rows:
        if row.employee_id not in members:
            read.refuse(row.line, employee_header(read), "not_in_group",
                        gettext("This employee is not in the group."))
            continue
        absent = row.values.get("personal_leave_days", Decimal(0)) + row.values.get("sick_leave_days", Decimal(0))
        good = True
        if absent > days:
            column = "sick_leave_days" if "sick_leave_days" in row.values else "personal_leave_days"
            read.refuse(row.line, _header_of(read, column), "too_many_absent_days",
                        gettext("%(absent)s absent days (personal and sick leave) but the month has %(days)s days.")
                        % {"absent": absent, "days": days})
            good = False
        for name in HOUR_INPUTS:
            if row.values.get(name, Decimal(0)) > days * 24:
                read.refuse(row.line, _header_of(read, name), "too_many_hours",
                            gettext("%(hours)s hours but the month has %(max)s hours.")
                            % {"hours": row.values[name], "max": days * 24})
                good = False
        if good:
            kept.append(row)
    return read.keeping(kept)


def year_openings_read(*, tenant_id: int, filename: str, raw: bytes) -> FiguresRead:
    """A year's opening balances: the figures read, and refused besides the table's own: months
    employed not a whole number from 0 to 11 (an opening precedes at least one month here);
    a row without cumulative income or months employed."""
    read = figures_read(tenant_id=tenant_id, filename=filename, raw=raw, aliases=OPENING_ALIASES)
    kept = []
    for row in read.rows:
        months = row.values.get("months_employed")
        good = True
        for required in ("cumulative_income", "months_employed"):
            if required not in row.values:
                read.refuse(row.line, _header_of(read, required), "missing",
                            gettext("This figure is required."))
                good = False
        if months is not None and (months != months.to_integral_value() or not 0 <= months <= 11):
            read.refuse(row.line, _header_of(read, "months_employed"), "months_out_of_range",
                        gettext("Months employed is a whole number from 0 to 11; %(value)s is refused.")
                        % {"value": months})
            good = False
        if good:
            kept.append(row)
    return read.keeping(kept)
