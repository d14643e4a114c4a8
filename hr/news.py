"""What a candidate matching run tells its conversation (workflows.news): the run is started
by a TAN's approval, not by a chat message, but its conversation (opened for it by the
supervisor) is told what it did: more matches than usual wait for an approver, or the
matches were recorded, with a link to the TAN. Failures keep the generic words.
Registered for blueprint candidate_matching in HrConfig.ready()."""
from __future__ import annotations

from django.urls import reverse
from django.utils.translation import gettext_noop

from config.words import localised, ngettext_noop, words
from workflows.models import Run
from workflows.news import News, RunNews, either

from .models import Match, Tan
from .services import match_approval_threshold

BLUEPRINT = "candidate_matching"


def _tan(run: Run) -> Tan | None:
    tan_id = run.params.get("tan_id")
    return Tan.objects.filter(id=int(tan_id), tenant_id=run.tenant_id).first() if tan_id else None


def _matches_asked(item: RunNews) -> int:
    """How many matches the approval would record: its own arguments, as the approver sees them."""
    arguments = (item.approval.arguments or {}) if item.approval is not None else {}
    return len((arguments.get("match_result") or {}).get("matches") or [])


def matching_news(item: RunNews) -> News | None:
    tan = _tan(item.run)
    if tan is None:
        return None
    title = localised(tan.title, tan.title_zh or None)
    link = {"href": reverse("hr-tan", args=[tan.id]), "label": words(gettext_noop("Open the TAN"))}
    if item.kind == "approval.requested":
        return News(words(gettext_noop("%(n)s matches for the TAN “%(title)s” — more than %(threshold)s at once — "
                                       "are waiting for %(who)s to approve them."),
                          n=_matches_asked(item), title=title, threshold=match_approval_threshold(),
                          who=either(item.approvers)), link=link)
    if item.kind == "run.completed":
        recorded = Match.objects.filter(tan=tan, run_id=item.run.id).count()
        return News(words(gettext_noop("Done: %(what)s."),
                          what=words(ngettext_noop("%(n)s match for the TAN “%(title)s” was recorded",
                                                   "%(n)s matches for the TAN “%(title)s” were recorded"),
                                     n=recorded, title=title)), link=link)
    return None
