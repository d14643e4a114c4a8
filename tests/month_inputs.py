"""Plain helpers for the month's data tests: a group of the demo tenant with three employees,
and files as HR exports them."""
from __future__ import annotations

import csv
import io

from openpyxl import Workbook

from payroll.models import Employee, PayrollGroup
from tests.payroll import tenant


def sales_group(name: str = "Shanghai Sales", size: int = 3) -> tuple[PayrollGroup, list[Employee]]:
    t = tenant("demo")
    group = PayrollGroup.objects.create(tenant=t, name=name)
    people = list(Employee.objects.filter(tenant=t, group__isnull=True).order_by("employee_no")[:size])
    Employee.objects.filter(id__in=[p.id for p in people]).update(group=group)
    return group, people


def csv_of(rows: list[list[object]]) -> bytes:
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    return out.getvalue().encode("utf-8")


def xlsx_of(rows: list[list[object]]) -> bytes:
    book = Workbook()
    sheet = book.active
    for row in rows:
        sheet.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def resident_id(prefix17: str) -> str:
    """A resident ID number with its GB 11643 check character."""
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    return prefix17 + "10X98765432"[sum(int(d) * w for d, w in zip(prefix17, weights)) % 11]
