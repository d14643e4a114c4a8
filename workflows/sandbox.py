"""What a replay's sandbox tenant needs of each domain (CONVENTIONS 11).

A replay (agents.replay) re-runs a recorded run in a new sandbox tenant holding a copy of
the records the run touched. Which records those are is each domain's knowledge, so each
registers, from its AppConfig.ready():

- a copier (`sandbox_copier_register`): given the run, its initial params and the two
  tenants, copy what of the domain the run reads and return the params with the ids mapped
  to the copies (return them unchanged when the run touched nothing of the domain);
- a cleaner (`sandbox_cleaner_register`): called before the sandbox tenant is deleted, to
  undo rows that would protect others from the cascade (e.g. a version pointing at the one
  it replaces);
- a rebuilder of an attachment (`sandbox_attachment_register`): the file a turn carried is
  not kept; the domain rebuilds it from what the run took from it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SandboxCopy:
    run: Any  # workflows.models.Run, the recorded one
    from_tenant_id: int
    to_tenant_id: int
    creator_user_id: int  # the sandbox's stand-in for the run's starter


Copier = Callable[[SandboxCopy, dict[str, Any]], dict[str, Any]]
_copiers: list[Copier] = []
_cleaners: list[Callable[[Any], None]] = []
_attachments: list[Callable[[Any, str, dict[str, Any], dict[str, Any]], tuple[str, bytes] | None]] = []


def sandbox_copier_register(copier: Copier) -> None:
    if copier not in _copiers:
        _copiers.append(copier)


def sandbox_cleaner_register(cleaner: Callable[[Any], None]) -> None:
    if cleaner not in _cleaners:
        _cleaners.append(cleaner)


def sandbox_attachment_register(rebuild) -> None:
    """rebuild(run, attachment_name, initial_params, sandbox_params) → (filename, bytes) or None."""
    if rebuild not in _attachments:
        _attachments.append(rebuild)


def sandbox_copy(copy: SandboxCopy, params: dict[str, Any]) -> dict[str, Any]:
    for copier in _copiers:
        params = copier(copy, params)
    return params


def sandbox_clean(tenant: Any) -> None:
    for cleaner in _cleaners:
        cleaner(tenant)


def sandbox_attachment(run: Any, attachment_name: str, initial: dict[str, Any],
                       params: dict[str, Any]) -> tuple[str, bytes] | None:
    for rebuild in _attachments:
        found = rebuild(run, attachment_name, initial, params)
        if found is not None:
            return found
    return None
