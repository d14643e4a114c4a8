"""What a replay's sandbox needs of HR (workflows.sandbox; found by the replay's
autodiscovery of each app's `sandbox` module): for a candidate matching, the hiring request
as the run found it, and the CV bank."""
from __future__ import annotations

from typing import Any

from workflows.sandbox import SandboxCopy, sandbox_copier_register

from .services import tan_copy


def tan_sandbox_copy(copy: SandboxCopy, params: dict[str, Any]) -> dict[str, Any]:
    if params.get("tan_id"):
        params["tan_id"] = str(tan_copy(tan_id=int(params["tan_id"]), from_tenant_id=copy.from_tenant_id,
                                        to_tenant_id=copy.to_tenant_id, created_by_id=copy.creator_user_id).id)
        params.pop("event_id", None)  # the original tenant's event: nothing of the sandbox
    return params


sandbox_copier_register(tan_sandbox_copy)
