"""Who learns from an approved step that went through (a tool that declares what experience
it teaches): registered by the app that learns (memory, in its AppConfig.ready). The executor
calls them on the worker once the step has committed; a learner catches up on whatever it
missed before."""
from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger(__name__)

_LEARNERS: list[Callable[[int], object]] = []


def learner_register(learn: Callable[[int], object]) -> None:
    """`learn(tenant_id)` is called after an approved step of a teaching tool completes."""
    if learn not in _LEARNERS:
        _LEARNERS.append(learn)


def learners_call(tenant_id: int) -> None:
    for learn in _LEARNERS:
        try:
            learn(tenant_id)
        except Exception:  # the step is done and committed: failing to learn from it changes nothing
            log.exception("learning from a completed step failed (tenant %s)", tenant_id)
