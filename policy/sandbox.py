"""What a replay's sandbox needs of the policy (workflows.sandbox; found by the replay's
autodiscovery of each app's `sandbox` module): the tenant's policies when a step of the run
reads them, and, before the sandbox is deleted, the versions unlinked from the ones they
replace (a version protects the one it replaces from the cascade)."""
from __future__ import annotations

from typing import Any

from workflows.models import Node
from workflows.sandbox import SandboxCopy, sandbox_cleaner_register, sandbox_copier_register

from .models import PolicyVersion
from .services import policy_corpus_copy

TOOLS_READING_POLICY = {"check_claim_policy"}


def policy_copy(copy: SandboxCopy, params: dict[str, Any]) -> dict[str, Any]:
    if TOOLS_READING_POLICY & set(Node.objects.filter(run=copy.run).values_list("tool", flat=True)):
        policy_corpus_copy(from_tenant_id=copy.from_tenant_id, to_tenant_id=copy.to_tenant_id)
    return params


def policy_unlink(tenant) -> None:
    PolicyVersion.objects.filter(document__tenant=tenant).update(replaces=None)


sandbox_copier_register(policy_copy)
sandbox_cleaner_register(policy_unlink)
