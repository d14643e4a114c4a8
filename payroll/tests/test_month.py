"""The payroll month as a workflow: gather → compute → one approval → close → verify; the
second month withholds cumulatively from the first; a reopen voids the files and makes the
next month compute again; a second start is a 409; a close run twice writes one set."""
from decimal import Decimal as D
from unittest import mock

import pytest

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from config.api import Conflict
from config.words import words_render
from payroll.models import FileStatus, MonthFile, MonthStatus, Payslip, PayslipStatus, PayrollMonth
from payroll.records import months
from payroll.records.month_files import bank_file_totals, tax_declaration_totals
from payroll.tests import reference_tax as ref
from tests.helpers import drive, membership, statuses
from tests.payroll import api, month_group, month_inputs
from workflows import cards
from workflows.services import node_input_answer

pytestmark = pytest.mark.django_db
NOVEMBER = {"E-001": {"sales_amount": "100000", "overtime_workday_hours": "10", "overtime_restday_hours": "8",
                      "overtime_holiday_hours": "3", "personal_leave_days": "1", "sick_leave_days": "2"},
            "E-002": {"sales_amount": "12345.67", "overtime_workday_hours": "7.5", "personal_leave_days": "1.5",
                      "overtime_restday_hours": "0", "overtime_holiday_hours": "0", "sick_leave_days": "0"},
            "E-003": {"sales_amount": "0", "overtime_workday_hours": "0", "overtime_restday_hours": "0",
                      "overtime_holiday_hours": "0", "personal_leave_days": "0", "sick_leave_days": "0"}}


@pytest.fixture
def group(demo):
    return month_group()


def start(group, month, username="alice"):
    started = months.month_start(membership=membership(username), group_id=group.id, year=2026, month=month)
    return started.month, drive(started.run)


def approve(run, username="bob"):
    approval = ApprovalRequest.objects.get(run=run, status="pending")
    approval_decide(membership=membership(username), approval_id=approval.id, verdict="approved")
    return drive(run)


def rendered(rows) -> str:
    """The card's words as an approver reads them (English)."""
    out = []

    def walk(value):
        if isinstance(value, dict):
            if "words" in value and value.get("row") == "text":
                out.append(words_render(value["words"], "en"))
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, str):
            out.append(value)
    walk(rows)
    return " | ".join(out)


def closed_november(group):
    month_inputs(group, 2026, 11, NOVEMBER)
    month, run = start(group, 11)
    assert run.status == "awaiting_approval", statuses(run)
    return month, approve(run)


def test_it_closes_november_with_one_approval_and_files_that_add_up(group):
    month_inputs(group, 2026, 11, NOVEMBER)
    month, run = start(group, 11)
    assert statuses(run) == {"gather": "completed", "compute": "completed", "close": "awaiting_approval",
                             "verify": "pending"}
    month.refresh_from_db()
    assert month.status == MonthStatus.AWAITING_APPROVAL and month.totals["headcount"] == 3
    card = rendered(cards.card_rows(ApprovalRequest.objects.get(run=run, status="pending")))
    assert "Headcount" in card and month.totals["net"] in card and "Sample payslip" in card
    assert "overtime_workday_hours * hourly_wage * overtime_workday_rate" in card
    assert "treated as having joined this month" in card  # no opening, no closed month: said
    assert "6222" not in card and "310101" not in card  # no bank or ID numbers on the card

    run = approve(run)
    assert run.status == "completed", statuses(run)
    month.refresh_from_db()
    slips = list(Payslip.objects.filter(month=month))
    assert month.status == MonthStatus.CLOSED and {s.status for s in slips} == {PayslipStatus.FINAL}
    files = {f.kind: bytes(f.content) for f in MonthFile.objects.filter(month=month, status=FileStatus.CURRENT)}
    assert sorted(files) == ["bank_csv", "bank_xlsx", "tax_xlsx"]
    net, tax = sum(s.net for s in slips), sum(s.tax for s in slips)
    assert bank_file_totals(files["bank_csv"], fmt="csv").total == net
    assert bank_file_totals(files["bank_xlsx"], fmt="xlsx").total == net
    assert tax_declaration_totals(files["tax_xlsx"]).tax == tax
    e1 = next(s for s in slips if s.employee.employee_no == "E-001")
    assert {i["code"]: i["amount"] for i in e1.items}["ot_holiday"] == "1125.00"


