"""Narrative context and memory (seed 000 §8).

- Anchor: the conversation task's original goal, in the user's words.
- Ledger: append-only material progress, in words ("the template has been matched"),
  derived from the run's recorded transitions — never an id or a template code.
- Collection: the few records the current step needs, projected for the prompt.
- Memory L1 is the current step (the Collection and the ReAct scratchpad, both
  transient); L2 is a traceable fact with its receipt (an approved ApprovalRequest,
  the ToolCall that used it); L3 is experience distilled across runs, each item
  keeping the id of its L2 evidence.

Memory is retrieved only at the reasoning, first-ReAct and planning boundaries,
always for one tenant. A remembered statement is context, never authority: "bob
approved" in memory grants nothing — the system of record asks ApprovalRequest rows.
"""
from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from .models import Anchor, LedgerEntry, MemoryItem, Message

# (node key, status reached) → the ledger's words. Business-safe, id-free.
MILESTONES: dict[tuple[str, str], str] = {
    ("interpret", "completed"): "the request has been understood",
    ("match", "awaiting_input"): "the template choice is waiting for the user's answer",
    ("match", "completed"): "the template has been matched",
    ("snapshot", "completed"): "a snapshot of the current payroll groups was taken",
    ("import", "awaiting_approval"): "the import is waiting for an approver",
    ("import", "completed"): "the template was imported into the new group",
    ("import", "failed"): "the import failed",
    ("import", "blocked"): "the import was refused or timed out",
    ("verify", "completed"): "the new group was verified",
    ("assign", "completed"): "the listed employees were assigned to the new group",
    ("restore", "completed"): "the configuration was restored to the snapshot",
}
RUN_MILESTONES = {"completed": "the setup is complete", "failed": "the setup failed",
                  "blocked": "the setup is blocked", "rolled_back": "the setup was rolled back",
                  "stopped": "the setup was stopped"}
POPULATION_WORDS = {"sales": "sales", "executive": "executives", "intern": "interns", "shift": "shift workers",
                    "engineering": "engineering", "salaried": "salaried staff", "hourly": "hourly staff"}
ITEM_WORDS = {"commission": "commission", "overtime": "overtime", "annual_bonus": "an annual bonus",
              "housing_fund": "a housing fund", "social_insurance": "social insurance", "cpf": "CPF",
              "mpf": "MPF", "performance_bonus": "a performance bonus", "allowance": "allowances", "tips": "tips",
              "bonus": "a bonus"}
REGION_WORDS = {"CN-SH": "Shanghai", "CN-BJ": "Beijing", "CN-SZ": "Shenzhen", "CN-GZ": "Guangzhou",
                "HK": "Hong Kong", "SG": "Singapore", "US": "the US"}


# --- Anchor and Ledger ---------------------------------------------------------------------

def anchor_set(*, conversation_id: int, goal: str) -> Anchor:
    """The first goal stays the anchor: later turns refine it, they do not replace it."""
    anchor, _ = Anchor.objects.get_or_create(conversation_id=conversation_id, defaults={"goal": goal[:2000]})
    return anchor


def ledger_append(*, conversation_id: int, milestone: str, text: str, run_id: int | None = None) -> None:
    try:
        with transaction.atomic():
            if not LedgerEntry.objects.filter(conversation_id=conversation_id, run_id=run_id,
                                              milestone=milestone).exists():
                LedgerEntry.objects.create(conversation_id=conversation_id, run_id=run_id, milestone=milestone,
                                           text=text[:300])
    except IntegrityError:
        pass  # appended by a concurrent turn: the ledger is append-only, once per milestone


def ledger_sync(*, conversation_id: int) -> None:
    """Append the material progress the conversation's runs have made since the last turn."""
    from workflows.models import Transition

    transitions = (Transition.objects.filter(run__conversation_id=conversation_id)
                   .select_related("node").order_by("at", "id"))
    for t in transitions:
        if t.node_id is None:
            text = RUN_MILESTONES.get(t.to_status)
            key = f"run:{t.to_status}"
        else:
            text = MILESTONES.get((t.node.key, t.to_status))
            key = f"{t.node.key}:{t.to_status}"
        if text:
            ledger_append(conversation_id=conversation_id, run_id=t.run_id, milestone=key, text=text)


def requirements_words(requirements: dict[str, Any]) -> str:
    """The requirements in words: what a prompt may say about them."""
    parts = []
    if requirements.get("population"):
        parts.append(POPULATION_WORDS.get(requirements["population"], requirements["population"]))
    if requirements.get("region"):
        parts.append("in " + REGION_WORDS.get(requirements["region"], requirements["region"]))
    if requirements.get("pay_frequency"):
        parts.append("paid " + requirements["pay_frequency"].replace("_", "-"))
    items = [ITEM_WORDS.get(i, i.replace("_", " ")) for i in requirements.get("items_named") or []]
    if items:
        parts.append("with " + " and ".join(items))
    return " ".join(parts) or "no details yet"


def narrative_context(*, conversation_id: int, collection: list[str] | None = None) -> str:
    """Anchor + Ledger + Collection as one system message. Never a business id."""
    anchor = Anchor.objects.filter(conversation_id=conversation_id).first()
    ledger = list(LedgerEntry.objects.filter(conversation_id=conversation_id).values_list("text", flat=True))
    lines = ["Context for this conversation (narrative only; exact values live in program state)."]
    lines.append(f"Goal: {anchor.goal}" if anchor else "Goal: none set yet.")
    lines.append("Progress so far: " + ("; ".join(ledger) + "." if ledger else "nothing has been done yet."))
    if collection:
        lines.append("Current step: " + "; ".join(collection) + ".")
    return "\n".join(lines)


