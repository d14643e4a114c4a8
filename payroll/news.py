"""What a payroll group setup run tells the chat (workflows.news): the import waits for an
approver, is rejected, rolls the configuration back, or creates the group (with a link).
Registered for blueprint payroll_group_setup in PayrollConfig.ready()."""
from __future__ import annotations

from django.urls import reverse
from django.utils.translation import gettext_noop

from config.words import Stored, words
from workflows.models import Run, StateCoordinate
from workflows.news import News, RunNews, either, rejected, rejected_next, then

from .models import PayrollGroup

BLUEPRINT = "payroll_group_setup"


def group_of(run: Run) -> PayrollGroup | None:
    """The group the run created (its latest plan's group_id coordinate), if it did."""
    coordinate = StateCoordinate.objects.filter(run=run, key="group_id").order_by("-plan_version").first()
    if coordinate is None:
        return None
    return PayrollGroup.objects.filter(id=int(coordinate.value), tenant_id=run.tenant_id).first()


def group_name(run: Run) -> str:
    return run.params.get("group_name") or run.blueprint.replace("_", " ")


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
        return News(words(gettext_noop("Done: %(what)s."),
                          what=words(gettext_noop("the payroll group “%(name)s” has been created"),
                                     name=group.name if group else name)), link=link)
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