def test_december_withholds_cumulatively_from_november_to_the_cent(group):
    november, _ = closed_november(group)
    december, run = start(group, 12)
    assert run.status == "awaiting_input"  # December has no inputs: asked, not assumed
    node_input_answer(membership=membership("alice"), run_id=run.id, answer="compute without inputs")
    run = drive(run)
    assert run.status == "awaiting_approval"
    card = rendered(cards.card_rows(ApprovalRequest.objects.get(run=run, status="pending")))
    assert "Tax continues from this year's closed months for 3 employees" in card
    for number in ("E-001", "E-002", "E-003"):
        nov = Payslip.objects.get(month=november, employee__employee_no=number)
        dec = Payslip.objects.get(month=december, employee__employee_no=number)
        lines = ref.withhold([ref.Month(income=s.gross, pension=D(s.withholding["pension"]),
                                        medical=D(s.withholding["medical"]),
                                        unemployment=D(s.withholding["unemployment"]),
                                        housing_fund=D(s.withholding["housing_fund"])) for s in (nov, dec)],
                             None)
        assert (nov.tax, dec.tax) == (lines[0].this_month, lines[1].this_month), number
        assert D(dec.withholding["cumulative_income"]) == nov.gross + dec.gross
        assert D(dec.withholding["tax_withheld_before"]) == nov.tax


def test_a_second_start_of_the_same_month_is_a_409_naming_the_first(group):
    first, _ = start(group, 11)
    with pytest.raises(Conflict) as refused:
        months.month_start(membership=membership("bob"), group_id=group.id, year=2026, month=11)
    assert refused.value.code == "month_exists" and refused.value.extra["id"] == str(first.id)
    assert PayrollMonth.objects.filter(group=group).count() == 1


def test_reopening_november_voids_its_files_and_december_must_compute_again(group):
    november, _ = closed_november(group)
    december, run = start(group, 12)
    node_input_answer(membership=membership("alice"), run_id=run.id, answer="compute without inputs")
    drive(run)
    with pytest.raises(Exception):
        months.month_reopen(membership=membership("alice"), month_id=november.id, reason="wrong sales")  # not admin
    reopen = drive(months.month_reopen(membership=membership("ada"), month_id=november.id, reason="wrong sales"))
    assert reopen.status == "awaiting_approval"
    card = rendered(cards.card_rows(ApprovalRequest.objects.get(run=reopen, status="pending")))
    assert "wrong sales" in card and "2026-12 must compute again before it can close" in card
    assert approve(reopen).status == "completed"
    november.refresh_from_db()
    december.refresh_from_db()
    assert november.status == MonthStatus.REOPENED
    assert not MonthFile.objects.filter(month=november, status=FileStatus.CURRENT).exists()
    assert MonthFile.objects.filter(month=november, status=FileStatus.VOID).count() == 3
    assert set(Payslip.objects.filter(month=november).values_list("status", flat=True)) == {PayslipStatus.DRAFT}
    assert december.stale
    with pytest.raises(Conflict) as refused:
        months.month_close(month_id=december.id)
    assert refused.value.code == "month_stale"
    # November closes again through a run of its own (a reopened month may start again).
    month_inputs(group, 2026, 11, {**NOVEMBER, "E-002": {**NOVEMBER["E-002"], "sales_amount": "22345.67"}},
                 version=2)
    again = months.month_start(membership=membership("alice"), group_id=group.id, year=2026, month=11)
    assert again.month.id == november.id
    assert approve(drive(again.run)).status == "completed"
    # The December run's approval is stale: deciding it replans, December computes again on
    # November as it now stands, and a new approval is asked.
    with pytest.raises(Conflict):
        approve(run)
    run = drive(run)
    december.refresh_from_db()
    assert run.status == "awaiting_approval" and not december.stale
    assert approve(run).status == "completed"
    e2 = Payslip.objects.get(month=november, employee__employee_no="E-002", status=PayslipStatus.FINAL)
    assert D(Payslip.objects.get(month=december, employee__employee_no="E-002").withholding[
        "tax_withheld_before"]) == e2.tax


def test_a_close_retried_after_a_crash_leaves_one_set_of_payslips_and_one_pair_of_files(group):
    month_inputs(group, 2026, 11, NOVEMBER)
    month, _ = start(group, 11)
    # The worker dies after the files are written, before the month says closed: the
    # transaction never commits, so nothing of it is left.
    with mock.patch("payroll.records.months.close.month_transition", side_effect=SystemExit("killed")):
        with pytest.raises(SystemExit):
            months.month_close(month_id=month.id)
    assert not MonthFile.objects.filter(month=month).exists()
    assert PayrollMonth.objects.get(id=month.id).status == MonthStatus.AWAITING_APPROVAL
    months.month_close(month_id=month.id)
    months.month_close(month_id=month.id)  # the step retried after it committed: changes nothing
    assert Payslip.objects.filter(month=month).count() == 3
    assert MonthFile.objects.filter(month=month).count() == 3
    assert months.month_verify(month_id=month.id)["ok"]


