"""Who writes to a system of record (payroll, expenses, hr): a person with their
membership role, or the agent on a person's behalf under a decided approval. One
definition for every domain's services, pages, API and tools."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Actor:
    tenant_id: int
    user_id: int | None          # the person (or the user on whose behalf the agent runs)
    role: str | None             # the membership role of a person; None when the agent writes
    approval_id: int | None = None  # the agent: the decided approval that authorises this write
    run_id: int | None = None       # the agent: the run on whose behalf it writes (holder of its claims)

    @classmethod
    def of_member(cls, membership) -> Actor:
        """A person writing through a page or the API."""
        return cls(tenant_id=membership.tenant_id, user_id=membership.user_id, role=membership.role)

    @classmethod
    def of_agent(cls, ctx) -> Actor:
        """The agent writing from a tool call (a workflows ToolContext: tenant, user, approval, run)."""
        return cls(tenant_id=ctx.tenant_id, user_id=ctx.user_id, role=None, approval_id=ctx.approval_id,
                   run_id=ctx.run_id)
