"""Read-only answers from the records, in the user's language (issue 11): what kind of
question a message asks (`analyze_kind`), and the answers about the conversation's own
runs and about a template's configuration. The orchestrator and the evaluation use the
same `analyze_kind`, so what is measured is what runs."""
from __future__ import annotations

import re
from decimal import Decimal

from django.contrib.auth import get_user_model

from approvals.models import ApprovalRequest, ApprovalStatus
from payroll.matching import template_decide
from payroll.models import PayrollGroup, PayrollTemplate
from payroll.requirements import requirements_extract, text_normalize
from tenants.models import Membership
from workflows.models import Run, RunStatus, StateCoordinate

RUN_EN = (r"\b(status|progress|approv\w*|approver|who (needs|has|must|should) to|is it (done|ready|finished)|done yet|"
          r"(is|was) the group (ready|created|done)|why (did|was|is|has) (it|the|my)|what happened|where are we|"
          r"(fail|failed|failure|rolled back|rollback|rejected|reject)\b|my (run|request|setup)|current status)")
RUN_ZH = ("进度", "状态", "审批", "批准", "失败", "回滚", "拒绝", "驳回", "完成了吗", "好了吗", "到哪", "谁来批", "谁批")
POLICY_EN = r"\b(travel|trip|lodging|hotel|accommodation|per diem|policy|policies|business trip)\b"
POLICY_ZH = ("差旅", "出差", "住宿", "酒店", "宾馆", "政策", "制度", "报销")
RATE_EN = r"\b(rate|rates|percent(age)?|how much|contribution|cap|ratio)\b|%"
RATE_ZH = ("比例", "费率", "多少", "上限", "缴纳", "比率")
# Configuration items a rate question can name: (words, item-code fragments).
ITEM_TOPICS = [
    (r"housing|provident fund(?! \w*cpf)|公积金(?!（)", ("housing",)),
    (r"\bcpf\b|中央公积金", ("cpf",)),
    (r"\bmpf\b|强积金", ("mpf",)),
    (r"pension|养老", ("pension",)),
    (r"medical|医疗", ("medical",)),
    (r"unemployment|失业", ("unemployment",)),
    (r"injury|工伤", ("injury",)),
    (r"commission|提成", ("commission", "accelerator")),
    (r"overtime|\bot\b|加班", ("ot_", "overtime")),
    (r"income tax|\biit\b|个税|所得税", ("iit", "income_tax")),
    (r"bonus|年终奖", ("bonus",)),
    (r"social security|社会保障", ("social_security",)),
    (r"medicare", ("medicare",)),
    (r"\bsdl\b|skills development", ("sdl",)),
]


def _rate_topic(lowered: str) -> tuple[str, ...] | None:
    for pattern, codes in ITEM_TOPICS:
        if re.search(pattern, lowered):
            return codes
    return None


def analyze_kind(text: str) -> str:
    """run, rate, templates, groups, employees or policy."""
    lowered = text_normalize(text)
    if re.search(POLICY_EN, lowered) or any(w in text for w in POLICY_ZH):
        return "policy"
    if _rate_topic(lowered) and (re.search(RATE_EN, lowered) or any(w in text for w in RATE_ZH)
                                 or "template" in lowered or "模板" in text or "look like" in lowered):
        return "rate"
    if re.search(RUN_EN, lowered) or any(w in text for w in RUN_ZH):
        return "run"
    if re.search(r"\btemplates?\b|\bcatalog", lowered) or "模板" in text:
        return "templates"
    if re.search(r"\b(employees?|staff|people|headcount|workers?)\b", lowered) or any(
            w in text for w in ("员工", "人数", "多少人")):
        return "employees"
    return "groups"


# --- Its own runs --------------------------------------------------------------------------

STATUS_WORDS = {
    RunStatus.RUNNING: ("is running", "正在进行"),
    RunStatus.AWAITING_APPROVAL: ("is waiting for an approver", "正在等待审批"),
    RunStatus.AWAITING_INPUT: ("is waiting for your answer", "正在等待您的回答"),
    RunStatus.COMPLETED: ("is complete", "已完成"),
    RunStatus.FAILED: ("failed", "失败了"),
    RunStatus.BLOCKED: ("is stopped", "已停止"),
    RunStatus.ROLLED_BACK: ("was rolled back", "已回滚"),
    RunStatus.STOPPED: ("was stopped", "已停止"),
}


def approvers_for(approval: ApprovalRequest) -> list[str]:
    """The people of the tenant who may decide this approval, by name."""
    roles = approval.allowed_roles or [approval.needs_role]
    users = get_user_model().objects.filter(membership__tenant_id=approval.tenant_id,
                                            membership__role__in=roles).order_by("username")
    return [u.get_full_name() or u.username for u in users]


