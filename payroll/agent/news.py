"""What a payroll group setup run tells the chat (workflows.news): the import waits for an
approver, is rejected, rolls the configuration back, or creates the group (with a link).
Registered for blueprint payroll_group_setup in PayrollConfig.ready()."""
from __future__ import annotations

from django.urls import reverse
from django.utils.translation import gettext_noop

from config.words import Stored, ngettext_noop, words
from workflows.cards import money_text
from workflows.models import Run, StateCoordinate, ToolCall
from workflows.news import News, RunNews, either, rejected, rejected_next, then

from payroll.models import PayrollGroup

BLUEPRINT = "payroll_group_setup"


def group_of(run: Run) -> PayrollGroup | None:
    """The group the run created (its latest plan's group_id coordinate), if it did."""
    coordinate = StateCoordinate.objects.filter(run=run, key="group_id").order_by("-plan_version").first()
    if coordinate is None:
        return None
    return PayrollGroup.objects.filter(id=int(coordinate.value), tenant_id=run.tenant_id).first()


def group_name(run: Run) -> str:
    return run.params.get("group_name") or run.blueprint.replace("_", " ")


def trial_of_run(run: Run) -> dict | None:
    """The receipt of the run's trial (its latest successful trial_payroll call), if it has one."""
    call = (ToolCall.objects.filter(run=run, tool="trial_payroll", status=ToolCall.Status.SUCCEEDED)
            .order_by("-id").only("result").first())
    return call.result if call and isinstance(call.result, dict) else None


def trial_words(run: Run) -> Stored | None:
    """The trial's totals per month, as words; None when it computed nobody."""
    trial = trial_of_run(run)
    if not trial or not trial.get("employees") or not trial.get("totals"):
        return None
    months = [words(gettext_noop("month %(month)s: gross %(gross)s, employer cost %(cost)s, tax %(tax)s, "
                                 "net %(net)s"),
                    month=t["month"], gross=money_text(t["gross"]), cost=money_text(t["employer_cost"]),
                    tax=money_text(t["tax"]), net=money_text(t["net"])) for t in trial["totals"]]
    told = months[0]
    for month in months[1:]:
        told = words(gettext_noop("%(before)s; %(after)s"), before=told, after=month)
    said = words(ngettext_noop("Trial payroll for %(n)s employee in %(year)s (CNY) — %(months)s.",
                               "Trial payroll for %(n)s employees in %(year)s (CNY) — %(months)s."),
                 n=len(trial["employees"]), year=trial["year"], months=told)
    if trial.get("missing_inputs"):
        return then(said, words(gettext_noop("Not given, so computed as zero: %(inputs)s."),
                                inputs=", ".join(trial["missing_inputs"])))
    return said


def empty_words(run: Run) -> Stored | None:
    """The group has nobody yet: said, with how to add them."""
    trial = trial_of_run(run)
    if trial is None or trial.get("count") or trial.get("not_computed"):
        return None
    return words(gettext_noop("It has no employees yet — add them: attach an employee list (CSV or XLSX) in the "
                              "chat."))


def payroll_news(item: RunNews) -> News | None:
    name: Stored = group_name(item.run)
    if item.kind == "approval.requested":
        return News(words(gettext_noop("The import for “%(name)s” is waiting for %(who)s to approve it. I'll carry "
                                       "on once it is approved."), name=name, who=either(item.approvers)))
    if item.kind == "approval.rejected":
        what = words(gettext_noop("the import for “%(name)s”"), name=name)
        return News(then(rejected(item, what), rejected_next(item)))
    if item.kind == "run.completed":
        group = group_of(item.run)
        link = {"href": reverse("payroll-group", args=[group.id]), "label": group.name} if group else {}
        done = words(gettext_noop("Done: %(what)s."),
                     what=words(gettext_noop("the payroll group “%(name)s” has been created"),
                                name=group.name if group else name))
        told = trial_words(item.run)
        if told is not None:
            # The payslips are on the group's page (a link per employee and month).
            return News(then(done, told), link={**link, "label": words(
                gettext_noop("%(name)s: trial payslips"), name=group.name)} if link else link)
        empty = empty_words(item.run)
        return News(then(done, empty) if empty is not None else done, link=link)
    if item.kind == "run.rolled_back":
        return News(words(gettext_noop("The import for “%(name)s” failed, so I rolled the configuration back to the "
                                       "snapshot taken before it. Why: %(reason)s."), name=name, reason=item.reason))
    if item.kind == "run.failed":
        return News(words(gettext_noop("The setup of “%(name)s” failed: %(reason)s. You can retry it from the run "
                                       "panel, or tell me to use another template."), name=name, reason=item.reason))
    if item.kind in ("run.blocked", "run.stopped"):
        return News(words(gettext_noop("The setup of “%(name)s” stopped: %(reason)s."), name=name, reason=item.reason))
    if item.kind == "plan.replanned":
        return News(words(gettext_noop("I changed the plan for “%(name)s” (version %(version)s): %(reason)s."),
                          name=name, version=item.data.get("plan_version"), reason=item.reason))
    return None
