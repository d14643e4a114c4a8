"""The status a person reads for a step of a run: the same in the API and on every page."""
from __future__ import annotations

NEVER_STARTED = {"pending", "ready", "blocked"}
ENDED_FOR_GOOD = {"completed", "rolled_back", "stopped"}


def step_status_shown(run_status: str, step_status: str | None) -> str | None:
    """The status a person reads for a step, given its run: a step that never started in a run
    someone cancelled reads "cancelled" (not "blocked"); one that will never run in a run over
    for good (an undo step waiting on a failure that did not happen) reads "skipped", not
    "pending". Display only: the step keeps its status, and a failed or blocked run's steps stay
    as they are (a retry may still run them)."""
    if step_status in NEVER_STARTED and run_status == "cancelled":
        return "cancelled"
    if step_status in NEVER_STARTED and run_status in ENDED_FOR_GOOD:
        return "skipped"
    return step_status