def _join(names: list[str], zh: bool) -> str:
    if zh:
        return "、".join(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def group_of(run: Run) -> PayrollGroup | None:
    coordinate = StateCoordinate.objects.filter(run=run, key="group_id").order_by("-plan_version").first()
    if coordinate is None:
        return None
    return PayrollGroup.objects.filter(id=int(coordinate.value), tenant_id=run.tenant_id).first()


def run_answer(*, membership: Membership, conversation_id: int, zh: bool) -> tuple[str, int | None]:
    """Status, who it waits on, and why it ended, of this conversation's latest run."""
    run = (Run.objects.filter(conversation_id=conversation_id, tenant_id=membership.tenant_id)
           .order_by("-created_at").first())
    if run is None:
        return ("这个对话里还没有运行任何任务。" if zh else "Nothing has been started in this conversation yet."), None
    name = run.params.get("group_name") or run.blueprint
    en, cn = STATUS_WORDS.get(run.status, (run.status, run.status))
    parts = [f"“{name}”的设置{cn}。" if zh else f"The setup of “{name}” {en}."]
    pending = ApprovalRequest.objects.filter(run=run, status=ApprovalStatus.PENDING).first()
    if pending is not None:
        who = _join(approvers_for(pending), zh)
        parts.append(f"需要由{who}审批。" if zh else f"It needs an approval from {who}.")
    rejected = ApprovalRequest.objects.filter(run=run, status=ApprovalStatus.REJECTED).order_by("-decided_at").first()
    if run.status in (RunStatus.BLOCKED, RunStatus.FAILED, RunStatus.ROLLED_BACK, RunStatus.STOPPED):
        if rejected is not None:
            by = rejected.decided_by.get_full_name() or rejected.decided_by.username
            parts.append(f"{by}拒绝了导入" + (f"：“{rejected.comment}”" if rejected.comment else "") + "。" if zh else
                         f"{by} rejected the import" + (f": “{rejected.comment}”" if rejected.comment else "") + ".")
        elif run.status_reason:
            parts.append(("原因：" if zh else "Why: ") + run.status_reason + ("。" if zh else "."))
        parts.append("您可以在右侧的运行面板重试，或重新描述需求。" if zh else
                     "You can retry from the run panel, or describe the group again and I'll start over.")
    if run.status == RunStatus.COMPLETED:
        group = group_of(run)
        if group is not None:
            parts.append(f"薪资组“{group.name}”已创建。" if zh else f"The group “{group.name}” has been created.")
    if run.status == RunStatus.AWAITING_INPUT:
        node = run.nodes.filter(status="awaiting_input", retired_in__isnull=True).first()
        if node and node.question:
            parts.append(node.question.get("text", ""))
    return ("" if zh else " ").join(p for p in parts if p), run.id


# --- Configuration values ------------------------------------------------------------------

def _percent(rate: Decimal | None) -> str:
    if rate is None:
        return ""
    value = (Decimal(rate) * 100).normalize()
    return f"{value:f}%"


def rate_answer(text: str, *, zh: bool) -> str | None:
    """A configuration value quoted from the catalog: "the housing fund rate in the Shanghai template"."""
    lowered = text_normalize(text)
    codes = _rate_topic(lowered)
    if not codes:
        return None
    requirements = requirements_extract(text)
    if not requirements.get("region"):
        # "the sales template", "the Singapore template": read the region from the catalog's words.
        requirements = {**requirements, "region": None}
    templates = list(PayrollTemplate.objects.prefetch_related("items").order_by("code", "-version"))
    candidates = [t for t in templates if any(part in i.code for i in t.items.all() for part in codes)]
    if requirements.get("region"):
        decision = template_decide({**requirements, "items_named": []}, candidates)
        ranked = [f.template for f in decision.fits if "region" not in f.conflicts
                  and "legacy" not in f.template.code]
        ranked = ([decision.chosen] if decision.chosen in ranked else []) + [t for t in ranked if t != decision.chosen]
    else:
        words = set(re.findall(r"[a-z]+", lowered))
        ranked = sorted(candidates, key=lambda t: (-len(words & set(re.findall(r"[a-z]+", t.name.lower()))),
                                                   "legacy" in t.code, t.code))
    if not ranked:
        return None
    template = ranked[0]
    items = [i for i in template.items.all() if any(part in i.code for part in codes)]
    described = []
    for i in items:
        how = _percent(i.rate) + (f" × {i.base}" if i.rate is not None and i.base else "") if i.rate is not None \
            else (i.formula or "")
        described.append(f"{i.name_zh if zh else i.name}：{how}" if zh else f"{i.name}: {how}")
    name = template.name_zh if zh and template.name_zh else template.name
    return (f"模板“{name}”中，" + "；".join(described) + "。" if zh else
            f"In the template “{name}”, " + "; ".join(described) + ".")
