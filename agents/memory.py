"""Narrative context and memory (Anchor / Ledger / Collection, DESIGN.md §2).

- Anchor: the conversation task's original goal, in the user's words.
- Ledger: append-only material progress, in words ("the template has been matched"),
  derived from the run's recorded transitions — never an id or a template code.
- Collection: the few records the current step needs, projected for the prompt.
- Memory L1 is the current step (the Collection and the ReAct scratchpad, both
  transient); L2 and L3 live in the memory app (memory/services.py).
"""
from __future__ import annotations

from django.db import IntegrityError, transaction

from config import sql
from workflows.models import Transition
from workflows.tools import TOOLS

from .models import Anchor, LedgerEntry, Message

# Run status reached → the ledger's words. A node's words come from its tool's
# declaration (`Tool.milestones`): memory names no tool and no node.
RUN_MILESTONES = {"completed": "the setup is complete", "failed": "the setup failed",
                  "blocked": "the setup is blocked", "rolled_back": "the setup was rolled back",
                  "stopped": "the setup was stopped", "cancelled": "the setup was cancelled"}


# --- Anchor and Ledger ---------------------------------------------------------------------

def anchor_set(*, conversation_id: int, goal: str) -> None:
    """The first goal stays the anchor: later turns refine it, they do not replace it (one
    INSERT that keeps an anchor already there: a statement of its own, no BEGIN/COMMIT
    around it as bulk_create would have)."""
    sql.rows_insert([Anchor(conversation_id=conversation_id, goal=goal[:2000])], unique=["conversation"])


def ledger_append(*, conversation_id: int, milestone: str, text: str, run_id: int | None = None) -> None:
    if run_id is not None:
        _ledger_insert([LedgerEntry(conversation_id=conversation_id, run_id=run_id, milestone=milestone,
                                    text=text[:300])])
        return
    try:  # without a run the unique constraint does not hold (NULLs differ): look first
        with transaction.atomic():
            if not LedgerEntry.objects.filter(conversation_id=conversation_id, run_id=None,
                                              milestone=milestone).exists():
                LedgerEntry.objects.create(conversation_id=conversation_id, milestone=milestone, text=text[:300])
    except IntegrityError:
        pass  # appended by a concurrent turn: the ledger is append-only, once per milestone


def _ledger_insert(entries: list[LedgerEntry]) -> None:
    """One INSERT for all: a milestone already there (this turn's or a concurrent one's) is
    skipped by the unique constraint, so the ledger stays once per milestone."""
    if entries:
        LedgerEntry.objects.bulk_create(entries, ignore_conflicts=True)


def ledger_sync(*, conversation_id: int) -> None:
    """Append the material progress the conversation's runs have made since the last turn."""
    # Only statuses that have words: the many pending → ready → in progress steps have none.
    material = set(RUN_MILESTONES) | {status for tool in TOOLS.values() for status in tool.milestones}
    transitions = (Transition.objects.filter(run__conversation_id=conversation_id, to_status__in=material)
                   .select_related("node").order_by("at", "id"))
    entries: dict[tuple[int, str], LedgerEntry] = {}
    for t in transitions:
        if t.node_id is None:
            text = RUN_MILESTONES.get(t.to_status)
            key = f"run:{t.to_status}"
        else:
            tool = TOOLS.get(t.node.tool)
            text = tool.milestones.get(t.to_status) if tool else None
            key = f"{t.node.key}:{t.to_status}"
        if text and (t.run_id, key) not in entries:
            entries[(t.run_id, key)] = LedgerEntry(conversation_id=conversation_id, run_id=t.run_id, milestone=key,
                                                   text=text[:300])
    _ledger_insert(list(entries.values()))


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
