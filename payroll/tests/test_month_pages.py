"""The payroll month as people see it: "Run a month" on the group page, the month page (status,
totals, payslips, files with checksums, an admin's reopen), the downloads, and a payslip of
the month (items with formulas and inputs, masked numbers, Chinese)."""
import re
from decimal import Decimal as D

import pytest
from django.urls import reverse

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from payroll.models import FileStatus, MonthFile, MonthStatus, Payslip, PayrollMonth
from payroll.records.month_files import bank_file_totals, tax_declaration_totals
from payroll.tests.test_month import NOVEMBER
from tests.helpers import drive, membership, no_broker
from tests.payroll import month_group, month_inputs, page
from workflows.models import Run

pytestmark = pytest.mark.django_db


@pytest.fixture
def group(demo):
    return month_group()


def _start_on_page(client, group, year=2026, month=11):
    with no_broker():
        return client.post(reverse("payroll-month-start", args=[group.id]), {"year": year, "month": month})


def _closed(group) -> PayrollMonth:
    month_inputs(group, 2026, 11, NOVEMBER)
    response = _start_on_page(page("alice"), group)
    month = PayrollMonth.objects.get(group=group, year=2026, month=11)
    assert response.status_code == 302 and response["Location"] == reverse("payroll-month", args=[month.id])
    with no_broker():
        run = drive(month.run)
        assert run.status == "awaiting_approval"
        approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(
            run=run, status="pending").id, verdict="approved")
        assert drive(run).status == "completed"
    month.refresh_from_db()
    return month


def _text(html: bytes) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html.decode()))


def test_it_runs_a_month_from_the_group_page_and_lists_it(group):
    client = page("alice")
    shown = client.get(reverse("payroll-group", args=[group.id]))
    assert b'data-testid="month-start"' in shown.content and b'data-testid="group-no-months"' in shown.content
    response = _start_on_page(client, group)
    month = PayrollMonth.objects.get(group=group, year=2026, month=11)
    assert response["Location"] == reverse("payroll-month", args=[month.id])
    assert month.run.blueprint == "payroll_month"
    listed = client.get(reverse("payroll-group", args=[group.id])).content.decode()
    assert 'data-period="2026-11"' in listed and reverse("payroll-month", args=[month.id]) in listed


def test_a_second_run_of_the_same_month_opens_the_first_and_starts_nothing(group):
    client = page("alice")
    _start_on_page(client, group)
    runs = Run.objects.count()
    bob = page("bob")
    again = _start_on_page(bob, group)
    first = PayrollMonth.objects.get(group=group)
    assert again["Location"] == reverse("payroll-month", args=[first.id])
    assert Run.objects.count() == runs and PayrollMonth.objects.filter(group=group).count() == 1
    assert "exists already" in _text(bob.get(again["Location"]).content)


def test_a_period_out_of_range_is_refused_on_the_group_page_and_starts_nothing(group):
    alice = page("alice")
    response = _start_on_page(alice, group, month=13)
    assert response["Location"] == reverse("payroll-group", args=[group.id])
    assert not PayrollMonth.objects.filter(group=group).exists()
    assert "month must be a whole number from 1 to 12" in _text(alice.get(response["Location"]).content)


def test_the_month_page_shows_totals_payslips_and_files_that_add_up(group):
    month = _closed(group)
    body = page("alice").get(reverse("payroll-month", args=[month.id]))
    assert body.status_code == 200
    html = body.content.decode()
    slips = list(Payslip.objects.filter(month=month))
    assert 'data-status="closed"' in html and html.count('data-testid="month-payslip"') == 3
    net = sum(s.net for s in slips)
    assert f'{net:,.2f}' in html  # the totals and the payslips' total row
    files = {f.kind: f for f in MonthFile.objects.filter(month=month, status=FileStatus.CURRENT)}
    for f in files.values():
        assert f.sha256 in html
    bank = page("alice").get(reverse("payroll-month-file", args=[month.id, "bank_csv"]))
    assert bank.status_code == 200 and bank["X-Checksum-SHA256"] == files["bank_csv"].sha256
    assert bank_file_totals(bank.content, fmt="csv").total == net
    tax = page("alice").get(reverse("payroll-month-file", args=[month.id, "tax_xlsx"]))
    assert tax_declaration_totals(tax.content).tax == sum(s.tax for s in slips)
    assert b'data-testid="month-reopen"' not in body.content  # alice is no admin


def test_a_month_with_no_close_has_no_files_to_download(group):
    _start_on_page(page("alice"), group)
    month = PayrollMonth.objects.get(group=group)
    assert page("alice").get(reverse("payroll-month-file", args=[month.id, "bank_csv"])).status_code == 404
    html = page("alice").get(reverse("payroll-month", args=[month.id])).content
    assert b'data-testid="month-no-files"' in html and b'data-testid="month-live"' in html


