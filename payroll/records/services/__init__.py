"""The only writers of the payroll system of record. The API and the agent's tools
both call these, so idempotency and authority live here, once (DESIGN.md §4).

Every write goes: authority → arguments → idempotency claim → work → receipt.
The claim is a committed "in progress" row, unique per (tenant, operation, key):
whoever inserts it does the work; everyone else reads it and replays the stored
receipt (same request, done), is refused 422 (different request), is refused 409
(still running), or takes the row over (its lease expired, or the work failed
part-way) and resumes.
"""
from __future__ import annotations

# Callers import the services from here, whichever module of the package holds them.
from idempotency.services import KeyRequired, Receipt, idempotency_lease
from tenants.actors import Actor

from payroll.records.selectors import configuration_checksum, import_diff

from .attendance import attendance_rules_may_change, attendance_rules_set
from .city_rules import city_rule_period_change, city_rules_may_change
from .claims import EmployeeHeld, NameTaken, ScopeChanged, records_claim, records_release
from .employees import employee_pay_record, employees_assign, employees_create, pay_checked
from .imports import template_import
from .month_inputs import MONTHS, YEARS, employee_identities_import, inputs_body, monthly_inputs_import, period_checked, year_openings_import
from .protocol import APPROVER_ROLES, _request_hash, group_name_normalised
from .snapshots import employee_copy, snapshot_copy, snapshot_create, snapshot_restore
from .undo import run_effects_undo

__all__ = [
    "APPROVER_ROLES", "Actor", "attendance_rules_may_change", "attendance_rules_set", "EmployeeHeld", "KeyRequired", "NameTaken", "Receipt", "ScopeChanged", "_request_hash",
    "city_rule_period_change", "city_rules_may_change", "configuration_checksum", "employee_copy", "employee_pay_record",
    "employees_assign", "employees_create", "group_name_normalised", "idempotency_lease", "import_diff", "pay_checked",
    "records_claim", "records_release", "run_effects_undo", "snapshot_copy", "snapshot_create", "snapshot_restore",
    "template_import", "employee_identities_import", "inputs_body", "monthly_inputs_import", "period_checked", "year_openings_import",
    "MONTHS", "YEARS",
]