def history_messages(*, conversation_id: int, limit: int = 6, exclude_id: int | None = None) -> list[dict]:
    """The last turns as chat messages (multi-turn context)."""
    rows = list(Message.objects.filter(conversation_id=conversation_id).exclude(id=exclude_id)
                .order_by("-created_at")[:limit])
    return [{"role": m.role, "content": m.text} for m in reversed(rows)]


# --- L2 and L3 ---------------------------------------------------------------------------------

def _request_signature(requirements: dict[str, Any]) -> dict[str, Any]:
    return {"region": requirements.get("region"), "pay_frequency": requirements.get("pay_frequency"),
            "population": requirements.get("population"),
            "items_named": sorted(requirements.get("items_named") or [])}


def _request_words(signature: dict[str, Any]) -> str:
    population = POPULATION_WORDS.get(signature.get("population") or "", "payroll")
    items = [ITEM_WORDS.get(i, i) for i in signature.get("items_named") or []]
    text = f"a {population} request" + (f" with {' and '.join(items)}" if items else "")
    where = [w for w in [REGION_WORDS.get(signature.get("region") or ""),
                         (signature.get("pay_frequency") or "").replace("_", "-")] if w]
    return text + (f" ({', '.join(where)})" if where else "")


def memory_distill(*, tenant_id: int) -> int:
    """Turn decided approvals into L2 facts (with their receipts) and L3 experience
    (keeping the L2 id). Idempotent; one tenant only. Returns the items added."""
    from agents.models import StateCoordinate, ToolCall
    from approvals.models import ApprovalRequest, ApprovalStatus
    from payroll.models import PayrollTemplate

    added = 0
    # Only an import that was approved AND went through is experience worth
    # repeating; one that failed and was rolled back teaches nothing to prefer.
    approvals = (ApprovalRequest.objects.filter(tenant_id=tenant_id, tool="import_template",
                                                status=ApprovalStatus.APPROVED, node__status="completed")
                 .exclude(id__in=MemoryItem.objects.filter(tenant_id=tenant_id, layer="L2",
                                                           kind="template_approved").values("approval_id"))
                 .select_related("decided_by"))
    for approval in approvals:
        requirements = (StateCoordinate.objects.filter(run_id=approval.run_id, key="requirements")
                        .order_by("-plan_version").values_list("value", flat=True).first()) or {}
        template = PayrollTemplate.objects.filter(id=int(approval.arguments.get("template_id", 0))).first()
        if template is None:
            continue
        signature = _request_signature(requirements)
        who = approval.decided_by.username if approval.decided_by else "an approver"
        call = ToolCall.objects.filter(node_id=approval.node_id, status="succeeded").first()
        try:
            with transaction.atomic():
                l2 = MemoryItem.objects.create(
                    tenant_id=tenant_id, layer="L2", kind="template_approved", approval=approval, tool_call=call,
                    text=f"The template “{template.name}” was approved by {who} for {_request_words(signature)}.",
                    signature=signature, data={"template_id": str(template.id), "approved_by": who})
                MemoryItem.objects.create(
                    tenant_id=tenant_id, layer="L3", kind="template_preference", evidence=l2, approval=approval,
                    text=f"For {_request_words(signature)}, the approved choice was “{template.name}”.",
                    signature=signature, data={"template_id": str(template.id)})
                added += 2
        except IntegrityError:
            continue  # distilled by a concurrent caller
    return added


def _similarity(a: dict[str, Any], b: dict[str, Any]) -> float:
    """How alike two requests are; 0 when they are about different people or places."""
    if not a.get("population") or a.get("population") != b.get("population"):
        return 0.0
    score = 1.0
    for key in ("region", "pay_frequency"):
        if a.get(key) and b.get(key):
            if a[key] != b[key]:
                return 0.0
            score += 1
    items_a, items_b = set(a.get("items_named") or []), set(b.get("items_named") or [])
    if items_a or items_b:
        overlap = len(items_a & items_b) / len(items_a | items_b)
        if overlap < 0.5:
            return 0.0
        score += overlap
    return score


def memory_recall(*, tenant_id: int, requirements: dict[str, Any], limit: int = 3) -> list[MemoryItem]:
    """L3 items for requests like this one, best first (newest breaks ties). One tenant."""
    memory_distill(tenant_id=tenant_id)
    signature = _request_signature(requirements)
    scored = [(_similarity(signature, item.signature), item.created_at, item)
              for item in MemoryItem.objects.filter(tenant_id=tenant_id, layer="L3").select_related("evidence")]
    scored = [s for s in scored if s[0] > 0]
    scored.sort(key=lambda s: (s[0], s[1]), reverse=True)
    return [item for _, _, item in scored[:limit]]


def memory_link(item: MemoryItem) -> dict[str, Any]:
    """The receipt chain a frame shows: L3 → L2 → approval / tool call."""
    evidence = item.evidence
    return {"l3": str(item.id), "l3_text": item.text,
            "l2": str(evidence.id) if evidence else None, "l2_text": evidence.text if evidence else None,
            "approval": str(evidence.approval_id) if evidence and evidence.approval_id else None,
            "tool_call": str(evidence.tool_call_id) if evidence and evidence.tool_call_id else None}
