"""Memory L2/L3 (DESIGN.md §2), for any tool that declares what it teaches.

L2 is a traceable fact with its receipt (an approved ApprovalRequest and the
ToolCall that used it); L3 is experience distilled across runs, each item keeping
the id of its L2 evidence. Which calls teach what is the tool's declaration
(`Tool.experience`); this module names no tool. A remembered statement is context,
never authority: "bob approved" in memory grants nothing — the system of record
asks ApprovalRequest rows."""
from __future__ import annotations

from typing import Any, Callable

from django.db import IntegrityError, transaction

from approvals.models import ApprovalRequest, ApprovalStatus
from config import sql
from workflows.models import ToolCall
from workflows.tools import TOOLS

from .models import MemoryItem, WorkingMemory

PREFERENCE = "preference"  # the L3 kind


def memory_distill(*, tenant_id: int) -> int:
    """Turn approved calls that went through into L2 facts (with their receipts) and L3
    experience (keeping the L2 id). Idempotent; one tenant only. Returns the items added."""
    teaching = [name for name, tool in TOOLS.items() if tool.experience is not None]
    if not teaching:
        return 0
    added = 0
    # Only a step that was approved AND went through is experience worth repeating;
    # one that failed and was rolled back teaches nothing to prefer.
    approvals = (ApprovalRequest.objects.filter(tenant_id=tenant_id, tool__in=teaching,
                                                status=ApprovalStatus.APPROVED, node__status="completed")
                 .exclude(id__in=MemoryItem.objects.filter(tenant_id=tenant_id, layer="L2").values("approval_id"))
                 .select_related("decided_by"))
    for approval in approvals:
        who = approval.decided_by.username if approval.decided_by else "an approver"
        experience = TOOLS[approval.tool].experience(tenant_id, approval.run_id, approval.arguments, who)
        if experience is None:
            continue
        call = ToolCall.objects.filter(node_id=approval.node_id, status="succeeded").first()
        try:
            with transaction.atomic():
                l2 = MemoryItem.objects.create(
                    tenant_id=tenant_id, layer="L2", kind=experience.kind, approval=approval, tool_call=call,
                    text=experience.fact, signature=experience.signature,
                    data={**experience.data, "approved_by": who})
                MemoryItem.objects.create(
                    tenant_id=tenant_id, layer="L3", kind=f"{experience.kind}:{PREFERENCE}", evidence=l2,
                    approval=approval, text=experience.preference, signature=experience.signature,
                    data=experience.data)
                added += 2
        except IntegrityError:
            continue  # distilled by a concurrent caller
    return added


def memory_learn(tenant_id: int) -> int:
    """The learner the engine calls after an approved step of a teaching tool completes."""
    return memory_distill(tenant_id=tenant_id)


def memory_recall(*, tenant_id: int, signature: dict[str, Any],
                  similarity: Callable[[dict[str, Any], dict[str, Any]], float], limit: int = 3) -> list[MemoryItem]:
    """L3 items for requests like this one (by the caller's similarity), best first,
    newest breaking ties. One tenant. Reads only: distilling happens when an approved step
    completes (memory_learn, on the worker)."""
    scored = [(similarity(signature, item.signature), item.created_at, item)
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


def working_memory_record(*, tenant_id: int, run_id: int, node_id: int, step: str, items: list[dict[str, Any]],
                          decision: str = "") -> WorkingMemory:
    """Write the L1 record of one step: its working set, each item {kind, text, evidence}."""
    # One INSERT … ON CONFLICT (node) DO UPDATE, no transaction around it: a step run again
    # replaces its record.
    record = WorkingMemory(node_id=node_id, tenant_id=tenant_id, run_id=run_id, step=step, items=items,
                           decision=decision[:2000])
    sql.rows_insert([record], unique=["node"], update=["step", "items", "decision", "updated_at"])
    return record
