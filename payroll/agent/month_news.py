"""What a payroll month's runs tell the conversation that started them (workflows.news): the
close waits for an approver (with the month's totals and how many employees are flagged),
the month closed (its net total, headcount and files), the close was rejected (the month is
open again), a closed month was reopened. Registered for the month's two blueprints in
PayrollConfig.ready(); the outbox delivers each once."""
from __future__ import annotations

from django.urls import reverse
from django.utils.translation import gettext_noop

from config.words import Stored, words
from workflows.cards import money_text
from workflows.news import News, RunNews, either, rejected, then

from payroll.models import FileStatus, MonthFile, PayrollMonth

BLUEPRINTS = ("payroll_month", "payroll_month_reopen")
FILE_NAMES = {"bank_csv": "bank-{y}-{m:02d}.csv", "bank_xlsx": "bank-{y}-{m:02d}.xlsx",
              "tax_xlsx": "iit-{y}-{m:02d}.xlsx"}  # the names the downloads carry (payroll.month_apis)


def month_of(item: RunNews) -> PayrollMonth | None:
    month_id = str(item.run.params.get("month_id") or "")
    if not month_id.isdigit():
        return None
    return PayrollMonth.objects.select_related("group").filter(id=int(month_id), tenant_id=item.run.tenant_id).first()


def file_names(month: PayrollMonth) -> str:
    kinds = MonthFile.objects.filter(month=month, status=FileStatus.CURRENT).values_list("kind", flat=True)
    return ", ".join(sorted(FILE_NAMES[k].format(y=month.year, m=month.month) for k in kinds if k in FILE_NAMES))


def month_news(item: RunNews) -> News | None:
    month = month_of(item)
    if month is None:
        return None
    what: Stored = words(gettext_noop("the payroll of “%(name)s” for %(period)s"), name=month.group.name,
                         period=f"{month.year}-{month.month:02d}")
    link = {"href": reverse("payroll-group", args=[month.group_id]), "label": month.group.name}
    reopen = item.run.blueprint == "payroll_month_reopen"
    totals = month.totals or {}
    if item.kind == "approval.requested" and reopen:
        return News(words(gettext_noop("Reopening %(what)s is waiting for %(who)s to approve it."), what=what,
                          who=either(item.approvers)), link=link)
    if item.kind == "approval.requested":
        diff = (item.approval.diff or {}) if item.approval is not None else {}
        anomalies = ((diff.get("month") or {}).get("anomalies")) or 0
        return News(words(gettext_noop("Closing %(what)s is waiting for %(who)s to approve it: %(n)s employees, "
                                       "gross %(gross)s, employer cost %(cost)s, tax %(tax)s, net %(net)s (CNY); "
                                       "%(anomalies)s flagged for a look."),
                          what=what, who=either(item.approvers), n=totals.get("headcount", 0),
                          gross=money_text(totals.get("gross", "0")), cost=money_text(totals.get("employer_cost", "0")),
                          tax=money_text(totals.get("tax", "0")), net=money_text(totals.get("net", "0")),
                          anomalies=anomalies), link=link)
    if item.kind == "approval.rejected":
        after = (words(gettext_noop("The month stays closed as it was."))
                 if reopen else words(gettext_noop("The month is open again with its payslips as drafts: fix its "
                                                   "inputs and start it again.")))
        return News(then(rejected(item, what), after), link=link)
    if item.kind == "run.completed" and reopen:
        return News(words(gettext_noop("Done: %(what)s is reopened; its files are void and its payslips drafts "
                                       "again. Compute and close it again when it is fixed."), what=what), link=link)
    if item.kind == "run.completed":
        return News(words(gettext_noop("Done: %(what)s is closed — net pay %(net)s CNY for %(n)s employees. "
                                       "Files: %(files)s."), what=what, net=money_text(totals.get("net", "0")),
                          n=totals.get("headcount", 0), files=file_names(month)), link=link)
    return None  # failures and stops: the generic words, with the engine's reason