def test_a_recompute_replaces_the_drafts_with_the_latest_inputs(group):
    month_inputs(group, 2026, 11, NOVEMBER)
    month, _ = start(group, 11)
    before = Payslip.objects.get(month=month, employee__employee_no="E-003").gross
    month_inputs(group, 2026, 11, {**NOVEMBER, "E-003": {**NOVEMBER["E-003"], "sales_amount": "10000"}}, version=2)
    months.month_compute(month_id=month.id)
    assert Payslip.objects.filter(month=month).count() == 3
    assert Payslip.objects.get(month=month, employee__employee_no="E-003").gross == before + D("300.00")
    assert PayrollMonth.objects.get(id=month.id).opening["inputs_version"] == 2


def test_verify_fails_saying_what_disagreed_when_a_file_was_changed(group):
    november, _ = closed_november(group)
    bank = MonthFile.objects.get(month=november, kind="bank_csv", status=FileStatus.CURRENT)
    MonthFile.objects.filter(id=bank.id).update(content=bytes(bank.content).replace(b"ICBC", b"ICBX"))
    result = months.month_verify(month_id=november.id)
    assert not result["ok"]
    assert [c["check"] for c in result["checks"] if not c["ok"]] == ["bank_csv checksum"]


def test_a_year_opening_is_where_the_withholding_continues_and_the_card_says_so(group):
    from payroll.models import Employee, YearOpening

    e1 = Employee.objects.get(tenant=group.tenant, employee_no="E-001")
    YearOpening.objects.create(tenant=group.tenant, employee=e1, year=2026, months_employed=10,
                               cumulative_income=D("250000"), cumulative_contributions=D("26000"),
                               cumulative_special_additional_deductions=D("20000"),
                               cumulative_tax_withheld=D("14000"), source="old-system.xlsx")
    month_inputs(group, 2026, 11, NOVEMBER)
    month, run = start(group, 11)
    card = rendered(cards.card_rows(ApprovalRequest.objects.get(run=run, status="pending")))
    assert "previous payroll system's year-to-date figures for 1 employees" in card
    assert "2 employees have no year-to-date figures" in card
    slip = Payslip.objects.get(month=month, employee=e1)
    w = slip.withholding
    line = ref.withhold([ref.Month(income=slip.gross, pension=D(w["pension"]), medical=D(w["medical"]),
                                   unemployment=D(w["unemployment"]), housing_fund=D(w["housing_fund"]))],
                        ref.Before(months=10, income=D("250000"), special=D("26000"), special_additional=D("20000"),
                                   withheld=D("14000")))[0]
    assert slip.tax == line.this_month
    assert D(w["cumulative_basic_deduction"]) == line.cumulative_basic == D("55000")
    assert D(w["cumulative_income"]) == line.cumulative_income == D("250000") + slip.gross


def test_a_rejected_month_ends_its_run_goes_back_to_open_and_can_be_run_again(group):
    month_inputs(group, 2026, 11, NOVEMBER)
    month, run = start(group, 11)
    assert PayrollMonth.objects.get(id=month.id).status == MonthStatus.AWAITING_APPROVAL
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(
        run=run, status="pending").id, verdict="rejected", comment="Li Lei's overtime is wrong")
    run = drive(run)
    # The run ends (not waiting for anyone), saying who rejected it and why.
    assert run.status == "blocked" and "Li Lei's overtime is wrong" in str(run.status_reason)
    assert statuses(run)["close"] == "blocked" and statuses(run)["verify"] != "completed"
    # The month is open again, says why, and keeps its payslips as drafts; no files.
    shown = api("alice").get(f"/api/v1/payroll/months/{month.id}/").json()
    assert shown["status"] == "open"
    assert shown["rejection"]["by"] == "bob" and "Li Lei's overtime is wrong" in shown["rejection"]["reason"]
    slips = Payslip.objects.filter(month=month)
    assert slips.exists() and set(slips.values_list("status", flat=True)) == {PayslipStatus.DRAFT}
    assert not MonthFile.objects.filter(month=month).exists()
    again = months.month_start(membership=membership("alice"), group_id=group.id, year=2026, month=11)
    assert again.month.id == month.id and again.run.id != run.id
    assert drive(again.run).status == "awaiting_approval"
    shown = api("alice").get(f"/api/v1/payroll/months/{month.id}/").json()
    assert shown["status"] == "awaiting_approval" and shown["rejection"] is None
    approve(again.run)
    assert PayrollMonth.objects.get(id=month.id).status == MonthStatus.CLOSED
