"""Read-only answers, in the user's language: which domain a question is
for (`question_claims`: each registered domain scores it by its own reading; a question about
the conversation's runs is the front's own) and the answer about the conversation's runs. The
orchestrator and the evaluation use the same `analyze_kind`, so what is measured is what runs."""
from __future__ import annotations

import re

from django.contrib.auth import get_user_model
from django.utils.translation import gettext_noop

from approvals.models import ApprovalRequest, ApprovalStatus
from config.words import Stored, localised, sentences, words
from tenants.models import Membership
from workflows.blueprints import BLUEPRINTS
from workflows.conversation import Claim, ConversationDomain, conversation_domains, domain_of_blueprint, text_normalize
from workflows.models import Run, RunStatus
from workflows.tools import question_words

RUN_EN = (r"\b(status|progress|approv\w*|approver|who (needs|has|must|should) to|is it (done|ready|finished)|done yet|"
          r"(is|was) the group (ready|created|done)|why (did|was|is|has) (it|the|my)|what happened|where are we|"
          r"(fail|failed|failure|rolled back|rollback|rejected|reject)\b|my (run|request|setup)|current status)")
RUN_ZH = ("进度", "状态", "审批", "批准", "失败", "回滚", "拒绝", "驳回", "完成了吗", "好了吗", "到哪", "谁来批", "谁批")
# A question about the runs is weighed against the domains' own claims (workflows.conversation.Claim).
RUN_SCORE = 0.5


def question_claims(text: str) -> tuple[ConversationDomain | None, Claim]:
    """The domain whose reading claims the question most surely, with its claim; (None, the
    front's claim) for a question about the conversation's runs, or one no domain claims."""
    bids: list[tuple[ConversationDomain | None, Claim]] = []
    lowered = text_normalize(text)
    if re.search(RUN_EN, lowered) or any(w in text for w in RUN_ZH):
        bids.append((None, Claim(RUN_SCORE, "a question about the conversation's runs", kind="run")))
    for domain in conversation_domains():
        claim = domain.question(text)
        if claim is not None and claim.score > 0:
            bids.append((domain, claim))
    if not bids:
        return None, Claim(0.0, "no domain claims the question", kind="run")
    return max(bids, key=lambda pair: pair[1].score)


def analyze_kind(text: str) -> str:
    """The kind of answer a read-only question gets (the winning claim's kind)."""
    return question_claims(text)[1].kind


# --- Its own runs --------------------------------------------------------------------------

# The answer is words (config.words), rendered in each reader's language.
STATUS_WORDS = {
    RunStatus.RUNNING: gettext_noop("%(run)s is running."),
    RunStatus.AWAITING_APPROVAL: gettext_noop("%(run)s is waiting for an approver."),
    RunStatus.AWAITING_INPUT: gettext_noop("%(run)s is waiting for your answer."),
    RunStatus.COMPLETED: gettext_noop("%(run)s is complete."),
    RunStatus.FAILED: gettext_noop("%(run)s failed."),
    RunStatus.BLOCKED: gettext_noop("%(run)s is stopped."),
    RunStatus.ROLLED_BACK: gettext_noop("%(run)s was rolled back."),
    RunStatus.STOPPED: gettext_noop("%(run)s was stopped."),
}


def approvers_for(approval: ApprovalRequest) -> list[str]:
    """The people of the tenant who may decide this approval, by name."""
    roles = approval.allowed_roles or [approval.needs_role]
    users = get_user_model().objects.filter(membership__tenant_id=approval.tenant_id,
                                            membership__role__in=roles).order_by("username")
    return [u.get_full_name() or u.username for u in users]


def _either(names: list[str]) -> Stored:
    """"a", "a or b", "a, b or c" (Chinese: 甲、乙、丙)."""
    if len(names) == 1:
        return names[0]
    return words(gettext_noop("%(names)s or %(last)s"), names=names[:-1], last=names[-1])


def _title(run: Run) -> Stored:
    """The run as the subject of a sentence: its domain's words, else its blueprint's title."""
    domain = domain_of_blueprint(run.blueprint)
    said = domain.run_title(run) if domain is not None else None
    if said:
        return said
    spec = BLUEPRINTS.get(run.blueprint) or {}
    title = spec.get("title") or run.blueprint
    return words(gettext_noop("The run “%(title)s”"), title=localised(title, spec.get("title_zh") or title))


def run_answer(*, membership: Membership, conversation_id: int) -> tuple[Stored, int | None]:
    """Status, who it waits on, and why it ended, of this conversation's latest run (words)."""
    run = (Run.objects.filter(conversation_id=conversation_id, tenant_id=membership.tenant_id)
           .order_by("-created_at").first())
    if run is None:
        return words(gettext_noop("Nothing has been started in this conversation yet.")), None
    status = STATUS_WORDS.get(run.status)
    parts: list[Stored] = [words(status, run=_title(run)) if status else
                           words(gettext_noop("%(run)s: %(status)s."), run=_title(run), status=run.status)]
    pending = ApprovalRequest.objects.filter(run=run, status=ApprovalStatus.PENDING).first()
    if pending is not None:
        parts.append(words(gettext_noop("It needs an approval from %(who)s."), who=_either(approvers_for(pending))))
    rejected = ApprovalRequest.objects.filter(run=run, status=ApprovalStatus.REJECTED).order_by("-decided_at").first()
    if run.status in (RunStatus.BLOCKED, RunStatus.FAILED, RunStatus.ROLLED_BACK, RunStatus.STOPPED):
        if rejected is not None:
            by = rejected.decided_by.get_full_name() or rejected.decided_by.username
            parts.append(words(gettext_noop("%(by)s rejected it: “%(comment)s”."), by=by, comment=rejected.comment)
                         if rejected.comment else words(gettext_noop("%(by)s rejected it."), by=by))
        elif run.status_reason:
            parts.append(words(gettext_noop("Why: %(reason)s."), reason=run.status_reason))
        parts.append(words(gettext_noop("You can retry from the run panel, or describe what you need again and "
                                        "I'll start over.")))
    if run.status == RunStatus.COMPLETED:
        domain = domain_of_blueprint(run.blueprint)
        made = domain.run_made(run) if domain is not None else None
        if made:
            parts.append(made)
    if run.status == RunStatus.AWAITING_INPUT:
        node = run.nodes.filter(status="awaiting_input", retired_in__isnull=True).first()
        if node and node.question:
            parts.append(question_words(node.question))
    return sentences(*parts), run.id