def test_another_tenant_sees_no_month_payslip_or_file(group):
    month = _closed(group)
    slip = Payslip.objects.filter(month=month).first()
    oscar = page("oscar")
    for url in (reverse("payroll-month", args=[month.id]), reverse("payroll-month-live", args=[month.id]),
                reverse("payroll-month-payslip", args=[month.id, slip.employee_id]),
                reverse("payroll-month-file", args=[month.id, "bank_csv"])):
        assert oscar.get(url).status_code == 404, url


def test_the_payslip_shows_items_with_formulas_and_inputs_and_masks_numbers(group):
    month = _closed(group)
    slip = Payslip.objects.get(month=month, employee__employee_no="E-001")
    url = reverse("payroll-month-payslip", args=[month.id, slip.employee_id])
    html = page("alice").get(url).content.decode()
    assert "overtime_workday_hours * hourly_wage * overtime_workday_rate" in html
    ot = next(i for i in slip.items if i["code"] == "ot_holiday")
    assert 'data-item="ot_holiday"' in html and f'{D(ot["amount"]):,.2f}' in html
    assert 'data-input="sales_amount"' in html and "100000" in html
    assert "•••• 0001" in html and "6222 0000 0000 0001" not in html and "310101199001010001" not in html
    assert 'href="/static/keel/month.css"' in html  # the print sheet
    admin = page("ada").get(url).content.decode()
    assert "6222 0000 0000 0001" in admin and "310101199001010001" in admin


def test_the_payslip_reads_in_chinese(group):
    month = _closed(group)
    slip = Payslip.objects.get(month=month, employee__employee_no="E-001")
    zh_name = next(i["name_zh"] for i in slip.items if i["code"] == "ot_holiday")
    client = page("alice")
    html = client.get(reverse("payroll-month-payslip", args=[month.id, slip.employee_id]),
                      HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert zh_name and zh_name in html and "工资条" in html


def test_an_admin_asks_to_reopen_with_a_reason_and_nothing_changes_before_approval(group):
    month = _closed(group)
    ada = page("ada")
    assert b'data-testid="month-reopen"' in ada.get(reverse("payroll-month", args=[month.id])).content
    refused = ada.post(reverse("payroll-month-reopen", args=[month.id]), {"reason": "  "})
    assert refused["Location"] == reverse("payroll-month", args=[month.id])
    assert not Run.objects.filter(blueprint="payroll_month_reopen").exists()
    with no_broker():
        asked = ada.post(reverse("payroll-month-reopen", args=[month.id]), {"reason": "E-002's sales were wrong"})
    run = Run.objects.get(blueprint="payroll_month_reopen")
    assert asked["Location"] == f"/runs/{run.id}/"
    month.refresh_from_db()
    assert month.status == MonthStatus.CLOSED  # it waits for a second person
    alice = page("alice").post(reverse("payroll-month-reopen", args=[month.id]), {"reason": "x"})
    assert alice.status_code == 302 and Run.objects.filter(blueprint="payroll_month_reopen").count() == 1
    # The month page now listens where the month moves next: the reopen's conversation.
    shown = page("alice").get(reverse("payroll-month", args=[month.id])).content.decode()
    assert run.conversation_id != month.run.conversation_id
    assert f'data-conversation-id="{run.conversation_id}"' in shown


def test_the_approver_reads_the_numbers_only_while_the_month_awaits_their_decision(group):
    month_inputs(group, 2026, 11, NOVEMBER)
    _start_on_page(page("alice"), group)
    month = PayrollMonth.objects.get(group=group)
    with no_broker():
        run = drive(month.run)
    assert run.status == "awaiting_approval"
    slip = Payslip.objects.get(month=month, employee__employee_no="E-002")
    url = reverse("payroll-month-payslip", args=[month.id, slip.employee_id])
    assert "6222 0000 0000 0002" in page("bob").get(url).content.decode()  # deciding: the whole account
    assert "6222 0000 0000 0002" not in page("alice").get(url).content.decode()
    live = page("alice").get(reverse("payroll-month-live", args=[month.id])).content.decode()
    assert 'data-status="awaiting_approval"' in live and "<html" not in live  # the live part alone
    with no_broker():
        approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(
            run=run, status="pending").id, verdict="approved")
        drive(run)
    assert "6222 0000 0000 0002" not in page("bob").get(url).content.decode()  # decided: masked again


def test_the_approvers_queue_names_the_months_group_and_that_it_is_a_payroll_month(group):
    month_inputs(group, 2026, 11, NOVEMBER)
    _start_on_page(page("alice"), group)
    with no_broker():
        run = drive(PayrollMonth.objects.get(group=group).run)
    assert run.status == "awaiting_approval"
    for language, kind in (("en", "Payroll month"), ("zh-hans", "月度薪资")):
        client = page("bob")
        client.cookies["keel_language"] = language
        inbox = client.get(reverse("approvals-inbox")).content.decode()
        item = re.search(r'data-testid="queue-item".*?</li>', inbox, re.S)
        assert item is not None
        shown = _text(item.group(0).encode())
        assert group.name in shown and kind in shown, shown
